"""Social-force crowds in the door scenes: how many humans pass the door, how many stay stalled.

For each door config (bottleneck_sf, doorway_sf, and the ORCA-crowd bottleneck and doorway for
comparison) and each social-force variant, runs episodes of 60 s (240 steps of 0.25 s) on seeds
10000.. and counts the crowd humans (12 per episode) that reach the other room: a human has
passed once its centre is more than 0.5 m past the wall's middle on the far side, or it has
left the simulation at its goal (which is in the far room). ``stalled``: not passed and slower
than 0.1 m/s at the end. Two settings of the 4 learners:

* ``crowd``: the learners stand still and are invisible (``visible_to: []``), so the crowd
  walks alone for the full 60 s: the model's own flow through the door;
* ``robots``: the learners are ORCA robots (``env.heuristic_actions()``) that park at their
  goals (``on_goal: stay``) and continue after collisions; the episode ends when they have all
  arrived, so ``passed`` counts the humans through by then.

Run from the repository root::

    python benchmarks/door_flow.py                 # every variant, 10 episodes each
    python benchmarks/door_flow.py --episodes 3 --variants config,pysocialforce

Prints one line per config, setting and variant: passed / humans, the fraction not passed,
the stalled ones and the mean episode length; docs/humans.md ("Doors") has the table.
"""

from __future__ import annotations

import argparse
import os

import numpy as np
import yaml

import orca_env

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: Variants of the crowd group's ``social_force`` key (``config``: the config's own).
HFV = {"model": "helbing_farkas_vicsek"}
VARIANTS = {
    "config": None,
    "pysocialforce": {"model": "pysocialforce"},
    "pysocialforce_r0.05": {"model": "pysocialforce", "r": 0.05},
    "pysocialforce_fov0": {"model": "pysocialforce", "fov_factor": 0.0},
    "pysocialforce+contact": {"model": "pysocialforce", "k": 1.2e5, "kappa": 2.4e5,
                              "substeps": 10},
    "hfv": HFV,
    "hfv_fov0.5": {**HFV, "fov_factor": 0.5},
    "hfv_walls+moussaid": {**HFV, "A": 0.0, "social_factor": 5.1},
    "hfv_walls+moussaid_nocontact": {**HFV, "A": 0.0, "social_factor": 5.1, "k": 0.0,
                                     "kappa": 0.0},
    "hfv_walls+moussaid_5sub": {**HFV, "A": 0.0, "social_factor": 5.1, "substeps": 5},
    "hfv_walls+moussaid_20sub": {**HFV, "A": 0.0, "social_factor": 5.1, "substeps": 20},
}
CONFIGS = ("bottleneck_sf", "doorway_sf")
STEPS = 240


def make(config: str, social_force: dict | None, crowd_only: bool):
    """The config with the variant's social_force and the setting's learners."""
    with open(os.path.join(ROOT, "configs", f"{config}.yaml")) as f:
        cfg = yaml.safe_load(f)
    cfg.update(max_steps=STEPS, on_collision="continue")
    if crowd_only:
        cfg["groups"][0]["visible_to"] = []
        cfg["stall"] = {"end_episode": False}
    else:
        cfg["groups"][0]["on_goal"] = "stay"
    if social_force is not None:
        cfg["groups"][1]["social_force"] = social_force
    return orca_env.parallel_env(cfg)


def run(config: str, social_force: dict | None, crowd_only: bool, episodes: int) -> dict:
    """Humans passed, stalled and the episode lengths over ``episodes`` episodes."""
    passed = stalled = total = 0
    lengths = []
    for e in range(episodes):
        env = make(config, social_force, crowd_only)
        env.reset(seed=10000 + e)
        sim = env.sim
        crowd = np.arange(env.sim.positions.shape[0])[4:]
        side = np.sign(sim.positions[crowd, 0])
        done = np.zeros(crowd.size, dtype=bool)
        t = 0
        while env.agents and t < STEPS:
            act = ({a: np.zeros(2, dtype=np.float32) for a in env.agents} if crowd_only
                   else env.heuristic_actions())
            env.step(act)
            p, live = sim.positions[crowd], sim.active[crowd]
            done |= ~live | ((np.sign(p[:, 0]) != side) & (np.abs(p[:, 0]) > 0.5))
            t += 1
        lengths.append(t)
        speed = np.linalg.norm(sim.velocities[crowd], axis=1)
        passed += int(done.sum())
        stalled += int((~done & (speed < 0.1)).sum())
        total += crowd.size
    return dict(passed=passed, total=total, not_passed=1.0 - passed / total, stalled=stalled,
                seconds=0.25 * float(np.mean(lengths)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, default=10)
    ap.add_argument("--variants", default=",".join(VARIANTS),
                    help=f"comma-separated, of {', '.join(VARIANTS)}")
    ap.add_argument("--configs", default=",".join(CONFIGS + ("bottleneck", "doorway")))
    args = ap.parse_args()
    names = args.variants.split(",")
    for n in names:
        if n not in VARIANTS:
            raise SystemExit(f"--variants: unknown variant {n!r}; known: {', '.join(VARIANTS)}")
    print("config          setting  variant                        passed   not passed  "
          "stalled  mean episode (s)")
    for config in args.configs.split(","):
        orca = config not in CONFIGS  # an ORCA crowd: the config only
        for crowd_only in (True, False):
            for n in (["config"] if orca else names):
                r = run(config, VARIANTS[n], crowd_only, args.episodes)
                print(f"{config:15s} {'crowd' if crowd_only else 'robots':8s} "
                      f"{'(ORCA crowd)' if orca else n:30s} {r['passed']:3d}/{r['total']:<4d} "
                      f"{r['not_passed']:10.3f}  {r['stalled']:7d}  {r['seconds']:6.1f}",
                      flush=True)


if __name__ == "__main__":
    main()
