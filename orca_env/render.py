"""pygame rendering of an ``OrcaEnv`` frame (``human`` window or ``rgb_array`` frames).

pygame (``pygame-ce``) is imported inside :class:`Renderer` only, so importing this module, or
running an env with ``render_mode=None``, never starts pygame. ``rgb_array`` draws on an
off-screen surface and never opens a display. The ``human`` mode on Linux without a display
(neither ``DISPLAY`` nor ``WAYLAND_DISPLAY``) and without ``SDL_VIDEODRIVER`` draws off screen
(SDL's ``offscreen`` driver, what SDL falls back to anyway, but without its
``XDG_RUNTIME_DIR is invalid`` error line), so Gymnasium's ``check_env``, which makes the env
in every render mode, runs quietly on a server. pygame-ce, imageio and imageio-ffmpeg come with
the video extra, ``pip install "orca-env[video]"``; without them :class:`Renderer` and
:class:`VideoWriter` raise an ``ImportError`` that says so (:func:`require_pygame`,
:func:`require_imageio`).

A frame is the scene below a band (the HUD) that holds the title, the step and time, the agent
counts by status and a legend of the colours and marks, so the HUD never covers the scene.
Its text is ``freesansbold.ttf``, the TrueType font pygame-ce ships, drawn through
``pygame.freetype`` without kerning (no system font needed; see :class:`_Font`).
Agents are discs filled by population (learned blue, ORCA crowd grey, non-reactive purple, linear
brown, social-force olive, replayed pedestrians pink) with a
ring by status (at goal green, collided red, stalled orange, timed out dark grey); agents that
finished (at goal, stalled or timed out) and left the simulation stay as faded discs where they
stopped; collided ones that left are red crosses. Arrows: velocity (black) and preferred
velocity (thin, red); crosses: goals; cyan diamonds and lines: guidance waypoints.

A frame is drawn from a plain dict (the *render data*), so the same code draws a live env
(``env.render_data()`` or :func:`orca_env.evaluation.snapshot`) and a replayed episode log:

==================  ==========================================================  ==========
key                 meaning                                                     required
==================  ==========================================================  ==========
positions           ``(n, 2)`` float, metres, world frame                       yes
radii               ``(n,)`` float, metres                                      yes
populations         ``(n,)`` int, :class:`~orca_env.codes.Population` codes     yes
active              ``(n,)`` bool: still in the simulation                      yes
obstacles           list of ``(k, 2)`` counter-clockwise polygons               no
boundary            ``(k, 2)`` outline of the walkable region or ``None``       no
extent              half-width (m) of a square holding the scene (fallback fit) no
time                simulated seconds                                           no
velocities          ``(n, 2)`` m/s (drawn as solid arrows)                      no
pref_velocities     ``(n, 2)`` m/s (drawn as thin arrows)                       no
goals               ``(n, 2)`` metres                                           no
targets             ``(n, 2)`` guidance waypoints (drawn where != goal)         no
statuses            ``(n,)`` int, :class:`~orca_env.codes.Status` codes          no
step                int, steps since reset                                      no
title               str, shown in the overlay                                   no
selected            int slot of the agent of the debug layer (-1: none)         no
orca_lines          ``(L, 4)`` ORCA lines of ``selected`` (point, direction)     no
max_speeds          ``(n,)`` m/s (scale of the debug inset)                     no
scan_agent          int slot whose sensors are drawn (:mod:`orca_env.sensors`)   no
scan_points         ``(B, 2)`` end of each LiDAR beam of ``scan_agent``, metres  no
scan_range          LiDAR range, metres (beams shorter than it hit something)   no
sensor_cone         ``(heading, half angle, range)`` of its neighbour sensor    no
==================  ==========================================================  ==========

The sensor layer (under the agents): the LiDAR beams of ``scan_agent`` as thin orange rays, a
dark orange dot where a beam hit something, and the edges of its neighbour sensor's cone (blue).

The debug layer is an inset in velocity space centred on the zero velocity of the selected
agent: its max-speed disc, each ORCA line with the forbidden (right) side shaded, the preferred
velocity (the LP's target) and the new velocity (the LP's answer). ``Simulator.orca_lines(i)``
returns the lines of the *last* step, which pair with the velocities after that step.
"""

from __future__ import annotations

import collections
import contextlib
import errno
import math
import os
import shutil
import signal
import struct
import subprocess
import sys
import threading
import warnings
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

import numpy as np

from .codes import STATUSES, Population, Status
from .files import NO_ROOM, WriteError, atomic_path, no_room_error, write_error

__all__ = ["Renderer", "VideoWriter", "write_video", "COLORS", "LABELS", "STYLE", "fit_view",
           "status_counts", "counted_statuses", "frame_size", "mix_colors", "TRAIL_LENGTH",
           "ARROW_SECONDS", "require_pygame", "require_imageio",
           "VIDEO_EXTRA", "MIN_SIZE", "MAX_SIZE"]

#: How to install what rendering, videos and plots need.
VIDEO_EXTRA = 'pip install "orca-env[video]"'
#: Bounds of a frame's long side, pixels.
MIN_SIZE, MAX_SIZE = 240, 8192


def require_pygame() -> Any:
    """Import and return pygame (pygame-ce), or raise an ImportError saying what to install.

    Raises:
        ImportError: If pygame cannot be imported.
    """
    # pygame prints a banner on import unless told not to; it would pollute stdout.
    os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
    try:
        import pygame  # noqa: PLC0415  (lazy: render_mode=None never imports pygame)
    except ImportError as exc:
        raise ImportError(f"rendering needs pygame-ce, which is not installed ({exc}): "
                          f"{VIDEO_EXTRA} (the package is pygame-ce, not pygame; it installs "
                          f"the module pygame)") from exc
    return pygame


