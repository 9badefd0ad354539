"""pygame rendering of an ``OrcaEnv`` frame (``human`` window or ``rgb_array`` frames).

pygame (``pygame-ce``) is imported inside :class:`Renderer` only, so importing this module, or
running an env with ``render_mode=None``, never starts pygame. Headless use needs
``SDL_VIDEODRIVER=dummy`` only for the ``human`` mode; ``rgb_array`` draws on an off-screen
surface and never opens a display.

A frame is drawn from a plain dict (the *render data*), so the same code draws a live env
(``env.render_data()`` or :func:`orca_env.episode_log.snapshot`) and a replayed episode log:

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
==================  ==========================================================  ==========

The debug layer is an inset in velocity space centred on the zero velocity of the selected
agent: its max-speed disc, each ORCA line with the forbidden (right) side shaded, the preferred
velocity (the LP's target) and the new velocity (the LP's answer). ``Simulator.orca_lines(i)``
returns the lines of the *last* step, which pair with the velocities after that step.
"""

from __future__ import annotations

import os
import shutil
import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np

from .codes import STATUSES, Population, Status

__all__ = ["Renderer", "VideoWriter", "write_video", "COLORS", "fit_view", "frame_size"]


#: RGB colours: populations (fill) and statuses (ring).
COLORS = {
    "background": (250, 250, 247),
    "boundary_fill": (255, 255, 255),
    "outside": (228, 228, 222),
    "obstacle": (110, 110, 118),
    "learned": (31, 119, 180),
    "orca": (160, 160, 160),
    "non_reactive": (148, 103, 189),
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
}
_POP_NAMES = tuple(p.name.lower() for p in Population)


def frame_size(bounds: tuple[float, float, float, float], size: int) -> tuple[int, int]:
    """``(width, height)`` in pixels for world ``bounds``: the long side is ``size``.

    Both sides are multiples of 16 (what H.264 encoders want) and at least 240.
    """
    x0, y0, x1, y1 = bounds
    w, h = max(x1 - x0, 1e-9), max(y1 - y0, 1e-9)
    if w >= h:
        width, height = size, size * h / w
    else:
        width, height = size * w / h, size
    rnd = lambda v: max(240, int(round(v / 16.0)) * 16)  # noqa: E731
    return rnd(width), rnd(height)


