"""``replay``: recorded pedestrians from an ETH/UCY text file, non-reactive to everyone.

File format (the public ETH and UCY annotations, as the Social-LSTM / Social-GAN releases
ship them): one observation per line, ``frame pedestrian_id x y`` (metres, world frame),
separated by whitespace or commas; blank lines and lines starting with ``#`` are skipped; extra
columns are ignored. Frame numbers need not be consecutive (ETH numbers its annotated frames
780, 790, ...): a track's time is ``(frame - first frame of the file) / frame_step / fps``,
where ``fps`` is the annotation rate (default 2.5, ETH/UCY's 0.4 s per annotated frame) and
``frame_step`` the frame-number increment between annotated frames (default: the smallest
increment in the file). The group key ``groups[i].replay`` is ``{file, fps, frame_step}``; a
relative ``file`` is looked up from the working directory, then among the shipped samples
(``orca_env/data``: ``replay_sample.txt``, made by ``examples/make_replay_sample.py``).

Validation (``ValueError`` naming the file, the line and the value): fewer than four columns,
a value that is not a finite number, frames that do not increase within a track, and a step
faster than 3 m/s between consecutive annotations of a track (faster than people walk or jog
in a crowd, so an annotation or unit error, e.g. pixels or centimetres).

Behaviour: the group's ``count`` slots take the file's tracks in order of pedestrian id (a
count above the number of tracks is an error). Track positions are interpolated linearly to the
env's time steps ``t = k dt`` (t = 0 is the file's first frame, the env's reset); a slot is
active, at its interpolated position, at exactly the steps that fall inside its track (the state
observed after a step is that of the recording at that time: one entering appears at its first
step's position, one leaving is gone on the first step after its track ends), and inactive
outside. Its preferred velocity is the step to its next position, and it avoids no
one (``avoids_agents=False``) with responsibility 0, so others avoid it fully. Its position is
set from the track before every step (``Behaviour.pre_step``), so it follows the track exactly
(ORCA's obstacle lines may hold it back within one step where the recording crosses a wall of
the scene; its ``max_speed`` caps the step too, so give the group one above the track's speed:
the validation bound, 3 m/s, always suffices). Replay slots are parked (no goal arrival, no
stall): the track decides when they leave.
"""

from __future__ import annotations

import io
import math
import numbers
import os

import numpy as np

from .base import Behaviour, register_behaviour

__all__ = ["MAX_WALK_SPEED", "DATA_DIR", "read_tracks", "resolve_file", "pre_step", "steer"]

#: Fastest step between two annotations of a track, m/s (faster: a data error).
MAX_WALK_SPEED = 3.0
#: The shipped samples' folder.
DATA_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data")
_KEYS = ("file", "fps", "frame_step")
#: Parsed files by (path, mtime, size, fps, frame_step): (ids, tracks) (see read_tracks).
_FILES: dict = {}
#: Resampled tracks of this process: index by key, flat positions and offsets.
_BANK: dict = {"index": {}, "tracks": [], "flat": np.zeros((0, 2)), "off": np.zeros(1, np.int64),
               "first": np.zeros(0, np.int64)}


def resolve_file(name: str) -> str:
    """The path of a replay file: as given if it exists, else a shipped sample's name.

    Raises:
        FileNotFoundError: Naming both places looked in.
    """
    if os.path.isfile(name):
        return os.path.abspath(name)
    shipped = os.path.join(DATA_DIR, name)
    if not os.path.isabs(name) and os.path.isfile(shipped):
        return shipped
    raise FileNotFoundError(f"replay file {name!r} not found (looked in the working directory "
                            f"and in the shipped samples, {DATA_DIR})")


