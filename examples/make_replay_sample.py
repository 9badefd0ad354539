"""Make ``orca_env/data/replay_sample.txt``, the shipped replay sample (ETH/UCY text format).

A seeded simulation, not recorded people: 10 social-force humans cross CrowdNav's circle
(radius 4 m) for 60 s, each with a new goal (across the circle, +-0.6 rad from the antipode)
on coming within 0.5 m of its goal, stepped at 0.4 s (the ETH/UCY annotation rate, 2.5 fps).
Each leg of a human between two goals is one pedestrian of the file, so pedestrians enter
and leave during the recording as in the datasets. Frames are numbered as in ETH (10 frame
numbers per annotated frame: 0, 10, 20, ...), positions in metres with 3 decimals,
tab-separated. Run from the repository's root::

    python examples/make_replay_sample.py            # writes orca_env/data/replay_sample.txt
    python examples/make_replay_sample.py out.txt    # elsewhere

The file is the same on every run (seed 2026); ``tests/env/test_replay.py`` checks that the
shipped one still is what this script writes.
"""

from __future__ import annotations

import os
import sys

import numpy as np

import orca_env

SEED = 2026
STEPS = 150  # 60 s at 0.4 s
OUT = os.path.join(os.path.dirname(os.path.abspath(orca_env.__file__)), "data",
                   "replay_sample.txt")


def simulate() -> list[tuple[int, int, float, float]]:
    """``(frame, pedestrian id, x, y)`` rows of the recording, in frame order."""
    env = orca_env.parallel_env(
        scenario="crowdnav_circle_v0", time_step=0.4, max_steps=STEPS + 1,
        on_collision="continue", stall={"end_episode": False},
        groups=[{"name": "robot", "population": "learned", "count": 1, "visible_to": []},
                {"name": "humans", "population": "social_force", "count": 10,
                 "on_goal": "stay", "max_speed": 1.3, "time_horizon_obst": 0.4}])
    env.reset(seed=SEED)
    rng = np.random.default_rng(SEED)
    batch = env._batch
    humans = np.arange(1, 11)
    ids = np.arange(1, 11)
    next_id = 11
    rows = []
    for k in range(STEPS):
        pos = batch.positions[humans]
        rows += [(10 * k, int(i), float(x), float(y)) for i, (x, y) in zip(ids, pos, strict=True)]
        env.step({"agent_0": np.zeros(2, dtype=np.float32)})
        pos = batch.positions[humans]
        done = np.flatnonzero(np.linalg.norm(pos - batch.goals[humans], axis=1) < 0.5)
        if done.size:  # a new leg, across the circle: a new pedestrian
            ang = np.arctan2(pos[done, 1], pos[done, 0]) + np.pi + rng.uniform(-0.6, 0.6,
                                                                             done.size)
            batch.set_goals(0, humans[done], 4.0 * np.column_stack([np.cos(ang), np.sin(ang)]))
            ids[done] = np.arange(next_id, next_id + done.size)
            next_id += done.size
    return rows


def write(path: str) -> None:
    """Write the sample to ``path``."""
    rows = sorted(simulate(), key=lambda r: (r[0], r[1]))
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("# orca-env replay sample: a seeded social-force simulation (not recorded "
                 "people), made by examples/make_replay_sample.py\n")
        fh.write("# frame\tpedestrian\tx (m)\ty (m); 2.5 annotated frames per second, 10 frame "
                 "numbers apart\n")
        for f, i, x, y in rows:
            fh.write(f"{f}\t{i}\t{x:.3f}\t{y:.3f}\n")


if __name__ == "__main__":
    write(sys.argv[1] if len(sys.argv) > 1 else OUT)
