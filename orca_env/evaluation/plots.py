"""Trajectory plots of recorded episodes (matplotlib, imported only when a plot is drawn).

A figure has one panel per episode, in a grid of at most three columns (unused panels are
hidden), a title naming the policy and the scenario, axes in metres and one legend for all
panels: the paths coloured by population (learned blue, ORCA crowd grey, non-reactive purple),
starts (dots), the learned agents' goals (crosses), where a learned agent first collided (red x)
and how each learned agent ended (at goal: green disc, stalled: orange square, timed out: dark
grey square). matplotlib comes with the video extra: ``pip install "orca-env[video]"``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..codes import Population, Status
from ..files import atomic_path
from ..render import COLORS, LABELS, VIDEO_EXTRA, fit_view

__all__ = ["plot_trajectories", "trajectory_figure", "require_matplotlib"]

#: How a learned agent's path ends, by final status: (marker, colour key, label).
_ENDS = {Status.AT_GOAL: ("o", "at_goal", "ended at goal"),
         Status.DEADLOCKED: ("s", "deadlocked", "ended stalled"),
         Status.TIMED_OUT: ("s", "timed_out", "ended timed out")}


def require_matplotlib() -> Any:
    """Import and return matplotlib, or raise an ImportError saying what to install.

    Raises:
        ImportError: If matplotlib cannot be imported.
    """
    try:
        import matplotlib  # noqa: PLC0415
        from matplotlib.figure import Figure  # noqa: F401, PLC0415
    except ImportError as exc:
        raise ImportError(f"trajectory plots need matplotlib, which is not installed ({exc}): "
                          f"{VIDEO_EXTRA}") from exc
    return matplotlib


def _grid(k: int) -> tuple[int, int]:
    """``(rows, cols)`` for ``k`` panels: at most 3 columns, as square as possible."""
    if k <= 3:
        return 1, max(k, 1)
    cols = 2 if k == 4 else 3
    return -(-k // cols), cols


def trajectory_figure(logs: Sequence[Any], titles: Sequence[str] = (),
                      title: str | None = None) -> Any:
    """A ``matplotlib.figure.Figure`` of episode logs, one panel per episode.

    Draws on a bare ``Figure`` (no pyplot, no display, the global backend untouched).

    Args:
        logs: :class:`~orca_env.evaluation.EpisodeLog` objects.
        titles: Panel titles (default ``seed <seed>``).
        title: The figure's title (default: the first log's policy and scenario).

    Returns:
        The figure.

    Raises:
        ValueError: If ``logs`` is empty.
        ImportError: If matplotlib is not installed.
    """
    if not logs:
        raise ValueError("trajectory_figure needs at least one episode log, got none")
    require_matplotlib()
    from matplotlib.figure import Figure  # noqa: PLC0415
    from matplotlib.lines import Line2D  # noqa: PLC0415
    from matplotlib.patches import Polygon  # noqa: PLC0415

    def rgb(key: str) -> np.ndarray:
        return np.array(COLORS[key]) / 255

    k = len(logs)
    rows, cols = _grid(k)
    # Panels shaped like the scene, so a wide corridor does not float in white space.
    bx0, by0, bx1, by1 = fit_view(logs[0].frame_data(0))
    aspect = min(max((by1 - by0) / max(bx1 - bx0, 1e-9), 0.25), 2.0)
    panel_w = 4.2 if aspect <= 1 else 4.2 / aspect
    fig = Figure(figsize=(panel_w * cols, (panel_w * aspect + 0.55) * rows + 1.1), dpi=100,
                 layout="constrained")
    axes = fig.subplots(rows, cols, squeeze=False).ravel()
    seen_pops: set[str] = set()
    seen_ends: set[Status] = set()
    any_hit = False
    for j, log in enumerate(logs):
        ax = axes[j]
        s = log.static
        first = log.frame_data(0)
        x0, y0, x1, y1 = fit_view(first)
        if s["boundary"] is not None:
            ax.add_patch(Polygon(s["boundary"], closed=True, fill=False, ec=rgb("obstacle"),
                                 lw=1.5))
        for poly in s["obstacles"]:
            ax.add_patch(Polygon(poly, closed=True, fc=rgb("obstacle"), ec="none"))
        pos = log.positions.astype(np.float64)
        act = log.arrays["active"]
        statuses = log.arrays["statuses"]
        for i in range(pos.shape[1]):
            pop = Population(int(s["populations"][i])).name.lower()
            col = rgb(pop)
            alive = np.flatnonzero(act[:, i])
            if alive.size == 0:
                continue
            seen_pops.add(pop)
            # Include the first inactive state: where the agent was when it left.
            last = min(int(alive[-1]) + 1, pos.shape[0] - 1)
            p = pos[: last + 1, i]
            learned = pop == "learned"
            ax.plot(p[:, 0], p[:, 1], color=col, lw=1.2 if learned else 0.6,
                    alpha=1.0 if learned else 0.6, zorder=3 if learned else 2)
            ax.plot(*p[0], "o", ms=3, color=col, zorder=3)
            if learned:
                ax.plot(*log.arrays["goals"][0, i], "x", ms=5, color=col, zorder=3)
                hit = statuses[:, i] == Status.COLLIDED
                if hit.any():
                    t = int(np.argmax(hit))
                    ax.plot(*pos[t, i], "x", ms=8, mew=2, color=rgb("collided"), zorder=5)
                    any_hit = True
                end = Status(int(statuses[-1, i]))
                if end in _ENDS:
                    marker, ckey, _ = _ENDS[end]
                    ax.plot(*p[-1], marker, ms=5, mfc=rgb(ckey), mec="white", mew=0.6,
                            zorder=4)
                    seen_ends.add(end)
        ax.set_xlim(x0, x1)
        ax.set_ylim(y0, y1)
        ax.set_aspect("equal")
        ax.tick_params(labelsize=7)
        ax.set_xlabel("x (m)", fontsize=8)
        ax.set_ylabel("y (m)", fontsize=8)
        ax.set_title(titles[j] if j < len(titles) else _panel_title(log), fontsize=9)
    for ax in axes[k:]:
        ax.set_visible(False)

    handles = [Line2D([], [], color=rgb(p), lw=1.5, label=f"{LABELS[p]} path")
               for p in ("learned", "orca", "non_reactive") if p in seen_pops]
    handles.append(Line2D([], [], ls="", marker="o", ms=4, color="0.3", label="start"))
    if "learned" in seen_pops:
        handles.append(Line2D([], [], ls="", marker="x", ms=6, color=rgb("learned"),
                              label="goal (learned)"))
    for end, (marker, ckey, label) in _ENDS.items():
        if end in seen_ends:
            handles.append(Line2D([], [], ls="", marker=marker, ms=6, mfc=rgb(ckey),
                                  mec="white", label=label))
    if any_hit:
        handles.append(Line2D([], [], ls="", marker="x", ms=8, mew=2, color=rgb("collided"),
                              label="first collision"))
    legend = fig.legend(handles=handles, loc="outside lower center",
                        ncol=min(len(handles), 4), fontsize=8, frameon=False)
    if title is None:
        scenario = (logs[0].meta.get("config") or {}).get("scenario", "?")
        title = f"policy {logs[0].meta.get('policy') or '?'} on {scenario}"
    sup = fig.suptitle(title, fontsize=11)
    # One narrow panel is narrower than the title or the legend: widen the figure to fit them
    # (the panels keep their shape; constrained layout centres them).
    from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: PLC0415

    renderer = FigureCanvasAgg(fig).get_renderer()
    need = max(a.get_window_extent(renderer).width for a in (sup, legend)) / fig.dpi + 0.3
    width, height = fig.get_size_inches()
    if need > width:
        fig.set_size_inches(need, height)
    return fig


def _panel_title(log: Any) -> str:
    """``seed S: a/n at goal, c collided`` from the learned agents' final statuses."""
    learned = np.asarray(log.static["populations"]) == Population.LEARNED
    st = log.arrays["statuses"][:, learned]
    n = int(learned.sum())
    at_goal = int((st[-1] == Status.AT_GOAL).sum())
    hit = int((st == Status.COLLIDED).any(axis=0).sum())
    text = f"seed {log.seed}: {at_goal}/{n} at goal"
    return text + (f", {hit} collided" if hit else "")


def plot_trajectories(logs: Sequence[Any], path: str | os.PathLike, titles: Sequence[str] = (),
                      title: str | None = None) -> str:
    """Plot episode logs into a PNG (see :func:`trajectory_figure`), written atomically.

    Args:
        logs: The episode logs, one panel each.
        path: The PNG to write.
        titles: Panel titles (default ``seed <seed>``).
        title: The figure's title (default: the first log's policy and scenario).

    Returns:
        The path.

    Raises:
        ImportError: If matplotlib is not installed.
    """
    fig = trajectory_figure(logs, titles, title)
    path = os.fspath(path)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png")
    return path