def read_tracks(path: str, fps: float = 2.5, frame_step: float | None = None
                ) -> tuple[np.ndarray, list[np.ndarray]]:
    """The tracks of an ETH/UCY file, validated (see the module docstring).

    Args:
        path: The file.
        fps: Annotated frames per second.
        frame_step: Frame-number increment between annotated frames; None: the smallest one.

    Returns:
        (pedestrian ids (m,) float64 ascending, tracks: per id an (k, 3) float64 array of
        (time s, x m, y m) rows, time increasing).

    Raises:
        ValueError: Naming the file, the line and the value.
    """
    with open(path, encoding="utf-8") as fh:
        raw = fh.read().splitlines()
    keep = [i for i, text in enumerate(raw) if text.strip() and not text.lstrip().startswith("#")]
    if not keep:
        raise ValueError(f"replay file {path!r} holds no observation (frame, pedestrian id, x, "
                         f"y lines)")
    line_no = np.asarray(keep, dtype=np.int64) + 1
    try:  # numpy parses; a file it refuses is scanned line by line for the message
        data = np.loadtxt(io.StringIO("\n".join(raw[i] for i in keep).replace(",", " ")),
                          usecols=(0, 1, 2, 3), ndmin=2, comments=None, dtype=np.float64)
    except ValueError:
        data = None
    if data is None or data.shape[0] != len(keep) or not np.isfinite(data).all():
        _scan(path, raw, keep)
    frames = np.unique(data[:, 0])
    if frame_step is None:
        gaps = np.diff(frames)
        frame_step = float(gaps.min()) if gaps.size else 1.0
    order = np.argsort(data[:, 1], kind="stable")  # by id, each track in file order
    ids, first = np.unique(data[order, 1], return_index=True)
    tracks = []
    for pid, sel in zip(ids, np.split(order, first[1:]), strict=True):
        f = data[sel, 0]
        bad = np.flatnonzero(np.diff(f) <= 0)
        if bad.size:
            k = sel[bad[0] + 1]
            raise ValueError(f"replay file {path!r} line {line_no[k]}: frames of pedestrian "
                             f"{pid:g} must increase, got frame {data[k, 0]:g} after "
                             f"{data[sel[bad[0]], 0]:g}")
        t = (f - frames[0]) / frame_step / fps
        xy = data[sel, 2:4]
        if sel.size > 1:
            speed = np.linalg.norm(np.diff(xy, axis=0), axis=1) / np.diff(t)
            fast = np.flatnonzero(speed > MAX_WALK_SPEED)
            if fast.size:
                k = sel[fast[0] + 1]
                raise ValueError(f"replay file {path!r} line {line_no[k]}: pedestrian {pid:g} "
                                 f"jumps {speed[fast[0]]:.3g} m/s from the previous frame, "
                                 f"faster than a person walks ({MAX_WALK_SPEED} m/s)")
        tracks.append(np.column_stack([t, xy]))
    return ids, tracks


def _scan(path: str, raw: list[str], keep: list[int]) -> None:
    """Raise the ``ValueError`` of the first line that is no ``frame id x y`` of numbers."""
    for i in keep:
        text = raw[i].strip()
        parts = text.replace(",", " ").split()
        if len(parts) < 4:
            raise ValueError(f"replay file {path!r} line {i + 1}: needs 4 columns (frame, "
                             f"pedestrian id, x, y), got {len(parts)}: {text!r}")
        for col, p in zip(("frame", "pedestrian id", "x", "y"), parts[:4], strict=True):
            try:
                v = float(p)
            except ValueError:
                v = math.nan
            if not math.isfinite(v):
                raise ValueError(f"replay file {path!r} line {i + 1}: {col} must be a finite "
                                 f"number, got {p!r}")
    raise ValueError(f"replay file {path!r}: numpy cannot read it as frame, pedestrian id, x, y "
                     f"columns")


def _options(g, where: str) -> tuple[str, float, float | None]:
    """``groups[i].replay`` validated: (resolved path, fps, frame_step)."""
    opts = g.replay
    if not opts or "file" not in opts:
        raise ValueError(f"config key '{where}.replay' must give the trajectory file: "
                         f"{{file: path}}, got {opts!r}")
    for k in opts:
        if k not in _KEYS:
            raise ValueError(f"config key '{where}.replay.{k}' is unknown; valid keys: "
                             f"{list(_KEYS)}")
    if not isinstance(opts["file"], str):
        raise ValueError(f"config key '{where}.replay.file' must be a string, got "
                         f"{opts['file']!r}")
    nums = {}
    for k in ("fps", "frame_step"):
        v = opts.get(k)
        if v is None:
            continue
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(v) \
                or v <= 0:
            raise ValueError(f"config key '{where}.replay.{k}' must be a positive number, got "
                             f"{v!r}")
        nums[k] = float(v)
    return resolve_file(opts["file"]), nums.get("fps", 2.5), nums.get("frame_step")


def _tracks_of(path: str, fps: float, frame_step: float | None):
    st = os.stat(path)
    key = (path, st.st_mtime_ns, st.st_size, fps, frame_step)
    if key not in _FILES:
        _FILES[key] = read_tracks(path, fps, frame_step)
    return key, _FILES[key]