def fit_view(data: Mapping[str, Any], margin: float = 0.05) -> tuple[float, float, float, float]:
    """World bounds ``(x0, y0, x1, y1)`` holding the boundary, obstacles, agents and goals.

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
    for key in ("positions", "goals"):
        if data.get(key) is not None:
            p = np.asarray(data[key], dtype=np.float64).reshape(-1, 2)
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

    Args:
        render_mode: ``"human"`` (a window, paced at ``fps``) or ``"rgb_array"`` (``draw``
            returns the frame).
        fps: Frames per second of the ``human`` window (the env's ``metadata["render_fps"]``).
        size: Pixels of the long side of the frame; the short side follows the scene's aspect
            ratio. Larger: sharper but slower to draw and encode.
        trail_length: Past positions drawn as a trail behind each agent (0: no trails).
        arrow_seconds: Velocity arrows show the displacement over this many seconds.
        debug_agent: Slot whose ORCA half-planes are drawn in an inset (``None``: no inset);
            the frame's ``selected`` key overrides it.
        bounds: Fixed world bounds ``(x0, y0, x1, y1)``; ``None`` fits the first frame.
    """

    def __init__(self, render_mode: str = "rgb_array", fps: float = 4, *, size: int = 720,
                 trail_length: int = 12, arrow_seconds: float = 1.0,
                 debug_agent: int | None = None,
                 bounds: tuple[float, float, float, float] | None = None) -> None:
        if render_mode not in ("human", "rgb_array"):
            raise ValueError(f"render_mode must be 'human' or 'rgb_array', got {render_mode!r}")
        if not size >= 240:
            raise ValueError(f"size must be >= 240 pixels, got {size!r}")
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
        # pygame prints a banner on import unless told not to; it would pollute stdout.
        os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
        import pygame  # noqa: PLC0415  (lazy: render_mode=None never imports pygame)

        self._pg = pygame
        pygame.font.init()
        self._font = pygame.font.Font(None, max(14, self.size // 40))
        self._small = pygame.font.Font(None, max(12, self.size // 55))
        if self.render_mode == "human":
            pygame.display.init()
            pygame.display.set_caption("orca-env")
            self._clock = pygame.time.Clock()
        self._layout(data)

    def _layout(self, data: Mapping[str, Any]) -> None:
        """Fit the view to the scene (unless bounds were given) and size the frame."""
        pygame = self._pg
        if self.bounds is None:
            self.bounds = fit_view(data)
        self.width, self.height = frame_size(self.bounds, self.size)
        x0, y0, x1, y1 = self.bounds
        self._scale = min(self.width / (x1 - x0), self.height / (y1 - y0))
        # Centre the scene in the frame.
        self._ox = 0.5 * (self.width - self._scale * (x1 - x0)) - self._scale * x0
        self._oy = 0.5 * (self.height - self._scale * (y1 - y0)) + self._scale * y1
        if self.render_mode == "human":
            self._screen = pygame.display.set_mode((self.width, self.height))
        self._surface = pygame.Surface((self.width, self.height))
        self._static = None

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
        radii = np.asarray(data["radii"], dtype=np.float64)
        pops = np.asarray(data["populations"], dtype=np.int64)
        statuses = data.get("statuses")
        statuses = (np.zeros(n, dtype=np.int64) if statuses is None
                    else np.asarray(statuses, dtype=np.int64))
        px = self._to_px(pos)
        rpx = np.maximum(radii * self._scale, 1.5)
        few = n <= 60
        live = np.flatnonzero(active)

        # Trails (oldest first), goals and waypoints under the agents.
        if self._trail is not None and self._trail_len > 1:
            tr = self._to_px(self._trail[-self._trail_len:])
            faded = [_mix(COLORS[p], COLORS["background"], 0.55) for p in _POP_NAMES]
            for i in live:
                pg.draw.lines(surf, faded[pops[i]], False, tr[:, i].tolist(), 1)
        goals = data.get("goals")
        if goals is not None:
            gpx = self._to_px(goals)
            for i in live:
                col = COLORS[_POP_NAMES[pops[i]]]
                if pops[i] == Population.LEARNED or few:
                    _cross(pg, surf, col, gpx[i], max(3.0, 0.6 * rpx[i]))
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

        # Agents: fill = population, ring = status.
        sel = data.get("selected", self.debug_agent)
        sel = -1 if sel is None else int(sel)
        for i in live:
            fill = COLORS[_POP_NAMES[pops[i]]]
            st = int(statuses[i])
            pg.draw.circle(surf, fill, px[i], rpx[i])
            if st != Status.ACTIVE:
                ring = COLORS[STATUSES[st]]
                pg.draw.circle(surf, ring, px[i], rpx[i], max(2, int(rpx[i] * 0.35)))
            if i == sel:
                pg.draw.circle(surf, COLORS["selected"], px[i], rpx[i] + 3, 2)
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

        self._draw_overlay(surf, data, statuses, active, pops)
        if 0 <= sel < n and active[sel] and data.get("orca_lines") is not None:
            self._draw_debug(surf, data, sel)

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
            # A 1 m scale bar, bottom left.
            bar = self._scale
            while bar < 30:
                bar *= 10
            while bar > 200:
                bar /= 10
            metres = bar / self._scale
            y = self.height - 12
            pg.draw.line(static, COLORS["text"], (10, y), (10 + bar, y), 2)
            label = self._small.render(f"{metres:g} m", True, COLORS["text"])
            static.blit(label, (14 + bar, y - label.get_height() // 2))
            self._static = static
        surf.blit(self._static, (0, 0))

    def _draw_overlay(self, surf: Any, data: Mapping[str, Any], statuses: np.ndarray,
                      active: np.ndarray, pops: np.ndarray) -> None:
        learned = pops == Population.LEARNED
        counts = [f"active {int((active & learned).sum())}/{int(learned.sum())}"]
        for code, name in ((Status.AT_GOAL, "at goal"), (Status.COLLIDED, "collided"),
                           (Status.DEADLOCKED, "stalled")):
            counts.append(f"{name} {int((learned & (statuses == code)).sum())}")
        head = []
        if data.get("title"):
            head.append(str(data["title"]))
        if data.get("step") is not None:
            head.append(f"step {int(data['step'])}")
        if data.get("time") is not None:
            head.append(f"t {float(data['time']):.2f} s")
        lines = ["   ".join(head), "learned: " + "   ".join(counts)]
        crowd = ~learned
        if crowd.any():
            lines.append(f"crowd: active {int((active & crowd).sum())}/{int(crowd.sum())}   "
                         f"at goal {int((crowd & (statuses == Status.AT_GOAL)).sum())}   "
                         f"stalled {int((crowd & (statuses == Status.DEADLOCKED)).sum())}")
        y = 6
        for text in lines:
            img = self._font.render(text, True, COLORS["text"])
            bg = self._pg.Surface((img.get_width() + 8, img.get_height() + 2))
            bg.fill((255, 255, 255))
            bg.set_alpha(190)
            surf.blit(bg, (4, y - 1))
            surf.blit(img, (8, y))
            y += img.get_height() + 3

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
        label = self._small.render(f"ORCA agent {i}: {lines.shape[0]} lines", True,
                                   COLORS["text"])
        inset.blit(label, (4, 4))
        pg.draw.rect(inset, COLORS["text"], inset.get_rect(), 1)
        surf.blit(inset, (self.width - side - 6, self.height - side - 6))

    def close(self) -> None:
        """Close the window (``human``) and release pygame's display; safe to call twice."""
        if self._pg is not None and self.render_mode == "human" and not self.closed:
            self._pg.display.quit()
        self.closed = True


def _mix(a: tuple, b: tuple, t: float) -> tuple:
    return tuple(int(round(x + (y - x) * t)) for x, y in zip(a, b, strict=True))


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



class VideoWriter:
    """Streams ``(H, W, 3)`` uint8 frames to an mp4 (H.264 via imageio-ffmpeg) or a GIF.

    The mp4 goes through ``imageio`` with the ffmpeg binary that the ``imageio-ffmpeg`` wheel
    ships (no system ffmpeg, no hard-coded path; ``IMAGEIO_FFMPEG_EXE`` can still point
    elsewhere). When that fails (package or binary missing, encoder error at open or at the
    first frame), the frames go to a GIF next to the requested path instead (Pillow, through
    imageio), with a warning. A path ending in ``.gif`` asks for the GIF directly.

    Args:
        path: Output file; ``.mp4`` is appended when there is no extension.
        fps: Frames per second.
        quality: imageio-ffmpeg quality 0-10 (larger: bigger files).

    Attributes:
        path: The file actually written (``.gif`` after a fallback); known after the first
            frame.
        format: ``"mp4"`` or ``"gif"``.
    """

    def __init__(self, path: str | os.PathLike, fps: float = 4, quality: float = 7) -> None:
        path = os.fspath(path)
        if not os.path.splitext(path)[1]:
            path += ".mp4"
        self.path = path
        self.fps = float(fps)
        self.quality = quality
        self.format = "gif" if path.lower().endswith(".gif") else "mp4"
        self._writer = None
        self.frames_written = 0

    def _open(self, first: np.ndarray) -> None:
        """Open the writer and write the ``first`` frame (the mp4 attempt includes both)."""
        import imageio.v2 as iio  # noqa: PLC0415

        os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
        if self.format == "mp4":
            writer = None
            try:
                import imageio_ffmpeg  # noqa: PLC0415

                # imageio starts ffmpeg lazily (at the first frame), so a missing binary (e.g. a
                # stale IMAGEIO_FFMPEG_EXE) must be found here, and the first frame goes through
                # inside this try.
                exe = imageio_ffmpeg.get_ffmpeg_exe()
                if not (os.path.isfile(exe) or shutil.which(exe)):
                    raise FileNotFoundError(f"no ffmpeg binary at {exe!r}")
                # macro_block_size 16 matches frame_size(), so ffmpeg never rescales frames.
                writer = iio.get_writer(self.path, format="FFMPEG", mode="I", fps=self.fps,
                                        codec="libx264", quality=self.quality,
                                        pixelformat="yuv420p", macro_block_size=16)
                writer.append_data(first)
                self._writer = writer
                return
            except Exception as exc:  # noqa: BLE001  (any ffmpeg failure: fall back to GIF)
                if writer is not None:
                    try:
                        writer.close()
                    except Exception:  # noqa: BLE001  (already failed; the GIF follows)
                        pass
                if os.path.isfile(self.path):
                    os.remove(self.path)  # a partial mp4 would look like a result
                warnings.warn(f"mp4 writing failed ({exc!r}); writing a GIF instead",
                              stacklevel=3)
                self.path = os.path.splitext(self.path)[0] + ".gif"
                self.format = "gif"
        self._writer = iio.get_writer(self.path, format="GIF", mode="I",
                                      duration=1000.0 / self.fps, loop=0)
        self._writer.append_data(first)

    def append(self, frame: np.ndarray) -> None:
        """Add one ``(H, W, 3)`` uint8 frame (all frames must have the same size)."""
        frame = np.asarray(frame, dtype=np.uint8)
        if self._writer is None:
            self._open(frame)
        else:
            self._writer.append_data(frame)
        self.frames_written += 1

    def close(self) -> str:
        """Finish the file; returns its path."""
        if self._writer is not None:
            self._writer.close()
            self._writer = None
        return self.path

    def __enter__(self) -> VideoWriter:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def write_video(frames: Any, path: str | os.PathLike, fps: float = 4) -> str:
    """Write an iterable of ``(H, W, 3)`` uint8 frames; returns the path written (mp4 or GIF)."""
    with VideoWriter(path, fps) as w:
        for f in frames:
            w.append(f)
    return w.path
