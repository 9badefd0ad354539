"""CrowdNav's benchmark reproduced: its ORCA robot on its test cases (issue 11).

CrowdNav's published figures for its ORCA robot on its 500 test cases (measured with CrowdNav
itself): invisible robot, circle crossing: success 0.426 [0.383, 0.470], collision 0.568,
time-out 0.006, time to goal 10.86 s; square crossing: 0.738 [0.698, 0.775], 0.258, 0.004,
9.12 s; visible robot: success 1.000 on both, 10.02 s and 8.90 s. The policy here is the
evaluation's ``orca`` (``orca-env eval --policy orca``), episode k on seed 10000 + k, which
is CrowdNav's test case k.
"""

import math

import numpy as np

import orca_env
from orca_env.baselines import OrcaPolicy
from orca_env.evaluation.suite import eval_seeds, run_episode


def rates(config, n, visible=False):
    """Mean success, collision, time-out and time to goal over the first ``n`` test cases."""
    kw = {}
    if visible:
        cfg = orca_env.parallel_env(config).config
        groups = [dict(g.__dict__) for g in cfg.groups]
        groups[0]["visible_to"] = None
        kw["groups"] = groups
    env = orca_env.parallel_env(config, **kw)
    policy = OrcaPolicy()
    rows = [run_episode(env, policy, seed) for seed in eval_seeds(n)]
    ttg = [r["time_to_goal"] for r in rows if r["time_to_goal"] is not None]
    mean = {k: float(np.mean([r[k] for r in rows]))
            for k in ("success_rate", "collision_rate", "timeout_rate")}
    return (mean["success_rate"], mean["collision_rate"], mean["timeout_rate"],
            float(np.mean(ttg)))


def widened(p, n, z=3.29):
    """CrowdNav's rate ``p`` +- ``z`` binomial standard deviations of a sample of ``n`` cases
    (3.29: a 99.9% band, so that the first n cases, a fixed sample, fit it by a wide margin)."""
    half = z * math.sqrt(p * (1 - p) / n)
    return p - half, p + half


def test_invisible_circle_first_100_cases_within_widened_interval():
    success, collision, timeout, ttg = rates("crowdnav_circle_invisible", 100)
    lo, hi = widened(0.426, 100)
    assert lo <= success <= hi
    lo, hi = widened(0.568, 100)
    assert lo <= collision <= hi
    assert abs(ttg - 10.86) < 0.8


def test_invisible_circle_500_cases_within_crowdnavs_intervals():
    success, collision, timeout, ttg = rates("crowdnav_circle_invisible", 500)
    assert 0.383 <= success <= 0.470  # CrowdNav's 95% interval
    assert 0.524 <= collision <= 0.612  # 0.568 +- its 95% half-width
    assert timeout <= 0.02
    assert abs(ttg - 10.86) < 0.15


def test_invisible_square_first_100_cases_within_widened_interval():
    success, collision, _, ttg = rates("crowdnav_square_invisible", 100)
    lo, hi = widened(0.738, 100)
    assert lo <= success <= hi
    lo, hi = widened(0.258, 100)
    assert lo <= collision <= hi
    assert abs(ttg - 9.12) < 0.6


def test_visible_robot_always_succeeds():
    for config, expect in (("crowdnav_circle_invisible", 10.02),
                           ("crowdnav_square_invisible", 8.90)):
        success, collision, timeout, ttg = rates(config, 100, visible=True)
        assert success == 1.0 and collision == 0.0 and timeout == 0.0
        assert abs(ttg - expect) < 0.3