def _check(g, where: str) -> None:
    """Refuse a group without a valid file, or with more slots than the file has tracks."""
    if g.on_goal == "new_goal":
        raise ValueError(f"config key '{where}.on_goal': replay agents follow their tracks, "
                         f"which decide when they leave; new_goal does not apply")
    path, fps, step = _options(g, where)
    _, (ids, _) = _tracks_of(path, fps, step)
    if g.count > ids.size:
        raise ValueError(f"config key '{where}.count': replay file {path!r} holds {ids.size} "
                         f"tracks, got count={g.count}")


def _bank_index(key: tuple, track: np.ndarray, dt: float) -> int:
    """Index of ``track`` resampled at ``dt`` in this process's bank (added when new)."""
    bk = key + (dt,)
    idx = _BANK["index"].get(bk)
    if idx is None:
        t, xy = track[:, 0], track[:, 1:]
        k0 = math.ceil(t[0] / dt - 1e-9)
        k1 = math.floor(t[-1] / dt + 1e-9)
        ts = np.arange(k0, k1 + 1) * dt
        res = np.column_stack([np.interp(ts, t, xy[:, 0]), np.interp(ts, t, xy[:, 1])])
        _BANK["tracks"].append((k0, res))
        idx = _BANK["index"][bk] = len(_BANK["tracks"]) - 1
        _BANK["flat"] = np.concatenate([r for _, r in _BANK["tracks"]]).reshape(-1, 2)
        _BANK["off"] = np.concatenate([[0], np.cumsum([r.shape[0] for _, r in
                                                         _BANK["tracks"]])]).astype(np.int64)
        _BANK["first"] = np.array([k for k, _ in _BANK["tracks"]], dtype=np.int64)
    return idx


def _slot_tracks(wc) -> np.ndarray:
    """(n,) int64 bank index of each replay slot's track (-1 for other slots)."""
    out = np.full(wc.table.size, -1, dtype=np.int64)
    for g_idx, g in enumerate(wc.groups):
        if g.population != "replay":
            continue
        path, fps, step = _options(g, f"groups[{g_idx}]")
        key, (_, tracks) = _tracks_of(path, fps, step)
        slots = np.flatnonzero(wc.table.group == g_idx)
        for k, s in enumerate(slots):
            out[s] = _bank_index(key + (k,), tracks[k], float(wc.time_step))
    return out


def _at(view, slots: np.ndarray, k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions of ``slots`` at step ``k`` ((k,) int64) of their tracks, and whether inside."""
    idx = view.per_slot("replay.tracks", _slot_tracks)[slots]
    j = k - _BANK["first"][idx]
    off = _BANK["off"]
    n = off[idx + 1] - off[idx]
    inside = (j >= 0) & (j < n)
    return _BANK["flat"][off[idx] + np.clip(j, 0, n - 1)], inside


def _plan(view, slots: np.ndarray, reset: bool):
    """Where the step from step ``k`` (-1 at reset) starts, its velocity and who takes part.

    A slot is active during the step to ``k + 1`` when its track runs at ``k + 1`` (so that the
    observation after the step shows exactly the pedestrians of that time); one that enters
    then starts at its position of ``k + 1`` and stands still for the step, one already inside
    starts at its position of ``k`` and moves to that of ``k + 1``.
    """
    k = view.step_counts_of(slots) - (1 if reset else 0)
    now, in_now = _at(view, slots, k)
    nxt, in_next = _at(view, slots, k + 1)
    dt = view.time_steps[view.world_of(slots)][:, None]
    both = (in_now & in_next)[:, None]
    start = np.where(both, now, nxt)
    vel = np.where(both, (nxt - now) / dt, 0.0)
    return start, vel, in_next


def pre_step(view, slots: np.ndarray, reset: bool) -> None:
    """Put every replay slot where its track is; in the simulation while its track runs."""
    start, vel, active = _plan(view, slots, reset)
    view.place(slots, np.where(active[:, None], start, view.positions[slots]), active, vel)


def steer(view, slots: np.ndarray) -> np.ndarray:
    """The step to the next position of the track (0 on entering and on its last), m/s."""
    return _plan(view, slots, False)[1]


REPLAY = register_behaviour(Behaviour(
    name="replay", steer=steer, pre_step=pre_step, responsibility=0.0, avoids_agents=False,
    check=_check,
    doc="recorded pedestrians from an ETH/UCY file (groups[i].replay), entering and leaving "
        "with their tracks, avoided fully by the others and avoiding no one"))
