"""Trajectory plots of recorded episodes (matplotlib, imported only when a plot is drawn)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..codes import Population, Status

__all__ = ["plot_trajectories"]


def plot_trajectories(logs: Sequence[Any], path: str | os.PathLike, titles: Sequence[str] = ()
                      ) -> str:
    """Plot episode logs into a PNG, one panel per episode.

    Each panel shows the obstacles, the paths coloured by population, the starts (dots), the
    learned agents' goals (crosses) and where they collided (red x). Draws on a bare
    ``matplotlib.figure.Figure`` (no pyplot, no display, the global backend untouched); returns
    the path.
    """
    from matplotlib.figure import Figure  # noqa: PLC0415
    from matplotlib.patches import Polygon  # noqa: PLC0415

    from ..render import COLORS, fit_view  # noqa: PLC0415

    k = len(logs)
    cols = min(k, 3)
    rows = -(-k // cols)
    fig = Figure(figsize=(4.2 * cols, 4.2 * rows), dpi=100)
    for j, log in enumerate(logs):
        ax = fig.add_subplot(rows, cols, j + 1)
        s = log.static
        first = log.frame_data(0)
        x0, y0, x1, y1 = fit_view(first)
        if s["boundary"] is not None:
            ax.add_patch(Polygon(s["boundary"], closed=True, fill=False,
                                 ec=np.array(COLORS["obstacle"]) / 255, lw=1.5))
        for poly in s["obstacles"]:
            ax.add_patch(Polygon(poly, closed=True, fc=np.array(COLORS["obstacle"]) / 255,
                                 ec="none"))
        pos = log.positions.astype(np.float64)
        act = log.arrays["active"]
        for i in range(pos.shape[1]):
            pop = Population(int(s["populations"][i])).name.lower()
            col = np.array(COLORS[pop]) / 255
            alive = np.flatnonzero(act[:, i])
            if alive.size == 0:
                continue
            # Include the first inactive state: where the agent was when it left.
            last = min(int(alive[-1]) + 1, pos.shape[0] - 1)
            p = pos[: last + 1, i]
            learned = pop == "learned"
            ax.plot(p[:, 0], p[:, 1], color=col, lw=1.2 if learned else 0.6,
                    alpha=1.0 if learned else 0.6, zorder=3 if learned else 2)
            ax.plot(*p[0], "o", ms=3, color=col, zorder=3)
            if learned:
                ax.plot(*log.arrays["goals"][0, i], "x", ms=5, color=col, zorder=3)
                hit = log.arrays["statuses"][:, i] == Status.COLLIDED
                if hit.any():
                    t = int(np.argmax(hit))
                    ax.plot(*pos[t, i], "x", ms=8, mew=2, color="red", zorder=4)
        ax.set_xlim(x0, x1)
        ax.set_ylim(y0, y1)
        ax.set_aspect("equal")
        ax.tick_params(labelsize=7)
        ax.set_title(titles[j] if j < len(titles) else f"seed {log.seed}", fontsize=9)
    fig.tight_layout()
    path = os.fspath(path)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path)
    return path
