"""RVO2's Circle example on this core: ``python -m orca_env.core.demo [--agents N]``.

Agents start evenly spaced on a circle and head for the antipode, with RVO2's parameters (time
step 0.25; neighbor_dist 15, max_neighbors 10, time_horizon 10, time_horizon_obst 10, radius 1.5,
max_speed 2; preferred velocity = goal vector, normalised when longer than 1). Prints progress,
the step time, and the closest approach between agents.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from .simulator import Simulator


def circle_simulator(num_agents=250, circle_radius=None):
    """RVO2's Circle scenario.

    Args:
        num_agents: agents on the circle.
        circle_radius: metres; None keeps Circle-250's spacing (200 m for 250 agents).

    Returns:
        (simulator, goals (num_agents, 2)).
    """
    if circle_radius is None:
        circle_radius = 200.0 * num_agents / 250.0
    sim = Simulator(0.25, 15.0, 10, 10.0, 10.0, 1.5, 2.0)
    angles = np.arange(num_agents) * 2.0 * np.pi / num_agents
    positions = circle_radius * np.stack([np.cos(angles), np.sin(angles)], axis=1)
    sim.add_agents(positions)
    return sim, -positions


def goal_velocities(positions, goals):
    """RVO2's example preferred velocity: the goal vector, normalised when longer than 1."""
    d = goals - positions
    norm = np.linalg.norm(d, axis=1, keepdims=True)
    return np.where(norm > 1.0, d / np.maximum(norm, 1e-300), d)


def min_separation(positions, radii):
    """Smallest (distance - combined radius) over all pairs, by brute force in chunks."""
    best = np.inf
    for lo in range(0, positions.shape[0], 512):
        d = np.linalg.norm(positions[lo : lo + 512, None] - positions[None], axis=2)
        d -= radii[lo : lo + 512, None] + radii[None]
        idx = np.arange(lo, min(lo + 512, positions.shape[0]))
        d[idx - lo, idx] = np.inf
        best = min(best, float(d.min()))
    return best


def main(argv=None):
    """Run the demo; returns 0 when every agent reached its goal."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=250, help="number of agents (default 250)")
    parser.add_argument("--max-steps", type=int, default=4000, help="step limit (default 4000)")
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    sim, goals = circle_simulator(args.agents)
    radius_sq = sim.radii**2
    step_times = []
    closest = np.inf
    for step in range(1, args.max_steps + 1):
        sim.set_pref_velocities(goal_velocities(sim.positions, goals))
        t = time.perf_counter()
        sim.step()
        step_times.append(time.perf_counter() - t)
        if step == 1:
            print(f"first step (includes JIT or cache load): {step_times[0] * 1e3:.1f} ms")
        if step % 100 == 0:
            closest = min(closest, min_separation(sim.positions, sim.radii))
        remaining = int(np.sum(np.sum((sim.positions - goals) ** 2, axis=1) > radius_sq))
        if step % 200 == 0 or remaining == 0:
            print(
                f"step {step:5d}  t={sim.global_time:7.2f} s  agents not at goal: {remaining:4d}  "
                f"LP3 this step: {int(sim.used_lp3.sum())}"
            )
        if remaining == 0:
            break
    steady = np.array(step_times[1:]) if len(step_times) > 1 else np.array(step_times)
    print(
        f"{args.agents} agents, {len(step_times)} steps, {time.perf_counter() - t0:.2f} s in all; "
        f"{steady.mean() * 1e3:.3f} ms per step ({steady.mean() / args.agents * 1e6:.2f} us per "
        f"agent); closest approach (sampled every 100 steps): {closest:+.3f} m"
    )
    return 0 if remaining == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
