"""Episode logs: contents, size, and a replay that reproduces the recorded episode."""

import os

import numpy as np

from orca_env import OrcaEnv
from orca_env.cli import main
from orca_env.evaluation import EpisodeRecorder, load_log, replay, snapshot
from orca_env.render import STATUSES, Renderer

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CROWDNAV = os.path.join(ROOT, "configs", "crowdnav_circle.yaml")
RANDOM_OBST = os.path.join(ROOT, "configs", "random_obstacles.yaml")


def _record(config, seed, dtype, max_steps=None, debug_agent=None):
    """Run ORCA, keep the env's own positions and live frames next to the recorder."""
    env = OrcaEnv(config, **({"max_steps": max_steps} if max_steps else {}))
    env.reset(seed=seed)
    rec = EpisodeRecorder(env.config.to_dict(), seed, "orca", dtype=dtype)
    live = Renderer("rgb_array", size=240)
    truth_pos, truth_pref, frames = [], [], []

    def keep(step):
        data = snapshot(env, step, debug_agent)
        rec.add(data)
        truth_pos.append(env.sim.positions.copy())
        truth_pref.append(env.sim.pref_velocities.copy())
        frames.append(live.draw(data))

    keep(0)
    step = 0
    while env.agents:
        env.step(env.heuristic_actions())
        step += 1
        keep(step)
    return env, rec, np.array(truth_pos), np.array(truth_pref), frames


def test_log_contents_and_replay_reproduce_the_episode(tmp_path):
    env, rec, pos, pref, live_frames = _record(RANDOM_OBST, 10_000, np.float64, max_steps=40,
                                               debug_agent=0)
    path = rec.save(tmp_path / "ep")
    assert path.endswith(".npz")
    log = load_log(path)
    t1, n = pos.shape[0], pos.shape[1]
    assert log.num_steps == t1 - 1 and log.seed == 10_000 and log.meta["policy"] == "orca"
    assert log.meta["config"] == env.config.to_dict()
    for key in ("positions", "velocities", "pref_velocities", "goals", "targets"):
        assert log.arrays[key].shape == (t1, n, 2)
    assert log.arrays["statuses"].shape == (t1, n) and log.arrays["active"].shape == (t1, n)
    np.testing.assert_array_equal(log.arrays["pref_velocities"], pref)
    assert len(log.static["obstacles"]) == len(env.world.obstacles)
    # Replay draws the recorded positions, bit for bit, and the same frames as live.
    seen_pos, seen_frames = [], []
    replay(path, render_mode="rgb_array", size=240,
           on_frame=lambda t, d, f: (seen_pos.append(d["positions"]), seen_frames.append(f)))
    np.testing.assert_array_equal(np.array(seen_pos), pos)
    assert len(seen_frames) == len(live_frames)
    for a, b in zip(seen_frames, live_frames, strict=True):
        np.testing.assert_array_equal(a, b)


def test_compact_float32_log_and_statuses(tmp_path):
    env, rec, pos, _, _ = _record(CROWDNAV, 10_001, np.float32)
    log = load_log(rec.save(tmp_path / "ep.npz"))
    assert log.positions.dtype == np.float32
    np.testing.assert_allclose(log.positions, pos, atol=1e-5)
    # The robot (slot 0) ends at its goal; the humans stay at theirs.
    assert STATUSES[log.arrays["statuses"][-1, 0]] == "at_goal"
    assert not log.arrays["active"][-1, 0]
    humans = log.arrays["statuses"][:, 1:]
    assert (humans == STATUSES.index("at_goal")).any()
    assert os.path.getsize(tmp_path / "ep.npz") < 60_000


def test_replay_cli_writes_a_video(tmp_path):
    _, rec, pos, _, _ = _record(CROWDNAV, 10_002, np.float32, max_steps=12)
    path = rec.save(tmp_path / "ep.npz")
    assert main(["replay", path, "--video", str(tmp_path / "ep.mp4"), "--size", "240"]) == 0
    import imageio.v2 as iio

    reader = iio.get_reader(tmp_path / "ep.mp4")
    assert sum(1 for _ in reader.iter_data()) == pos.shape[0]
    reader.close()


def test_orca_env_console_script_entry(tmp_path, capsys):
    assert main(["eval", CROWDNAV, "--episodes", "1", "--quiet", "--print-hash"]) == 0
    digest = capsys.readouterr().out.strip()
    assert len(digest) == 64


def test_logged_statuses_are_the_envs_own(tmp_path):
    """Logs carry env.render_data()["statuses"], including a parked crowd agent that was pushed
    off its goal (still at_goal for the env; a re-derivation from positions got it wrong)."""
    from orca_env.baselines import RandomPolicy
    from orca_env.evaluation import evaluate

    cfg = {"scenario": "crowdnav_square_v0", "max_steps": 60,
           "groups": [{"population": "learned", "count": 2, "on_goal": "stop"},
                      {"population": "orca", "count": 5, "on_goal": "stay"}]}
    evaluate(cfg, "random", episodes=1, out_dir=str(tmp_path), logs=1)
    log = load_log(tmp_path / "logs" / "episode_10000.npz")
    env = OrcaEnv(cfg)
    obs, _ = env.reset(seed=10_000)
    pol = RandomPolicy()
    if hasattr(pol, "reset"):  # as run_episode does
        pol.reset(10_000)
    truth = [env.render_data()["statuses"]]
    while env.agents:
        obs, *_ = env.step(pol(obs, env))
        truth.append(env.render_data()["statuses"])
    np.testing.assert_array_equal(log.arrays["statuses"], np.array(truth))
    # The case a position-based re-derivation misses: an active crowd agent at_goal while
    # farther from its goal than the goal tolerance.
    tol = np.asarray(env.scenario.goal_tolerance(log.static["radii"]))
    far = np.hypot(*np.moveaxis(log.arrays["goals"] - log.positions, -1, 0)) > tol + 1e-3
    crowd = log.static["populations"] != 0
    pushed = (log.arrays["statuses"] == STATUSES.index("at_goal")) & far & crowd \
        & log.arrays["active"]
    assert pushed.any()
