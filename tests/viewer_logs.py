"""Episode logs for the HTML viewer's tests: a synthetic one with every kind of mark, and
helpers to read the data a page embeds."""

import json
import re

import numpy as np

from orca_env.codes import Population, Status
from orca_env.evaluation import EpisodeRecorder

#: Slots of :func:`synthetic_log` and what they show from frame ``LEFT`` on.
ROBOTS = (0, 1)  # learned, with headings
AT_GOAL_RING = 2  # learned, active, status at_goal (a ring)
FADED = 3  # learned, left at its goal: a faded disc
COLLIDED_LEFT = 4  # crowd, left collided: a red cross
LEFT = 5  # the frame from which slots 2-4 have these statuses


def synthetic_log(frames=601, n=20, seed=0, still=False, headings=True):
    """A random walk of ``n`` agents in a walled 20 m square with a central block.

    Slots 0-3 are learned, the rest ORCA crowd; slots 0 and 1 have headings. With ``still``
    every velocity is zero (no arrows: pixel checks see the discs alone) and the agents sit on
    a grid, apart from each other, from the block and from the goals.
    """
    rng = np.random.default_rng(seed)
    rec = EpisodeRecorder({"scenario": "synthetic"}, seed, "walk",
                          extra={"title": "policy walk   scenario synthetic   seed 0"})
    if still:
        g = np.array([(x, y) for y in (-6.0, -3.0, 3.0, 6.0) for x in (-7.5, -4.5, 4.5, 7.5)]
                     + [(-7.5, 0.0), (7.5, 0.0), (-4.5, 0.0), (4.5, 0.0)])
        pos = g[:n].astype(np.float64)
        goals = pos + 1.3  # clear of every disc
    else:
        pos = rng.uniform(-8, 8, (n, 2))
        goals = rng.uniform(-8, 8, (n, 2))
    pops = np.array([Population.LEARNED] * 4 + [Population.ORCA] * (n - 4))
    hd = rng.uniform(-np.pi, np.pi, n)
    for t in range(frames):
        vel = np.zeros((n, 2)) if still else rng.normal(0, 0.6, (n, 2))
        pos = np.clip(pos + 0.25 * vel, -9.5, 9.5)
        statuses = np.zeros(n, dtype=np.int64)
        active = np.ones(n, dtype=bool)
        if t >= LEFT:
            statuses[[AT_GOAL_RING, FADED, COLLIDED_LEFT]] = (Status.AT_GOAL, Status.AT_GOAL,
                                                              Status.COLLIDED)
            active[[FADED, COLLIDED_LEFT]] = False
        if t == frames // 2:  # a new goal half way
            goals = goals.copy()
            goals[0] = (1.5, 8.0)
        data = {"positions": pos, "velocities": vel, "pref_velocities": vel, "goals": goals,
                "targets": goals, "radii": np.full(n, 0.3), "populations": pops,
                "statuses": statuses, "active": active, "time": 0.25 * t,
                "obstacles": [np.array([[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]])],
                "boundary": np.array([[-10.0, -10.0], [10.0, -10.0], [10.0, 10.0],
                                      [-10.0, 10.0]])}
        if headings:
            hd = hd + (0.0 if still else 1.0) * rng.normal(0, 0.1, n)
            data["headings"] = np.where(np.isin(np.arange(n), ROBOTS), hd, np.nan)
        rec.add(data)
    return rec.to_log()


def page_data(html):
    """The JSON a page embeds (``<script type="application/json" id="orca-data">``)."""
    m = re.search(r'<script type="application/json" id="orca-data">(.*?)</script>', html,
                  flags=re.S)
    assert m, "no embedded data"
    return json.loads(m.group(1))