def _no_display() -> bool:
    """Linux with no display to open and no SDL video driver chosen (a server, a CI job)."""
    return (sys.platform.startswith("linux") and not os.environ.get("SDL_VIDEODRIVER")
            and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")))


def require_imageio() -> Any:
    """Import and return ``imageio.v2``, or raise an ImportError saying what to install.

    imageio-ffmpeg (the mp4 encoder) is optional here: without it videos fall back to GIF.

    Raises:
        ImportError: If imageio cannot be imported.
    """
    try:
        import imageio.v2 as iio  # noqa: PLC0415
    except ImportError as exc:
        raise ImportError(f"writing videos needs imageio (and imageio-ffmpeg for mp4), which "
                          f"is not installed ({exc}): {VIDEO_EXTRA}") from exc
    return iio


#: RGB colours: populations (fill) and statuses (ring).
COLORS = {
    "background": (250, 250, 247),
    "boundary_fill": (255, 255, 255),
    "outside": (228, 228, 222),
    "obstacle": (110, 110, 118),
    "learned": (31, 119, 180),
    "orca": (160, 160, 160),
    "non_reactive": (148, 103, 189),
    "linear": (140, 86, 75),
    "social_force": (188, 189, 34),
    "replay": (227, 119, 194),
    "at_goal": (44, 160, 44),
    "collided": (214, 39, 40),
    "deadlocked": (255, 127, 14),
    "timed_out": (90, 90, 90),
    "velocity": (20, 20, 20),
    "pref_velocity": (214, 39, 40),
    "waypoint": (23, 190, 207),
    "text": (20, 20, 20),
    "selected": (255, 200, 0),
    "forbidden": (250, 200, 200),
    "inset": (255, 255, 255),
    "band": (244, 244, 240),
    "heading": (255, 255, 255),
    "scan": (255, 160, 60),
    "scan_hit": (200, 80, 0),
    "sensor_cone": (60, 60, 200),
}
#: Legend labels of populations and statuses.
LABELS = {"learned": "learned", "orca": "ORCA crowd", "non_reactive": "non-reactive",
          "linear": "linear crowd", "social_force": "social-force crowd",
          "replay": "replayed pedestrians",
          "at_goal": "at goal", "collided": "collided", "deadlocked": "stalled",
          "timed_out": "timed out"}
_POP_NAMES = tuple(p.name.lower() for p in Population)
#: Default trail length (steps) and velocity arrows' length (the displacement over so many
#: seconds), of the frames and the HTML viewer.
TRAIL_LENGTH, ARROW_SECONDS = 12, 1.0
#: How the marks are drawn, in agent radii and mixing fractions; the pygame frames and the HTML
#: viewer (:mod:`orca_env.evaluation.html_viewer`) both draw with these and :data:`COLORS`.
STYLE = {
    "ring": 0.35,  # width of the status ring (at least 2 px)
    "goal": 0.6,  # half-size of a goal's cross (at least 3 px)
    "nose": (0.9, 0.2, 0.45),  # heading triangle: tip and base ahead of the centre, half-width
    "fade_agent": 0.6,  # an agent that left, finished: its fill mixed towards the background
    "fade_ring": 0.35,  # ... and its status ring
    "fade_trail": 0.55,  # trails
    "few": 60,  # up to this many agents every goal and arrow is drawn; else the learned ones'
}
#: Statuses after which an agent that left the simulation is drawn faded where it stopped.
_FINISHED = (Status.AT_GOAL, Status.DEADLOCKED, Status.TIMED_OUT)


def frame_size(bounds: tuple[float, float, float, float], size: int,
               band: int = 0) -> tuple[int, int]:
    """``(width, height)`` in pixels for world ``bounds`` below a ``band`` pixels high.

    The scene is as large as fits in a ``size`` x ``size`` square with the band on top: the
    long side of the frame is ``size``. Both sides are multiples of 16 (what H.264 encoders
    want) and at least 240.
    """
    x0, y0, x1, y1 = bounds
    w, h = max(x1 - x0, 1e-9), max(y1 - y0, 1e-9)
    s = min(size / w, max(size - band, 1) / h)
    rnd = lambda v: max(240, int(round(v / 16.0)) * 16)  # noqa: E731
    return rnd(s * w), rnd(s * h + band)


def fit_view(data: Mapping[str, Any], margin: float = 0.05) -> tuple[float, float, float, float]:
    """World bounds ``(x0, y0, x1, y1)`` holding the boundary, obstacles, active agents and goals.

    Open scenes (no boundary, no obstacles) also hold the square ``[-extent, extent]^2``, since
    nothing keeps their agents inside the first frame's bounding box.
    """
    pts = []
    if data.get("boundary") is None and not data.get("obstacles") and "extent" in data:
        e = float(data["extent"])
        pts.append(np.array([[-e, -e], [e, e]]))
    if data.get("boundary") is not None:
        pts.append(np.asarray(data["boundary"], dtype=np.float64).reshape(-1, 2))
    for poly in data.get("obstacles") or []:
        pts.append(np.asarray(poly, dtype=np.float64).reshape(-1, 2))
    radii = np.asarray(data["radii"], dtype=np.float64)
    r = float(radii.max()) if radii.size else 0.0
    # Agents not in the simulation (yet: replayed pedestrians before their track starts) wait
    # wherever their scenario put them, which is no part of the scene; nor is a replayed
    # pedestrian's goal (its scenario slot's, not where its track goes).
    active, pops = data.get("active"), data.get("populations")
    for key in ("positions", "goals"):
        if data.get(key) is not None:
            p = np.asarray(data[key], dtype=np.float64).reshape(-1, 2)
            keep = np.ones(len(p), dtype=bool)
            if active is not None and len(active) == len(p):
                keep &= np.asarray(active, dtype=bool)
            if key == "goals" and pops is not None and len(pops) == len(p):
                keep &= np.asarray(pops) != Population.REPLAY
            p = p[keep]
            if p.size:
                pts.append(p - r)
                pts.append(p + r)
    if not pts:
        return -10.0, -10.0, 10.0, 10.0
    allp = np.concatenate(pts)
    allp = allp[np.isfinite(allp).all(axis=1)]
    x0, y0 = allp.min(axis=0)
    x1, y1 = allp.max(axis=0)
    pad = margin * max(x1 - x0, y1 - y0, 1e-6)
    return float(x0 - pad), float(y0 - pad), float(x1 + pad), float(y1 + pad)


class Renderer:
    """Draws render-data dicts with pygame, in a window or into ``(H, W, 3)`` uint8 frames.

    The frame is a band on top (title, step and time, counts by status, legend and scale bar)
    over the scene; see the module docstring for the colours and marks.

    Args:
        render_mode: ``"human"`` (a window, paced at ``fps``) or ``"rgb_array"`` (``draw``
            returns the frame).
        fps: Frames per second of the ``human`` window (the env's ``metadata["render_fps"]``).
        size: Pixels of the long side of the frame, an integer in 240 .. 8192; the short side
            follows the scene's aspect ratio. Larger: sharper but slower to draw and encode.
        trail_length: Past positions drawn as a trail behind each agent (0: no trails).
        arrow_seconds: Velocity arrows show the displacement over this many seconds.
        debug_agent: Slot whose ORCA half-planes are drawn in an inset (``None``: no inset);
            the frame's ``selected`` key overrides it.
        bounds: Fixed world bounds ``(x0, y0, x1, y1)``; ``None`` fits the first frame.

    Raises:
        ValueError: On a bad ``render_mode`` or ``size``.
        ImportError: If pygame (pygame-ce, the video extra) is not installed.
    """

    def __init__(self, render_mode: str = "rgb_array", fps: float = 4, *, size: int = 720,
                 trail_length: int = TRAIL_LENGTH, arrow_seconds: float = ARROW_SECONDS,
                 debug_agent: int | None = None,
                 bounds: tuple[float, float, float, float] | None = None) -> None:
        if render_mode not in ("human", "rgb_array"):
            raise ValueError(f"render_mode must be 'human' or 'rgb_array', got {render_mode!r}")
        if isinstance(size, bool) or not isinstance(size, (int, np.integer)) \
                or not MIN_SIZE <= size <= MAX_SIZE:
            raise ValueError(f"size must be an integer number of pixels in {MIN_SIZE} .. "
                             f"{MAX_SIZE}, got {size!r}")
        # Fail here, with what to install, rather than at the first frame.
        require_pygame()
        self.render_mode = render_mode
        self.fps = fps
        self.size = int(size)
        self.trail_length = int(trail_length)
        self.arrow_seconds = float(arrow_seconds)
        self.debug_agent = debug_agent
        self.bounds = bounds
        self._fixed_bounds = bounds is not None
        self._pg = None
        self._screen = None
        self._surface = None
        self._clock = None
        self._font = None
        self._trail: np.ndarray | None = None
        self._trail_len = 0
        self._last_time = None
        self._static = None
        self.closed = False

    # -- setup -----------------------------------------------------------------------------
    def _start(self, data: Mapping[str, Any]) -> None:
        pygame = require_pygame()
        self._pg = pygame
        self._font = _Font(pygame, max(11, self.size // 42))
        self._small = _Font(pygame, max(10, self.size // 52))
        if self.render_mode == "human":
            if _no_display():
                # SDL would try Wayland first, print an error line, then draw off screen.
                os.environ["SDL_VIDEODRIVER"] = "offscreen"
            pygame.display.init()
            pygame.display.set_caption("orca-env")
            self._clock = pygame.time.Clock()
        self._layout(data)

    def _layout(self, data: Mapping[str, Any]) -> None:
        """Fit the view to the scene (unless bounds were given), lay out the band, size the frame.

        The band's height depends on the frame's width (the legend wraps) and the width on the
        band's height (the scene fits below it): a few rounds settle both.
        """
        pygame = self._pg
        if self.bounds is None:
            self.bounds = fit_view(data)
        x0, y0, x1, y1 = self.bounds
        self._scale = min(self.size / max(x1 - x0, 1e-9), self.size / max(y1 - y0, 1e-9))
        band = 0
        for _ in range(4):
            self.width, self.height = frame_size(self.bounds, self.size, band)
            self._scale = min(self.width / (x1 - x0), (self.height - band) / (y1 - y0))
            rows, need = self._band_layout(data)
            if need <= band:
                break
            band = need
        self._band, self._rows = band, rows
        self._scale = min(self.width / (x1 - x0), (self.height - band) / (y1 - y0))
        # Centre the scene in the frame below the band.
        self._ox = 0.5 * (self.width - self._scale * (x1 - x0)) - self._scale * x0
        self._oy = band + 0.5 * (self.height - band - self._scale * (y1 - y0)) \
            + self._scale * y1
        if self.render_mode == "human":
            self._screen = pygame.display.set_mode((self.width, self.height))
        self._surface = pygame.Surface((self.width, self.height))
        self._static = None

    def _band_layout(self, data: Mapping[str, Any]) -> tuple[list, int]:
        """The band's items placed in rows for the current width, and the band's height.

        Returns:
            ``[(y, [(x, item), ...]), ...]`` and the height in pixels. An item is
            ``(kind, arg, text, width)``; the width of a count is measured at its largest value,
            so the layout does not change while the counts do.
        """
        pops = np.asarray(data["populations"], dtype=np.int64)
        learned = pops == Population.LEARNED
        n_l, n_c = int(learned.sum()), int((~learned).sum())
        big = "8" * max(1, len(str(max(n_l, n_c))))  # the widest digits
        # The title wraps at its wide gaps ("policy x   scenario y   seed z").
        head = [("title", None, part) for part in
                str(data.get("title") or "orca-env").split("   ") if part.strip()]
        head.append(("clock", None, f"step {big}888   t 8888.88 s"))
        tables = []
        if n_l:
            tables.append([("text", None, f"learned ({n_l}):")]
                          + [("count", ("learned", code), f"{name} {big}")
                             for code, name in counted_statuses(learned=True)])
        if n_c:
            tables.append([("text", None, f"crowd ({n_c}):")]
                          + [("count", ("crowd", code), f"{name} {big}")
                             for code, name in counted_statuses(learned=False)])
        legend: list[tuple] = []
        for code in sorted(set(pops.tolist())):
            name = _POP_NAMES[code]
            legend.append(("pop", name, LABELS[name]))
        for st in (Status.AT_GOAL, Status.COLLIDED, Status.DEADLOCKED, Status.TIMED_OUT):
            legend.append(("ring", STATUSES[st], LABELS[STATUSES[st]]))
        headings = data.get("headings")
        if headings is not None and np.isfinite(np.asarray(headings, dtype=np.float64)).any():
            legend.append(("nose", None, "heading"))
        legend.append(("faded", None, "left, finished"))
        legend.append(("left_hit", None, "left, collided"))
        legend.append(("arrow", "velocity", "velocity"))
        legend.append(("arrow", "pref_velocity", "preferred velocity"))
        legend.append(("goal", None, "goal"))
        targets, goals = data.get("targets"), data.get("goals")
        if targets is not None and goals is not None and \
                (np.abs(np.asarray(targets) - np.asarray(goals)).sum(axis=1) > 1e-9).any():
            legend.append(("waypoint", None, "waypoint"))
        legend.append(("scale", None, ""))

        pad, gap = 6, max(10, self.size // 50)
        rows: list = []
        y = pad

        def flow(group: list, font: Any) -> None:
            nonlocal y
            h = font.get_height()
            x, row = pad, []
            for kind, arg, text in group:
                w = self._item_width(kind, text, font, h)
                if row and x + w > self.width - pad:
                    rows.append((y, row))
                    y += h + 3
                    x, row = pad, []
                row.append((x, (kind, arg, text, w)))
                x += w + gap
            rows.append((y, row))
            y += h + 3

        flow(head, self._font)
        # The counts as a table (a column per status), when it fits; else they flow.
        small, h = self._small, self._small.get_height()
        width_of = {}
        for table in tables:
            for col, (kind, arg, text) in enumerate(table):
                key = "label" if col == 0 else int(arg[1])
                width_of[key] = max(width_of.get(key, 0), self._item_width(kind, text, small, h))
        order = ["label"] + [int(code) for code, _ in counted_statuses(learned=True)]
        xs, x = {}, pad
        for key in order:
            if key in width_of:
                xs[key] = x
                x += width_of[key] + gap
        if x - gap <= self.width - pad:
            for table in tables:
                rows.append((y, [(xs["label" if c == 0 else int(it[1][1])], (*it, 0))
                                 for c, it in enumerate(table)]))
                y += h + 3
        else:
            for table in tables:
                flow(table, small)
        y += 2
        without_legend = (list(rows), y)
        flow(legend, small)
        if y > 0.4 * self.size:
            # A small frame: the legend would crowd out the scene (the docs have it).
            rows, y = without_legend
        return rows, y + pad - 3

    def _item_width(self, kind: str, text: str, font: Any, h: int) -> int:
        sym = 0 if kind in ("title", "clock", "text", "count") else h + 4
        if kind == "scale":
            return self._scale_bar()[0] + 8 + self._small.size("100 m")[0]
        return sym + font.size(text)[0]

    def _scale_bar(self) -> tuple[int, float]:
        """A scale bar between 30 and 200 pixels: ``(pixels, metres)``."""
        bar = self._scale
        while bar < 30:
            bar *= 10
        while bar > 200:
            bar /= 10
        return int(round(bar)), bar / self._scale

    def new_episode(self) -> None:
        """Forget the previous episode: its static layer, trails and (unless fixed) the view.

        The env calls this from ``reset``, so a renderer reused across episodes never draws the
        previous scene's obstacles or joins two episodes' trails.
        """
        self._static = None
        self._trail = None
        self._last_time = None
        if not self._fixed_bounds:
            self.bounds = None
        self._needs_layout = self._pg is not None

    def _to_px(self, p: np.ndarray) -> np.ndarray:
        """World (..., 2) metres -> screen (..., 2) float pixels (y up in the world)."""
        p = np.asarray(p, dtype=np.float64)
        out = np.empty(p.shape)
        out[..., 0] = self._ox + self._scale * p[..., 0]
        out[..., 1] = self._oy - self._scale * p[..., 1]
        return out

    # -- drawing ---------------------------------------------------------------------------
    def draw(self, data: Mapping[str, Any]) -> np.ndarray | None:
        """Draw one frame.

        Args:
            data: A render-data dict (see the module docstring for the keys).

        Returns:
            ``(H, W, 3)`` uint8 in ``rgb_array`` mode, ``None`` in ``human`` mode.
        """
        if self.closed:
            raise RuntimeError("Renderer.draw() called after close()")
        if self._pg is None:
            self._start(data)
        elif getattr(self, "_needs_layout", False):
            self._layout(data)
        self._needs_layout = False
        pg = self._pg
        surf = self._surface
        pos = np.asarray(data["positions"], dtype=np.float64)
        n = pos.shape[0]
        active = np.asarray(data["active"], dtype=bool)
        self._update_trails(pos, active, data.get("time"))

        self._draw_static(surf, data)
        # Nothing of the scene spills into the band.
        surf.set_clip(pg.Rect(0, self._band, self.width, self.height - self._band))
        radii = np.asarray(data["radii"], dtype=np.float64)
        pops = np.asarray(data["populations"], dtype=np.int64)
        statuses = data.get("statuses")
        statuses = (np.zeros(n, dtype=np.int64) if statuses is None
                    else np.asarray(statuses, dtype=np.int64))
        px = self._to_px(pos)
        rpx = np.maximum(radii * self._scale, 1.5)
        few = n <= STYLE["few"]
        live = np.flatnonzero(active)

        # Agents that finished and left: faded where they stopped, under everything else.
        for i in np.flatnonzero(~active & np.isin(statuses, _FINISHED)):
            if np.isfinite(px[i]).all():
                self._faded_agent(surf, px[i], rpx[i], _POP_NAMES[pops[i]], STATUSES[statuses[i]])

        # Trails (oldest first), goals and waypoints under the agents.
        if self._trail is not None and self._trail_len > 1:
            tr = self._to_px(self._trail[-self._trail_len:])
            faded = [mix_colors(COLORS[p], COLORS["background"], STYLE["fade_trail"])
                     for p in _POP_NAMES]
            for i in live:
                pg.draw.lines(surf, faded[pops[i]], False, tr[:, i].tolist(), 1)
        goals = data.get("goals")
        if goals is not None:
            gpx = self._to_px(goals)
            for i in live:
                col = COLORS[_POP_NAMES[pops[i]]]
                # A replayed pedestrian's goal is its scenario slot's, not where its track goes.
                if pops[i] == Population.LEARNED or (few and pops[i] != Population.REPLAY):
                    _cross(pg, surf, col, gpx[i], max(3.0, STYLE["goal"] * rpx[i]))
        targets = data.get("targets")
        if targets is not None and goals is not None:
            t = np.asarray(targets, dtype=np.float64)
            guided = np.flatnonzero(active & (np.abs(t - np.asarray(goals)).sum(axis=1) > 1e-9))
            if guided.size:
                tpx = self._to_px(t)
                for i in guided:
                    if pops[i] == Population.LEARNED or few:
                        pg.draw.line(surf, COLORS["waypoint"], px[i], tpx[i], 1)
                    _diamond(pg, surf, COLORS["waypoint"], tpx[i], 4)

        self._draw_sensors(surf, data, pos, px, active)

        # Agents: fill = population, ring = status.
        sel = data.get("selected", self.debug_agent)
        sel = -1 if sel is None else int(sel)
        for i in live:
            fill = COLORS[_POP_NAMES[pops[i]]]
            st = int(statuses[i])
            pg.draw.circle(surf, fill, px[i], rpx[i])
            if st != Status.ACTIVE:
                ring = COLORS[STATUSES[st]]
                pg.draw.circle(surf, ring, px[i], rpx[i], max(2, int(rpx[i] * STYLE["ring"])))
            if i == sel:
                pg.draw.circle(surf, COLORS["selected"], px[i], rpx[i] + 3, 2)
        # Headings of non-holonomic agents: a white nose at the front of the disc (y is up).
        headings = data.get("headings")
        if headings is not None:
            hd = np.asarray(headings, dtype=np.float64)
            for i in live:
                if np.isfinite(hd[i]):
                    _nose(pg, surf, px[i], rpx[i], hd[i])
        # Collided agents that left the simulation stay visible as a red cross where they hit.
        for i in np.flatnonzero(~active & (statuses == Status.COLLIDED)):
            _cross(pg, surf, COLORS["collided"], px[i], max(4.0, rpx[i]))

        # Arrows: velocity (dark, solid) and preferred velocity (thin, red).
        k = self.arrow_seconds * self._scale
        for key, col, width in (("pref_velocities", COLORS["pref_velocity"], 1),
                                ("velocities", COLORS["velocity"], 2)):
            v = data.get(key)
            if v is None:
                continue
            v = np.asarray(v, dtype=np.float64)
            for i in live:
                if pops[i] != Population.LEARNED and not few:
                    continue
                d = v[i] * k
                if d[0] * d[0] + d[1] * d[1] < 4.0:
                    continue
                _arrow(pg, surf, col, px[i], px[i] + np.array([d[0], -d[1]]), width)

        if 0 <= sel < n and active[sel] and data.get("orca_lines") is not None:
            self._draw_debug(surf, data, sel)
        surf.set_clip(None)
        self._draw_band(surf, data, statuses, active, pops)

        if self.render_mode == "human":
            self._screen.blit(surf, (0, 0))
            pg.event.pump()
            for event in pg.event.get(pg.QUIT):
                if event.type == pg.QUIT:
                    self.close()
                    return None
            pg.display.flip()
            self._clock.tick(self.fps)
            return None
        # tobytes is row-major RGB already: several times faster than surfarray + transpose.
        raw = pg.image.tobytes(surf, "RGB")
        return np.frombuffer(raw, dtype=np.uint8).reshape(self.height, self.width, 3).copy()

    def _draw_sensors(self, surf: Any, data: Mapping[str, Any], pos: np.ndarray, px: np.ndarray,
                      active: np.ndarray) -> None:
        """The LiDAR rays and hits and the neighbour cone of ``scan_agent`` (if any)."""
        i = data.get("scan_agent")
        if i is None or not 0 <= int(i) < pos.shape[0] or not active[int(i)]:
            return
        pg, i = self._pg, int(i)
        cone = data.get("sensor_cone")
        if cone is not None:
            h, half, reach = (float(x) for x in cone)
            for a in (h - half, h + half):
                end = self._to_px(pos[i] + reach * np.array([math.cos(a), math.sin(a)]))
                pg.draw.line(surf, COLORS["sensor_cone"], px[i], end, 2)
        pts = data.get("scan_points")
        if pts is None:
            return
        pts = np.asarray(pts, dtype=np.float64)
        reach = float(data.get("scan_range", np.inf))
        dist = np.hypot(*(pts - pos[i]).T)
        ppx = self._to_px(pts)
        for p in ppx:
            pg.draw.line(surf, COLORS["scan"], px[i], p, 1)
        for p, d in zip(ppx, dist, strict=True):
            if d < reach * (1.0 - 1e-9):  # a beam that reads its full range hit nothing
                pg.draw.circle(surf, COLORS["scan_hit"], p, 2.5)

    def _faded_agent(self, surf: Any, p: Any, r: float, pop: str, status: str | None) -> None:
        """An agent that left the simulation: a faded disc (and a faded status ring)."""
        pg = self._pg
        bg = COLORS["background"]
        pg.draw.circle(surf, mix_colors(COLORS[pop], bg, STYLE["fade_agent"]), p, r)
        if status is not None:
            pg.draw.circle(surf, mix_colors(COLORS[status], bg, STYLE["fade_ring"]), p, r,
                           max(2, int(r * STYLE["ring"])))

    def _update_trails(self, pos: np.ndarray, active: np.ndarray, t: Any) -> None:
        n = pos.shape[0]
        new_episode = (self._trail is None or self._trail.shape[1] != n
                       or (t is not None and self._last_time is not None and t < self._last_time))
        self._last_time = t
        if self.trail_length <= 0:
            return
        if new_episode:
            self._trail = np.repeat(pos[None], self.trail_length, axis=0).astype(np.float64)
            self._trail_len = 1
            return
        self._trail = np.roll(self._trail, -1, axis=0)
        self._trail[-1] = pos
        self._trail_len = min(self._trail_len + 1, self.trail_length)

    def _draw_static(self, surf: Any, data: Mapping[str, Any]) -> None:
        """The scene's walls and obstacles, the band and its legend (drawn once per layout)."""
        pg = self._pg
        if self._static is None:
            static = pg.Surface((self.width, self.height))
            boundary = data.get("boundary")
            if boundary is not None:
                static.fill(COLORS["outside"])
                pg.draw.polygon(static, COLORS["boundary_fill"],
                                self._to_px(boundary).tolist())
                pg.draw.polygon(static, COLORS["obstacle"], self._to_px(boundary).tolist(), 2)
            else:
                static.fill(COLORS["background"])
            for poly in data.get("obstacles") or []:
                pts = self._to_px(poly).tolist()
                if len(pts) >= 3:
                    pg.draw.polygon(static, COLORS["obstacle"], pts)
                elif len(pts) == 2:
                    pg.draw.line(static, COLORS["obstacle"], pts[0], pts[1], 3)
            pg.draw.rect(static, COLORS["band"], (0, 0, self.width, self._band))
            pg.draw.line(static, COLORS["obstacle"], (0, self._band - 1),
                         (self.width, self._band - 1), 1)
            for y, row in self._rows:
                for x, (kind, arg, text, _) in row:
                    if kind not in ("title", "clock", "text", "count"):
                        self._legend_item(static, kind, arg, text, x, y)
                    elif kind == "text":
                        self._small.draw(static, (x, y), text, COLORS["text"])
            self._static = static
        surf.blit(self._static, (0, 0))

    def _legend_item(self, surf: Any, kind: str, arg: Any, text: str, x: int, y: int) -> None:
        """One legend entry: a symbol as drawn in the scene, then its label."""
        pg = self._pg
        h = self._small.get_height()
        c = np.array([x + h / 2, y + h / 2 - 1])
        r = 0.4 * h
        if kind == "pop":
            pg.draw.circle(surf, COLORS[arg], c, r)
        elif kind == "ring":
            pg.draw.circle(surf, COLORS["learned"], c, r)
            pg.draw.circle(surf, COLORS[arg], c, r, max(2, int(r * 0.45)))
        elif kind == "nose":
            pg.draw.circle(surf, COLORS["learned"], c, r)
            _nose(pg, surf, c, r, 0.0)
        elif kind == "faded":
            self._faded_agent(surf, c, r, "learned", "at_goal")
        elif kind == "left_hit":
            _cross(pg, surf, COLORS["collided"], c, 0.7 * r)
        elif kind == "arrow":
            _arrow(pg, surf, COLORS[arg], c - (r + 2, -r / 2), c + (r + 2, -r / 2),
                   2 if arg == "velocity" else 1)
        elif kind == "goal":
            _cross(pg, surf, COLORS["learned"], c, 0.7 * r)
        elif kind == "waypoint":
            pg.draw.line(surf, COLORS["waypoint"], c - (r + 2, -r / 2), c, 1)
            _diamond(pg, surf, COLORS["waypoint"], c + (1, -1), 4)
        elif kind == "scale":
            bar, metres = self._scale_bar()
            pg.draw.line(surf, COLORS["text"], (x, c[1]), (x + bar, c[1]), 2)
            for xe in (x, x + bar):
                pg.draw.line(surf, COLORS["text"], (xe, c[1] - 3), (xe, c[1] + 3), 1)
            text = f"{metres:g} m"
            self._small.draw(surf, (x + bar + 6, y), text, COLORS["text"])
            return
        self._small.draw(surf, (x + h + 4, y), text, COLORS["text"])

    def _draw_band(self, surf: Any, data: Mapping[str, Any], statuses: np.ndarray,
                   active: np.ndarray, pops: np.ndarray) -> None:
        """The band's changing text: title, step and time, counts by status."""
        counts = status_counts(pops, statuses, active)
        for y, row in self._rows:
            for x, (kind, arg, text, _) in row:
                font = self._small
                if kind == "title":
                    font = self._font
                elif kind == "clock":
                    font = self._font
                    parts = []
                    if data.get("step") is not None:
                        parts.append(f"step {int(data['step'])}")
                    if data.get("time") is not None:
                        parts.append(f"t {float(data['time']):.2f} s")
                    text = "   ".join(parts)
                elif kind == "count":
                    who = arg[0]
                    label = text.rsplit(" ", 1)[0]
                    text = f"{label} {counts[who][label]}"
                else:
                    continue
                if text:
                    font.draw(surf, (x, y), text, COLORS["text"])

    def _draw_debug(self, surf: Any, data: Mapping[str, Any], i: int) -> None:
        """Inset (bottom right): ORCA half-planes of agent ``i`` in its velocity space."""
        pg = self._pg
        side = max(160, min(self.width, self.height) // 3)
        inset = pg.Surface((side, side))
        inset.fill(COLORS["inset"])
        ms = data.get("max_speeds")
        vmax = float(ms[i]) if ms is not None else 0.0
        vel = data.get("velocities")
        pref = data.get("pref_velocities")
        cands = [vmax]
        for v in (vel, pref):
            if v is not None:
                cands.append(float(np.hypot(*np.asarray(v, dtype=np.float64)[i])))
        half = 1.25 * max(max(cands), 1e-3)
        s = 0.5 * side / half
        c = np.array([0.5 * side, 0.5 * side])

        def to_in(v: np.ndarray) -> np.ndarray:
            return c + s * np.array([v[0], -v[1]])

        lines = np.asarray(data["orca_lines"], dtype=np.float64).reshape(-1, 4)
        big = 4.0 * half
        shade = pg.Surface((side, side), pg.SRCALPHA)
        for p0, p1, d0, d1 in lines:
            p, d = np.array([p0, p1]), np.array([d0, d1])
            nrm = np.array([d[1], -d[0]])  # right of the direction: the forbidden side
            quad = [p - big * d, p + big * d, p + big * d + big * nrm, p - big * d + big * nrm]
            pg.draw.polygon(shade, (*COLORS["forbidden"], 70), [to_in(q).tolist() for q in quad])
        inset.blit(shade, (0, 0))
        for p0, p1, d0, d1 in lines:
            p, d = np.array([p0, p1]), np.array([d0, d1])
            pg.draw.line(inset, COLORS["collided"], to_in(p - big * d), to_in(p + big * d), 1)
        pg.draw.line(inset, COLORS["outside"], (0, c[1]), (side, c[1]), 1)
        pg.draw.line(inset, COLORS["outside"], (c[0], 0), (c[0], side), 1)
        if vmax > 0:
            pg.draw.circle(inset, COLORS["obstacle"], c, s * vmax, 1)
        if pref is not None:
            q = to_in(np.asarray(pref, dtype=np.float64)[i])
            _arrow(pg, inset, COLORS["pref_velocity"], c, q, 1)
        if vel is not None:
            q = to_in(np.asarray(vel, dtype=np.float64)[i])
            _arrow(pg, inset, COLORS["velocity"], c, q, 2)
            pg.draw.circle(inset, COLORS["velocity"], q, 3)
        self._small.draw(inset, (4, 4), f"ORCA agent {i}: {lines.shape[0]} lines", COLORS["text"])
        pg.draw.rect(inset, COLORS["text"], inset.get_rect(), 1)
        surf.blit(inset, (self.width - side - 6, self.height - side - 6))

    def close(self) -> None:
        """Close the window (``human``) and release pygame's display; safe to call twice."""
        if self._pg is not None and self.render_mode == "human" and not self.closed:
            self._pg.display.quit()
        self.closed = True


def counted_statuses(learned: bool) -> list[tuple[int, str]]:
    """The statuses the band counts, ``(code, label)`` in its order (crowds never collide)."""
    out = [(Status.ACTIVE, "active"), (Status.AT_GOAL, "at goal")]
    if learned:
        out.append((Status.COLLIDED, "collided"))
    out += [(Status.DEADLOCKED, "stalled"), (Status.TIMED_OUT, "timed out")]
    return out


def status_counts(populations: Any, statuses: Any, active: Any) -> dict[str, dict[str, int]]:
    """The band's counts: ``{"learned": {label: n}, "crowd": {label: n}}``.

    Labels: ``active`` (in the simulation with no final status yet), ``at goal``, ``collided``,
    ``stalled`` (deadlocked) and ``timed out``; each agent is counted once, by its status, so a
    timed-out agent is no longer counted as active.
    """
    pops = np.asarray(populations, dtype=np.int64)
    statuses = np.asarray(statuses, dtype=np.int64)
    active = np.asarray(active, dtype=bool)
    learned = pops == Population.LEARNED
    names = {Status.ACTIVE: "active", Status.AT_GOAL: "at goal", Status.COLLIDED: "collided",
             Status.DEADLOCKED: "stalled", Status.TIMED_OUT: "timed out"}
    out = {}
    for who, mask in (("learned", learned), ("crowd", ~learned)):
        row = {}
        for code, label in names.items():
            sel = mask & (statuses == code)
            if code == Status.ACTIVE:
                sel &= active
            row[label] = int(sel.sum())
        out[who] = row
    return out


class _Font:
    """Text of the frames: the TrueType font pygame-ce ships, drawn by FreeType.

    The font is ``freesansbold.ttf``, which the pygame package ships (``pygame.freetype
    .get_default_font()``), so no system font is needed and frames look the same everywhere.
    ``size`` is the em size in pixels (``pygame.font.Font(None, s)`` draws that font at about
    0.69 s). Kerning is off: the font's kerning pairs, applied to glyphs hinted to whole
    pixels, open gaps at frame sizes ("bott leneck", "t imed out"); FreeType's unkerned
    advances space them evenly. Text is placed by its line box (top at ``y``, height
    :meth:`get_height`), so texts of one font share a baseline whatever their glyphs.
    """

    def __init__(self, pg: Any, size: int) -> None:
        import pygame.freetype  # noqa: PLC0415  (a submodule pygame does not import itself)

        pygame.freetype.init()
        # None: the package's own freesansbold.ttf (pygame.freetype.get_default_font()).
        self._ft = pygame.freetype.Font(None, size)
        self._ft.kerning = False
        self._ft.antialiased = True
        self._ft.origin = True  # render_to's position is the baseline's start
        self._ascender = self._ft.get_sized_ascender()
        self._height = self._ft.get_sized_height()

    def get_height(self) -> int:
        """The line's height, pixels."""
        return self._height

    def size(self, text: str) -> tuple[int, int]:
        """``(width, height)`` of ``text``, pixels."""
        return self._ft.get_rect(text).width if text else 0, self._height

    def draw(self, surf: Any, pos: tuple[float, float], text: str, color: tuple) -> None:
        """Draw ``text`` with the top of its line at ``pos``."""
        if text:
            self._ft.render_to(surf, (int(pos[0]), int(pos[1]) + self._ascender), text, color)


def mix_colors(a: tuple, b: tuple, t: float) -> tuple:
    """The RGB colour ``t`` of the way from ``a`` to ``b`` (faded marks: towards the background)."""
    return tuple(int(round(x + (y - x) * t)) for x, y in zip(a, b, strict=True))


def _nose(pg: Any, surf: Any, p: np.ndarray, r: float, heading: float) -> None:
    """The heading mark: a white triangle at the front of a disc of ``r`` pixels at ``p``."""
    tip, base, half = STYLE["nose"]
    f = np.array([np.cos(heading), -np.sin(heading)])  # screen y points down
    side = np.array([-f[1], f[0]])
    pg.draw.polygon(surf, COLORS["heading"], [
        (p + tip * r * f).tolist(), (p + base * r * f + half * r * side).tolist(),
        (p + base * r * f - half * r * side).tolist()])


def _cross(pg: Any, surf: Any, col: tuple, p: np.ndarray, r: float) -> None:
    x, y = float(p[0]), float(p[1])
    pg.draw.line(surf, col, (x - r, y - r), (x + r, y + r), 2)
    pg.draw.line(surf, col, (x - r, y + r), (x + r, y - r), 2)


def _diamond(pg: Any, surf: Any, col: tuple, p: np.ndarray, r: float) -> None:
    x, y = float(p[0]), float(p[1])
    pg.draw.polygon(surf, col, [(x, y - r), (x + r, y), (x, y + r), (x - r, y)])


def _arrow(pg: Any, surf: Any, col: tuple, a: np.ndarray, b: np.ndarray, width: int) -> None:
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    d = b - a
    length = float(np.hypot(*d))
    if length < 1.0:
        return
    pg.draw.line(surf, col, a.tolist(), b.tolist(), width)
    u = d / length
    h = min(8.0, 0.4 * length)
    left = b - h * u + 0.5 * h * np.array([-u[1], u[0]])
    right = b - h * u - 0.5 * h * np.array([-u[1], u[0]])
    pg.draw.polygon(surf, col, [b.tolist(), left.tolist(), right.tolist()])



class _Ffmpeg:
    """An ffmpeg process encoding raw RGB frames from its stdin to an H.264 file.

    The command line is the one ``imageio``'s FFMPEG writer builds for the same arguments
    (``imageio_ffmpeg.write_frames``), so the videos are the same; unlike it, this keeps what
    a complete write needs checked: the exit status and the error output (read by a thread
    into a bounded buffer, so a chatty ffmpeg never blocks on a full pipe).

    Args:
        exe: The ffmpeg binary.
        path: The file to write (its extension picks the container).
        dest: The destination the file will be renamed to (named in errors).
        width: Frame width, pixels.
        height: Frame height, pixels.
        fps: Frames per second.
        quality: imageio's quality 0-10 (crf = int((1 - quality / 10) * 51)).
    """

    def __init__(self, exe: str, path: str, dest: str, width: int, height: int, fps: float,
                 quality: float) -> None:

        cmd = [exe, "-y", "-f", "rawvideo", "-vcodec", "rawvideo", "-s", f"{width}x{height}",
               "-pix_fmt", "rgb24", "-r", str(Fraction(fps).limit_denominator()), "-i", "-",
               "-an", "-vcodec", "libx264", "-pix_fmt", "yuv420p",
               "-crf", str(int((1 - quality / 10.0) * 51))]
        if width % 16 or height % 16:  # as imageio: pad to macro blocks of 16 (yuv420p)
            cmd += ["-vf", f"scale={-(-width // 16) * 16}:{-(-height // 16) * 16}"]
        cmd += ["-v", "warning", path]
        self.dest = dest
        self.size = (height, width)
        self._lines: collections.deque[bytes] = collections.deque(maxlen=20)
        self._proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.PIPE)
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()

    def _drain(self) -> None:
        for line in self._proc.stderr:
            self._lines.append(line)

    def _failure(self, what: str) -> OSError:
        """The error for a failed write (after the process ended): cause from its output."""
        self._reader.join(timeout=5)
        text = b"".join(self._lines).decode("utf-8", "replace")
        last = next((ln.strip() for ln in reversed(text.splitlines()) if ln.strip()), "")
        rc = self._proc.returncode

        if "No space left on device" in text:
            code = errno.ENOSPC
        elif "Disk quota exceeded" in text:
            code = errno.EDQUOT
        elif "File too large" in text or rc == -getattr(signal, "SIGXFSZ", -1):
            code = errno.EFBIG
        else:
            code = None
        if code is not None:
            reason = NO_ROOM[code]
        elif rc is not None and rc < 0:
            reason = f"ffmpeg was killed by signal {-rc} ({what})"
        else:
            reason = f"ffmpeg failed ({what}, exit status {rc})"
        if last and code is None:
            reason += f": {last[:200]}"
        return write_error(self.dest, reason, code)

    def write(self, frame: np.ndarray) -> None:
        """Send one ``(H, W, 3)`` uint8 frame; a dead ffmpeg is an ``OSError`` naming the file."""
        if frame.shape[:2] != self.size:
            raise ValueError(f"all frames of a video must have one size: {self.size[::-1]} "
                             f"pixels, got {frame.shape[1::-1]}")
        try:
            self._proc.stdin.write(np.ascontiguousarray(frame).tobytes())
        except OSError:  # BrokenPipeError: ffmpeg stopped reading (it failed)
            self.kill()
            raise self._failure("while encoding") from None

    def close(self) -> None:
        """Let ffmpeg finish; an ``OSError`` naming the file if it did not exit with 0."""
        try:
            self._proc.stdin.close()
        except OSError:
            pass  # the exit status says what went wrong
        try:
            self._proc.wait()
        except BaseException:
            self.kill()
            raise
        if self._proc.returncode != 0:
            raise self._failure("when finishing the file")
        self._reader.join(timeout=5)

    def kill(self) -> None:
        """Stop ffmpeg now (nothing it wrote is kept)."""
        with contextlib.suppress(OSError):
            self._proc.stdin.close()
        if self._proc.poll() is None:
            self._proc.kill()
        self._proc.wait()


def _check_complete(path: str, fmt: str) -> str | None:
    """Why the file at ``path`` is not a complete ``fmt`` (``"mp4"``, ``"gif"``), or ``None``.

    An mp4 is complete when its top-level boxes tile the file exactly and include ``ftyp``,
    ``mdat`` and ``moov`` (the index ffmpeg writes last; a file cut short lacks it, "moov atom
    not found"); a GIF when it starts with its signature and ends with its trailer byte.
    """
    size = os.path.getsize(path)
    with open(path, "rb") as fh:
        if fmt == "gif":
            head = fh.read(6)
            fh.seek(max(size - 1, 0))
            ok = head in (b"GIF87a", b"GIF89a") and fh.read(1) == b"\x3b"
            return None if ok else "the GIF is incomplete (no trailer)"
        pos, seen = 0, set()
        while pos < size:
            fh.seek(pos)
            head = fh.read(8)
            if len(head) < 8:
                return "the mp4 ends inside a box header"
            n, kind = struct.unpack(">I4s", head)
            if n == 1:
                big = fh.read(8)
                n = struct.unpack(">Q", big)[0] if len(big) == 8 else 0
            elif n == 0:
                n = size - pos
            if n < 8 or pos + n > size:
                name = kind.decode("latin-1")
                return f"the mp4 is cut short (its {name!r} box runs past the end)"
            seen.add(kind)
            pos += n
    missing = sorted(k.decode() for k in {b"ftyp", b"mdat", b"moov"} - seen)
    return f"the mp4 has no {' or '.join(missing)} box" if missing else None


class VideoWriter:
    """Streams ``(H, W, 3)`` uint8 frames to an mp4 (H.264 via imageio-ffmpeg) or a GIF.

    The mp4 is encoded by the ffmpeg binary that the ``imageio-ffmpeg`` wheel ships (no system
    ffmpeg, no hard-coded path; ``IMAGEIO_FFMPEG_EXE`` can still point elsewhere), with the
    command line imageio would use, run by this class so that its exit status and error output
    are known. When that fails at the start (package or binary missing, encoder error at open
    or at the first frame), the frames go to a GIF next to the requested path instead (Pillow,
    through imageio), with a warning. A path ending in ``.gif`` asks for the GIF directly.

    The frames go to a temporary file in the destination's folder, renamed to :attr:`path` by
    :meth:`close` (:func:`orca_env.files.atomic_path`) only once the whole write is known to
    have succeeded: ffmpeg exited with status 0 (imageio-ffmpeg ignores the status, and ffmpeg
    reports "Error closing file: No space left on device" only on its error output), no write
    or close raised, and the file is structurally complete (an mp4's boxes tile the file and
    include ``moov``; a GIF ends with its trailer). Otherwise the temporary file is removed,
    whatever was at :attr:`path` before stays, and :meth:`close` (or :meth:`append`) raises
    :class:`orca_env.files.WriteError`, an ``OSError`` of one line naming the file, the cause
    ("no space left on device" for a full disk) and what was kept. A full disk never falls
    back to a GIF (that would fail the same way). :meth:`abort` (or leaving a ``with`` block
    by an exception) removes the temporary file.

    Args:
        path: Output file; ``.mp4`` is appended when there is no extension.
        fps: Frames per second, a finite number > 0.
        quality: imageio-ffmpeg quality 0-10 (larger: bigger files).

    Attributes:
        path: The file actually written (``.gif`` after a fallback); known after the first
            frame.
        format: ``"mp4"`` or ``"gif"``.

    Raises:
        ValueError: On a bad ``fps``.
        ImportError: If imageio (the video extra) is not installed.
    """

    def __init__(self, path: str | os.PathLike, fps: float = 4, quality: float = 7) -> None:
        path = os.fspath(path)
        if not os.path.splitext(path)[1]:
            path += ".mp4"
        if isinstance(fps, bool) or not isinstance(fps, (int, float, np.integer, np.floating)) \
                or not math.isfinite(fps) or fps <= 0:
            raise ValueError(f"fps must be a finite number > 0, got {fps!r}")
        require_imageio()
        self.path = path
        self.fps = float(fps)
        self.quality = quality
        self.format = "gif" if path.lower().endswith(".gif") else "mp4"
        self._writer = None
        self._ffmpeg: _Ffmpeg | None = None
        self._atomic = None
        self._tmp: str | None = None
        self.frames_written = 0

    def _begin(self) -> str:
        """Start the temporary file for :attr:`path`; returns its name (same extension)."""
        self._atomic = atomic_path(self.path, suffix=os.path.splitext(self.path)[1])
        self._tmp = self._atomic.__enter__()
        return self._tmp

    def _discard(self) -> None:
        """Remove the temporary file, if any."""
        if self._atomic is not None:
            atomic, self._atomic = self._atomic, None
            with contextlib.suppress(_Discarded):
                atomic.__exit__(_Discarded, _Discarded(), None)

    def _fail(self, exc: BaseException) -> None:
        """Stop, remove the temporary file, and raise ``exc`` as a one-line error for the file."""
        self.abort()
        no_room = no_room_error(self.path, exc)  # after abort: "kept" describes the destination
        if no_room is not None:
            raise no_room from exc
        raise exc

    def _open(self, first: np.ndarray) -> None:
        """Open the writer and write the ``first`` frame (the mp4 attempt includes both)."""
        iio = require_imageio()
        os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
        if self.format == "mp4":
            try:
                import imageio_ffmpeg  # noqa: PLC0415

                exe = imageio_ffmpeg.get_ffmpeg_exe()
                if not (os.path.isfile(exe) or shutil.which(exe)):
                    raise FileNotFoundError(f"no ffmpeg binary at {exe!r}")
                if first.ndim != 3 or first.shape[2] != 3:
                    raise ValueError(f"frames must be (H, W, 3) RGB, got shape {first.shape}")
                tmp = self._begin()
                self._ffmpeg = _Ffmpeg(exe, tmp, self.path, first.shape[1], first.shape[0],
                                       self.fps, self.quality)
                self._ffmpeg.write(first)
                return
            except WriteError as exc:
                if exc.errno is not None:  # no room: a GIF would fail the same way
                    self._fail(exc)
                self._fall_back(exc)
            except Exception as exc:  # noqa: BLE001  (any ffmpeg failure: fall back to GIF)
                self._fall_back(exc)
        tmp = self._begin()
        try:
            self._writer = iio.get_writer(tmp, format="GIF", mode="I",
                                          duration=1000.0 / self.fps, loop=0)
            self._writer.append_data(first)
        except BaseException as exc:
            self._fail(exc)

    def _fall_back(self, exc: BaseException) -> None:
        """After a failed mp4 start: remove it and switch to a GIF, with a warning."""
        self.abort()  # a partial mp4 would look like a result
        warnings.warn(f"mp4 writing failed ({exc!r}); writing a GIF instead", stacklevel=4)
        self.path = os.path.splitext(self.path)[0] + ".gif"
        self.format = "gif"

    def append(self, frame: np.ndarray) -> None:
        """Add one ``(H, W, 3)`` uint8 frame (all frames must have the same size).

        Raises:
            orca_env.files.WriteError: When the file cannot be written (e.g. the disk is
                full); the temporary file is already removed.
        """
        frame = np.asarray(frame, dtype=np.uint8)
        if self._ffmpeg is None and self._writer is None:
            self._open(frame)
        elif self._ffmpeg is not None:
            try:
                self._ffmpeg.write(frame)
            except BaseException as exc:
                self._fail(exc)
        else:
            try:
                self._writer.append_data(frame)
            except OSError as exc:
                self._fail(exc)
        self.frames_written += 1

    def close(self) -> str:
        """Finish the file, check it is complete and rename it to :attr:`path`; returns the path.

        Raises:
            orca_env.files.WriteError: When the write did not succeed completely (ffmpeg's exit
                status, a close error, a truncated file): nothing is renamed to :attr:`path`
                and the temporary file is removed.
        """
        try:
            if self._ffmpeg is not None:
                ffmpeg, self._ffmpeg = self._ffmpeg, None
                ffmpeg.close()
            if self._writer is not None:
                writer, self._writer = self._writer, None
                writer.close()
            if self._tmp is not None and self._atomic is not None:
                problem = _check_complete(self._tmp, self.format)
                if problem is not None:
                    self._discard()
                    raise write_error(self.path, problem)
        except BaseException as exc:
            self._fail(exc)
        if self._atomic is not None:
            atomic, self._atomic = self._atomic, None
            atomic.__exit__(None, None, None)  # a full disk at fsync: WriteError, tmp removed
        return self.path

    def abort(self) -> None:
        """Stop writing and remove the unfinished file; nothing appears at :attr:`path`."""
        if self._ffmpeg is not None:
            ffmpeg, self._ffmpeg = self._ffmpeg, None
            ffmpeg.kill()
        if self._writer is not None:
            with contextlib.suppress(Exception):
                self._writer.close()
            self._writer = None
        self._discard()

    def __enter__(self) -> VideoWriter:
        return self

    def __exit__(self, exc_type: Any, *exc: Any) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()


class _Discarded(Exception):
    """Thrown into :func:`orca_env.files.atomic_path` to make it remove its temporary file."""


def write_video(frames: Any, path: str | os.PathLike, fps: float = 4) -> str:
    """Write an iterable of ``(H, W, 3)`` uint8 frames; returns the path written (mp4 or GIF).

    Raises:
        orca_env.files.WriteError: As :class:`VideoWriter` (nothing renamed into place).
    """
    with VideoWriter(path, fps) as w:
        for f in frames:
            w.append(f)
    return w.path
