"""Episode logs: what happened in an episode, per step, in one compact ``.npz`` file.

A log holds, for every step ``t = 0 .. T`` (``t = 0`` is the state after ``reset``) and every
agent slot (learned and crowd, in slot order):

==================  ======================================================================
array               meaning
==================  ======================================================================
positions           ``(T+1, n, 2)`` metres, world frame
velocities          ``(T+1, n, 2)`` m/s, the velocities the core applied in the step
pref_velocities     ``(T+1, n, 2)`` m/s, the preferred velocities given to the core (zero at
                    ``t = 0``)
goals, targets      ``(T+1, n, 2)`` metres: goals (they change with ``on_goal: new_goal``) and
                    guidance waypoints (equal to the goals without guidance)
statuses            ``(T+1, n)`` int8, index into ``orca_env.codes.STATUSES`` (active,
                    at_goal, collided, deadlocked, timed_out)
active              ``(T+1, n)`` bool, the agent is in the simulation
times               ``(T+1,)`` float64, simulated seconds
headings            ``(T+1, n)`` rad, world frame, NaN for holonomic slots; only in logs of
                    episodes with non-holonomic agents (robots; optional: older logs and
                    holonomic episodes have none)
==================  ======================================================================

plus the static scene (radii, populations, max speeds, obstacle polygons, boundary), the resolved
env config, the seed and the policy name (``meta``, a JSON string). The statuses are the env's
own (``env.render_data()["statuses"]``): a learned slot keeps its last reported status after it
leaves; a crowd slot is ``at_goal`` once it reached a final goal and ``deadlocked`` while
stalled. Floats
are stored as float32 by default (millimetre precision at 1 km; ``dtype=np.float64`` keeps the
bits) and the file is zip-compressed, so a 100-agent, 300-step episode takes about 1 MB.

:func:`replay` renders a log to the screen or to a video without re-running the policy or the
simulator. Nothing here imports pygame until something is drawn.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..codes import Population, Status
from ..files import MAX_MEMBER_BYTES, ArchiveError, atomic_path, read_npz
from ..render import Renderer, VideoWriter, require_imageio

__all__ = ["snapshot", "EpisodeRecorder", "EpisodeLog", "load_log", "replay", "check_size",
           "LOG_FORMAT", "MIN_SIZE", "MAX_SIZE"]

#: Format tag written into every log; bumped when the layout changes.
LOG_FORMAT = "orca-env-episode-log/1"
_PER_STEP = ("positions", "velocities", "pref_velocities", "goals", "targets")
#: Every array of a log file.
_KEYS = (*_PER_STEP, "statuses", "active", "times", "selected", "orca_lines",
         "orca_line_offsets", "meta", "radii", "populations", "max_speeds", "obstacle_points",
         "obstacle_offsets", "boundary", "extent")
#: Arrays a log may hold (older logs, and episodes without robots, have none of them).
_OPTIONAL = ("headings",)
#: Bound of a logged heading, rad (the motion models keep theirs within a few turns).
_MAX_ANGLE = 1e6
#: Bounds of a frame's long side, pixels (the renderer's limits).
MIN_SIZE, MAX_SIZE = 240, 8192
#: Bounds a log's values must respect to replay: coordinates (the core's), lengths, speeds,
#: the frame rate and the title's length (frames draw it).
_MAX_COORD, _MAX_LENGTH, _MAX_SPEED = 1e9, 1e6, 1e4
_FPS_RANGE = (1e-2, 1e3)
_MAX_TITLE = 1000


class _LogError(Exception):
    """What is wrong with a log file (wrapped into a ValueError naming the file)."""


def _positive_number(x: Any) -> bool:
    return (isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool)
            and math.isfinite(x) and x > 0)


def _check_offsets(key: str, off: np.ndarray, total: int) -> None:
    if off.ndim != 1 or off[0] != 0 or off[-1] != total or (np.diff(off) < 0).any():
        raise _LogError(f"{key!r} must rise from 0 to {total}, got {off.tolist()[:8]}...")


def snapshot(env: Any, step: int | None = None, debug_agent: int | None = None,
             title: str | None = None, data: dict | None = None) -> dict:
    """The render-data dict of the env's current state (see :mod:`orca_env.render`).

    ``env.render_data()`` (positions, velocities, preferred velocities, max speeds, statuses as
    the env keeps them per slot, ...) plus, optionally, the step, a title and, with
    ``debug_agent``, that agent's ORCA lines of the last step (``env.sim.orca_lines``).
    ``data`` is ``env.render_data()`` of the current state, if the caller has it already (it is
    completed in place).

    Raises:
        ValueError: If ``debug_agent`` is not a slot of the env.
    """
    if data is None:
        data = env.render_data()
    n = data["positions"].shape[0]
    if step is not None:
        data["step"] = int(step)
    if title is not None:
        data["title"] = title
    if debug_agent is not None:
        if not 0 <= debug_agent < n:
            raise ValueError(f"debug_agent {debug_agent!r} is not a slot of the env "
                             f"(0 .. {n - 1})")
        data["selected"] = int(debug_agent)
        data["orca_lines"] = np.asarray(env.sim.orca_lines(int(debug_agent)), dtype=np.float64)
    return data


class EpisodeRecorder:
    """Collects snapshots of one episode and writes them as an :class:`EpisodeLog`.

    Args:
        config: The env's resolved config as a plain dict (``env.config.to_dict()``).
        seed: The episode's reset seed.
        policy: Name of the policy that acted.
        dtype: Float type of the stored arrays (float32: compact; float64: bit-exact).
        extra: More JSON-serialisable metadata (e.g. the episode's metrics).
    """

    def __init__(self, config: dict, seed: int | None, policy: str = "",
                 dtype: Any = np.float32, extra: dict | None = None) -> None:
        self.meta = {"format": LOG_FORMAT, "config": config, "seed": seed, "policy": policy,
                     **(extra or {})}
        self.dtype = np.dtype(dtype)
        self._steps: list[dict] = []
        self._static: dict | None = None

    def add(self, data: dict) -> None:
        """Append one snapshot (a render-data dict; the first one also gives the scene)."""
        if self._static is None:
            self._static = {
                "radii": np.asarray(data["radii"], dtype=np.float64).copy(),
                "populations": np.asarray(data["populations"], dtype=np.int8).copy(),
                "max_speeds": np.asarray(data.get("max_speeds", np.zeros(0)), np.float64).copy(),
                "obstacles": [np.asarray(p, dtype=np.float64) for p in data.get("obstacles")
                              or []],
                "boundary": (None if data.get("boundary") is None
                             else np.asarray(data["boundary"], dtype=np.float64)),
                "extent": float(data.get("extent", 10.0)),
            }
        row = {k: np.asarray(data[k], dtype=self.dtype) for k in _PER_STEP}
        row["statuses"] = np.asarray(data["statuses"], dtype=np.int8)
        row["active"] = np.asarray(data["active"], dtype=bool)
        row["time"] = float(data.get("time", 0.0))
        row["selected"] = int(data.get("selected", -1))
        lines = data.get("orca_lines")
        row["orca_lines"] = (np.zeros((0, 4)) if lines is None
                             else np.asarray(lines, dtype=np.float64).reshape(-1, 4))
        if data.get("headings") is not None:
            row["headings"] = np.asarray(data["headings"], dtype=self.dtype)
        self._steps.append(row)

    def __len__(self) -> int:
        return len(self._steps)

    def to_log(self) -> EpisodeLog:
        """The recorded episode as an :class:`EpisodeLog` (nothing written)."""
        if not self._steps:
            raise ValueError("EpisodeRecorder.to_log(): no snapshot was added")
        arrays = {k: np.stack([r[k] for r in self._steps]) for k in _PER_STEP}
        arrays["statuses"] = np.stack([r["statuses"] for r in self._steps])
        arrays["active"] = np.stack([r["active"] for r in self._steps])
        arrays["times"] = np.array([r["time"] for r in self._steps], dtype=np.float64)
        arrays["selected"] = np.array([r["selected"] for r in self._steps], dtype=np.int64)
        counts = np.array([r["orca_lines"].shape[0] for r in self._steps], dtype=np.int64)
        arrays["orca_line_offsets"] = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        arrays["orca_lines"] = (np.concatenate([r["orca_lines"] for r in self._steps])
                                .astype(np.float64))
        if any("headings" in r for r in self._steps):
            n = arrays["positions"].shape[1]
            arrays["headings"] = np.stack([r.get("headings", np.full(n, np.nan, self.dtype))
                                           for r in self._steps])
        return EpisodeLog(meta=dict(self.meta), static=dict(self._static), arrays=arrays)

    def save(self, path: str | os.PathLike) -> str:
        """Write the log to ``path`` (``.npz``); returns the path."""
        return self.to_log().save(path)


@dataclass
class EpisodeLog:
    """One recorded episode (see the module docstring for the arrays).

    Attributes:
        meta: ``format``, ``config`` (dict), ``seed``, ``policy`` and any extra metadata.
        static: ``radii``, ``populations``, ``max_speeds``, ``obstacles`` (list of polygons),
            ``boundary`` (or ``None``), ``extent``.
        arrays: The per-step arrays.
    """

    meta: dict
    static: dict
    arrays: dict = field(default_factory=dict)

    @property
    def num_steps(self) -> int:
        """Steps taken (the log holds ``num_steps + 1`` states)."""
        return int(self.arrays["positions"].shape[0]) - 1

    @property
    def positions(self) -> np.ndarray:
        """``(T+1, n, 2)`` positions, metres."""
        return self.arrays["positions"]

    @property
    def seed(self) -> int | None:
        """The reset seed of the episode."""
        return self.meta.get("seed")

    def frame_data(self, t: int) -> dict:
        """The render-data dict of state ``t`` (``0 .. num_steps``)."""
        a, s = self.arrays, self.static
        data = {k: a[k][t] for k in _PER_STEP}
        data.update(radii=s["radii"], populations=s["populations"], obstacles=s["obstacles"],
                    boundary=s["boundary"], extent=s["extent"], statuses=a["statuses"][t],
                    active=a["active"][t], time=float(a["times"][t]), step=t)
        if s["max_speeds"].size:
            data["max_speeds"] = s["max_speeds"]
        if "headings" in a:
            data["headings"] = a["headings"][t]
        sel = int(a["selected"][t])
        if sel >= 0:
            off = a["orca_line_offsets"]
            data["selected"] = sel
            data["orca_lines"] = a["orca_lines"][off[t]:off[t + 1]]
        title = self.meta.get("title")
        if title:
            data["title"] = title
        return data

    def frames(self) -> Iterator[dict]:
        """Render-data dicts of every state, in order."""
        for t in range(self.num_steps + 1):
            yield self.frame_data(t)

    def save(self, path: str | os.PathLike) -> str:
        """Write a compressed ``.npz`` atomically (a temporary name, then a rename).

        Returns:
            The path written (``.npz`` is appended when missing).
        """
        path = os.fspath(path)
        if not path.endswith(".npz"):
            path += ".npz"
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        s = self.static
        polys = s["obstacles"]
        counts = np.array([len(p) for p in polys], dtype=np.int64)
        out = dict(self.arrays)
        out.update(
            meta=np.array(json.dumps(self.meta, sort_keys=True, default=_json_default)),
            radii=s["radii"], populations=s["populations"], max_speeds=s["max_speeds"],
            obstacle_points=(np.concatenate(polys) if polys else np.zeros((0, 2))),
            obstacle_offsets=np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
            boundary=(np.zeros((0, 2)) if s["boundary"] is None else s["boundary"]),
            extent=np.array(s["extent"]),
        )
        # The temporary name ends in .npz, so np.savez writes to it as given.
        with atomic_path(path, suffix=".npz") as tmp:
            np.savez_compressed(tmp, **out)
        return path

    @classmethod
    def load(cls, path: str | os.PathLike) -> EpisodeLog:
        """Read a log written by :meth:`save`; no pickles are loaded (``allow_pickle=False``).

        Everything is read and checked here (arrays, shapes, codes, metadata), so a log that
        loads also replays.

        Raises:
            FileNotFoundError: If ``path`` does not exist.
            ValueError: If ``path`` is not a readable episode log: not a zip file, truncated,
                corrupted (a CRC or decompression error), a member declaring more than
                :data:`orca_env.files.MAX_MEMBER_BYTES` (1 GiB, checked before it is
                inflated), an array missing or of the wrong
                shape, codes out of range, or metadata that is not the expected JSON object.
                The message names the file and what is wrong.
        """
        name = os.fspath(path)
        if not os.path.exists(name):
            raise FileNotFoundError(f"episode log {name!r} does not exist")
        if os.path.isdir(name):
            raise ValueError(f"episode log {name!r} is a folder, not an .npz file")
        try:
            with open(name, "rb") as fh:
                if fh.read(6) == b"\x93NUMPY":  # a bare .npy (np.load would return it)
                    raise _LogError("it is a single .npy array, not an .npz archive")
            # Each member's declared size and .npy header are checked against the cap before
            # it is inflated (a small file claiming gigabytes is refused unread); then it is
            # read, CRC-checked and decompressed.
            raw = read_npz(name, (*_KEYS, *_OPTIONAL), max_bytes=MAX_MEMBER_BYTES)
            missing = [k for k in _KEYS if k not in raw]
            if missing:
                raise _LogError(f"array {missing[0]!r} is missing (an episode log has "
                                f"{', '.join(_KEYS)})")
        except ArchiveError as exc:
            raise ValueError(f"episode log {name!r} is unreadable: {exc}") from None
        except _LogError as exc:
            raise ValueError(f"episode log {name!r} is unreadable: {exc}") from None
        except Exception as exc:  # noqa: BLE001
            # Truncated, bit-flipped or foreign files fail deep in zipfile and numpy with
            # BadZipFile, EOFError, KeyError, struct.error, zlib.error, ValueError, OSError,
            # SyntaxError or tokenize.TokenError (a flipped .npy header), MemoryError (a header
            # claiming a huge shape), ...: whatever it is, the file is unreadable.
            raise ValueError(f"episode log {name!r} is unreadable: not a valid .npz file, or "
                             f"truncated or corrupted ({type(exc).__name__}: {exc})") from None
        try:
            return cls._from_arrays(raw)
        except _LogError as exc:
            raise ValueError(f"episode log {name!r} is invalid: {exc}") from None

    @classmethod
    def _from_arrays(cls, z: dict) -> EpisodeLog:
        """Build and check a log from the arrays of its file; raises ``_LogError``."""
        meta_arr = z["meta"]
        if meta_arr.shape != () or meta_arr.dtype.kind != "U":
            raise _LogError(f"'meta' must be a JSON string, got a {meta_arr.dtype} array of "
                            f"shape {meta_arr.shape}")
        try:
            meta = json.loads(str(meta_arr))
        except (ValueError, RecursionError) as exc:  # RecursionError: absurdly deep nesting
            raise _LogError(f"'meta' is not valid JSON ({type(exc).__name__}: "
                            f"{str(exc)[:200]})") from None
        if not isinstance(meta, dict):
            raise _LogError(f"'meta' must be a JSON object, got {type(meta).__name__}")
        if meta.get("format") != LOG_FORMAT:
            raise _LogError(f"not an episode log of format {LOG_FORMAT!r} (found "
                            f"{meta.get('format')!r})")
        for key, kinds in (("seed", (int, type(None))), ("policy", (str,)),
                           ("title", (str, type(None))), ("config", (dict, type(None)))):
            if key in meta and (isinstance(meta[key], bool) or not isinstance(meta[key], kinds)):
                raise _LogError(f"meta {key!r} has the wrong type: {meta[key]!r}")
        fps = meta.get("render_fps")
        if fps is not None and not (_positive_number(fps) and
                                    _FPS_RANGE[0] <= fps <= _FPS_RANGE[1]):
            raise _LogError(f"meta 'render_fps' must be a finite number > 0, within "
                            f"{_FPS_RANGE[0]:g} .. {_FPS_RANGE[1]:g}, got {fps!r}")
        title = meta.get("title")
        if isinstance(title, str) and (len(title) > _MAX_TITLE or "\x00" in title):
            raise _LogError(f"meta 'title' must be at most {_MAX_TITLE} characters without NUL, "
                            f"got {len(title)} characters")

        pos = z["positions"]
        if pos.ndim != 3 or pos.shape[0] < 1 or pos.shape[2] != 2:
            raise _LogError(f"'positions' must have shape (T+1, n, 2), got {pos.shape}")
        t1, n = pos.shape[0], pos.shape[1]
        expect = {k: (t1, n, 2) for k in _PER_STEP}
        expect.update(statuses=(t1, n), active=(t1, n), times=(t1,), selected=(t1,),
                      orca_line_offsets=(t1 + 1,), radii=(n,), populations=(n,))
        for key, shape in expect.items():
            if z[key].shape != shape:
                raise _LogError(f"{key!r} has shape {z[key].shape}, expected {shape} for "
                                f"{t1} states of {n} agents")
        for key in (*_PER_STEP, "times", "radii", "max_speeds", "obstacle_points", "boundary",
                    "extent", "orca_lines"):
            if z[key].dtype.kind not in "fiu":
                raise _LogError(f"{key!r} must be numeric, got dtype {z[key].dtype}")
        for key in ("statuses", "populations", "selected", "orca_line_offsets",
                    "obstacle_offsets"):
            if z[key].dtype.kind not in "iu":
                raise _LogError(f"{key!r} must hold integers, got dtype {z[key].dtype}")
        if z["active"].dtype != np.bool_:
            raise _LogError(f"'active' must be boolean, got dtype {z['active'].dtype}")
        if not np.isin(z["populations"], [int(p) for p in Population]).all():
            raise _LogError(f"'populations' holds codes outside {[int(p) for p in Population]}")
        if not np.isin(z["statuses"], [int(s) for s in Status]).all():
            raise _LogError(f"'statuses' holds codes outside {[int(s) for s in Status]}")
        if z["max_speeds"].shape not in ((0,), (n,)):
            raise _LogError(f"'max_speeds' has shape {z['max_speeds'].shape}, expected (0,) "
                            f"or ({n},)")
        sel = z["selected"]
        if ((sel < -1) | (sel >= n)).any():
            raise _LogError(f"'selected' holds slots outside -1 .. {n - 1}")
        lines = z["orca_lines"]
        if lines.ndim != 2 or lines.shape[1] != 4:
            raise _LogError(f"'orca_lines' must have shape (L, 4), got {lines.shape}")
        _check_offsets("orca_line_offsets", z["orca_line_offsets"], lines.shape[0])
        pts, off = z["obstacle_points"], z["obstacle_offsets"]
        if pts.ndim != 2 or pts.shape[1] != 2:
            raise _LogError(f"'obstacle_points' must have shape (P, 2), got {pts.shape}")
        if off.ndim != 1 or off.size < 1:
            raise _LogError(f"'obstacle_offsets' must have shape (K+1,), got {off.shape}")
        _check_offsets("obstacle_offsets", off, pts.shape[0])
        boundary = z["boundary"]
        if boundary.ndim != 2 or boundary.shape[1] != 2:
            raise _LogError(f"'boundary' must have shape (k, 2), got {boundary.shape}")
        extent = z["extent"]
        if extent.shape != () or not _positive_number(float(extent)):
            raise _LogError(f"'extent' must be a number > 0, got {extent!r}")
        # Values, not only shapes: what loads must replay (a NaN position hung the renderer).
        for key, bound in (("positions", _MAX_COORD), ("goals", _MAX_COORD),
                           ("targets", _MAX_COORD), ("obstacle_points", _MAX_COORD),
                           ("boundary", _MAX_COORD), ("velocities", _MAX_SPEED),
                           ("pref_velocities", _MAX_SPEED), ("max_speeds", _MAX_SPEED),
                           ("extent", _MAX_COORD), ("orca_lines", _MAX_COORD)):
            a = z[key]
            if a.size and not (np.isfinite(a).all() and (np.abs(a) <= bound).all()):
                raise _LogError(f"{key!r} must hold finite values within +-{bound:g}")
        radii = z["radii"]
        if not (np.isfinite(radii).all() and (radii > 0).all() and (radii <= _MAX_LENGTH).all()):
            raise _LogError(f"'radii' must be finite and in (0, {_MAX_LENGTH:g}] m")
        times = z["times"]
        if not (np.isfinite(times).all() and (np.diff(times) >= 0).all()):
            raise _LogError("'times' must be finite and non-decreasing")
        if "headings" in z:
            hd = z["headings"]
            if hd.shape != (t1, n) or hd.dtype.kind != "f":
                raise _LogError(f"'headings' must be a float array of shape {(t1, n)}, got "
                                f"{hd.dtype} {hd.shape}")
            if (np.isinf(hd) | (np.abs(np.nan_to_num(hd)) > _MAX_ANGLE)).any():
                raise _LogError(f"'headings' must hold finite values within +-{_MAX_ANGLE:g} "
                                f"rad, or NaN for agents without a heading")
        if boundary.size and boundary.shape[0] < 3:
            raise _LogError(f"'boundary' must have 0 or at least 3 vertices, got "
                            f"{boundary.shape[0]}")
        if off.size > 1 and (np.diff(off) < 2).any():
            raise _LogError("every obstacle in 'obstacle_points' needs at least 2 vertices")
        static = {
            "radii": z["radii"], "populations": z["populations"],
            "max_speeds": z["max_speeds"],
            "obstacles": [pts[off[k]:off[k + 1]] for k in range(off.size - 1)],
            "boundary": boundary if boundary.size else None,
            "extent": float(extent),
        }
        keys = (*_PER_STEP, "statuses", "active", "times", "selected", "orca_lines",
                "orca_line_offsets", *(k for k in _OPTIONAL if k in z))
        return cls(meta=meta, static=static, arrays={k: z[k] for k in keys})


def load_log(path: str | os.PathLike) -> EpisodeLog:
    """Read an episode log (:meth:`EpisodeLog.load`; same errors)."""
    return EpisodeLog.load(path)


def replay(log: EpisodeLog | str | os.PathLike, *, video: str | os.PathLike | None = None,
           render_mode: str | None = None, fps: float | None = None, size: int = 720,
           trail_length: int = 12, on_frame: Any = None) -> str | None:
    """Render a recorded episode without re-running the policy or the simulator.

    Args:
        log: An :class:`EpisodeLog` or the path of one.
        video: Write an mp4 here (GIF when ffmpeg is unavailable or the name ends in ``.gif``);
            written to a temporary name and renamed when complete.
        render_mode: ``"human"`` (a window) or ``"rgb_array"``; default ``"human"`` without
            ``video``, ``"rgb_array"`` with it.
        fps: Frames per second, a finite number > 0; default: the log's ``render_fps`` (4, one
            step per frame at dt 0.25 is real time).
        size: Pixels of the frame's long side, an integer in 240 .. 8192.
        trail_length: Trail length in steps.
        on_frame: Optional ``on_frame(t, data, frame)`` called for every state (``frame`` is
            the RGB array, or ``None`` in ``human`` mode), e.g. to collect frames.

    Returns:
        The path of the video written, or ``None``.

    Raises:
        ValueError: On a bad ``fps``, ``size`` or ``render_mode``, or an unreadable log.
        ImportError: If the video extra (pygame-ce, imageio) is not installed.
    """
    if fps is not None and not _positive_number(fps):
        raise ValueError(f"fps must be a finite number > 0, got {fps!r}")
    check_size("size", size)
    if not isinstance(log, EpisodeLog):
        log = EpisodeLog.load(log)
    if fps is None:
        fps = float(log.meta.get("render_fps", 4))
    if render_mode is None:
        render_mode = "rgb_array" if video is not None else "human"
    if video is not None and render_mode != "rgb_array":
        raise ValueError("a video needs render_mode='rgb_array'")
    if video is not None:
        require_imageio()
    renderer = Renderer(render_mode, fps, size=size, trail_length=trail_length)
    writer = VideoWriter(video, fps) if video is not None else None
    ok = False
    try:
        for t, data in enumerate(log.frames()):
            frame = renderer.draw(data)
            if renderer.closed:
                break
            if writer is not None:
                writer.append(frame)
            if on_frame is not None:
                on_frame(t, data, frame)
        ok = True
    finally:
        renderer.close()
        if writer is not None:
            # A failed replay leaves no partial video behind.
            writer.close() if ok else writer.abort()
    return writer.path if writer is not None else None


def check_size(name: str, size: Any) -> int:
    """``size`` as an int if it is an integer in ``MIN_SIZE .. MAX_SIZE`` (pixels).

    Raises:
        ValueError: Naming ``name`` and the value otherwise.
    """
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) \
            or not MIN_SIZE <= size <= MAX_SIZE:
        raise ValueError(f"{name} must be an integer number of pixels in {MIN_SIZE} .. "
                         f"{MAX_SIZE}, got {size!r}")
    return int(size)


def _json_default(o: Any) -> Any:
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")
