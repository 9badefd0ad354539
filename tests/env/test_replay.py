"""The replay behaviour: the ETH/UCY reader, entering and leaving, bad files, the sample."""

import importlib.util
import os

import numpy as np
import pytest

import orca_env
from orca_env.behaviours import behaviour
from orca_env.behaviours.replay import DATA_DIR, MAX_WALK_SPEED, read_tracks

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SAMPLE = os.path.join(DATA_DIR, "replay_sample.txt")


def _write(tmp_path, text, name="tracks.txt"):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def test_reader_whitespace_commas_comments_and_eth_frame_numbers(tmp_path):
    # ETH numbers its annotated frames 10 apart; commas and tabs both separate.
    path = _write(tmp_path, "# a comment\n780\t1\t0.0\t0.0\n790, 1, 0.4, 0.0\n\n"
                            "790 2 5.0 5.0 extra\n800 2 5.0 5.4\n")
    ids, tracks = read_tracks(path)
    assert ids.tolist() == [1.0, 2.0]
    np.testing.assert_allclose(tracks[0], [[0.0, 0.0, 0.0], [0.4, 0.4, 0.0]])
    np.testing.assert_allclose(tracks[1], [[0.4, 5.0, 5.0], [0.8, 5.0, 5.4]])
    _, t2 = read_tracks(path, fps=5.0, frame_step=5.0)  # 10 frame numbers = 2 frames at 5 fps
    np.testing.assert_allclose(t2[0][:, 0], [0.0, 0.4])


@pytest.mark.parametrize(("text", "match"), [
    ("0 1 0.0 0.0\n1 1 0.1\n", r"line 2: needs 4 columns .* got 3"),
    ("0 1 0.0 0.0\n1 1 0.1 abc\n", r"line 2: y must be a finite number, got 'abc'"),
    ("0 1 0.0 nan\n", r"line 1: y must be a finite number, got 'nan'"),
    ("0 1 0.0 0.0\n2 1 0.1 0.0\n1 1 0.2 0.0\n", r"line 3: frames of pedestrian 1 must increase, "
                                                r"got frame 1 after 2"),
    ("0 1 0.0 0.0\n1 1 0.1 0.0\n1 1 0.2 0.0\n", r"line 3: frames of pedestrian 1 must increase"),
    ("0 7 0.0 0.0\n1 7 2.0 0.0\n", r"line 2: pedestrian 7 jumps 5 m/s from the previous frame, "
                                   r"faster than a person walks \(3.0 m/s\)"),
    ("# nothing\n", r"holds no observation"),
])
def test_bad_files_name_the_file_line_and_value(tmp_path, text, match):
    path = _write(tmp_path, text)
    with pytest.raises(ValueError, match=match) as err:
        read_tracks(path)
    assert path in str(err.value)


def _cfg(replay, count=3, **group):
    return dict(scenario="replay_circle_v0", groups=[
        {"name": "robot", "population": "learned", "count": 1},
        {"name": "peds", "population": "replay", "count": count, "max_speed": MAX_WALK_SPEED,
         "replay": replay, **group}])


def test_bad_config_keys(tmp_path):
    with pytest.raises(ValueError, match=r"groups\[1\]\.replay' must give the trajectory file"):
        orca_env.parallel_env(_cfg({"fps": 2.5}))
    with pytest.raises(ValueError, match=r"groups\[1\]\.replay\.speed' is unknown"):
        orca_env.parallel_env(_cfg({"file": "replay_sample.txt", "speed": 1}))
    with pytest.raises(ValueError, match=r"groups\[1\]\.replay\.fps' must be a positive number, "
                                         r"got -2"):
        orca_env.parallel_env(_cfg({"file": "replay_sample.txt", "fps": -2}))
    with pytest.raises(ValueError, match=r"groups\[1\]\.count': replay file .* holds 67 tracks, "
                                         r"got count=100"):
        orca_env.parallel_env(_cfg({"file": "replay_sample.txt"}, count=100))
    with pytest.raises(FileNotFoundError, match=r"replay file 'nope\.txt' not found"):
        orca_env.parallel_env(_cfg({"file": "nope.txt"}))
    with pytest.raises(ValueError, match=r"groups\[1\]\.on_goal': replay agents follow"):
        orca_env.parallel_env(_cfg({"file": "replay_sample.txt"}, on_goal="new_goal"))
    with pytest.raises(ValueError, match=r"groups\[1\]\.replay' applies to population replay"):
        orca_env.parallel_env(dict(scenario="replay_circle_v0", groups=[
            {"population": "learned", "count": 1},
            {"population": "orca", "count": 1, "replay": {"file": "replay_sample.txt"}}]))
    bad = _write(tmp_path, "0 1 0 0\n1 1 9 0\n")  # the file's own error, at env construction
    with pytest.raises(ValueError, match=r"line 2: pedestrian 1 jumps"):
        orca_env.parallel_env(_cfg({"file": bad}, count=1))


def test_agents_follow_their_tracks_entering_and_leaving(tmp_path):
    # Pedestrian 1 walks from t = 0 to 1.2 s; pedestrian 2 enters at 0.8 s and leaves at 2 s.
    path = _write(tmp_path, "0 1 -2 1\n1 1 -1.6 1\n2 1 -1.2 1\n3 1 -0.8 1\n"
                            "2 2 3 -1\n3 2 3 -0.6\n4 2 3 -0.2\n5 2 3 0.2\n")
    env = orca_env.parallel_env(_cfg({"file": path}, count=2), time_step=0.2)
    env.reset(seed=0)
    b = env._batch
    seen = []
    for k in range(12):
        t = k * 0.2
        seen.append((t, b.active[1], b.active[2], b.positions[1].copy(), b.positions[2].copy()))
        env.step({"agent_0": np.zeros(2, dtype=np.float32)})
    for t, a1, a2, p1, p2 in seen:
        assert a1 == (t <= 1.2 + 1e-9) and a2 == (0.8 - 1e-9 <= t <= 2.0 + 1e-9), t
        if a1:
            np.testing.assert_allclose(p1, [-2 + t, 1.0], atol=1e-9)
        if a2:
            np.testing.assert_allclose(p2, [3.0, -1 + (t - 0.8)], atol=1e-9)
    # Non-reactive: responsibility 0 (others avoid them fully), and they avoid no one.
    assert behaviour("replay").responsibility == 0.0
    assert (b.slots.responsibility[1:] == 0).all() and (b.slots.avoid_mask[1:] == 0).all()


def test_replayed_pedestrians_ignore_a_robot_in_their_way(tmp_path):
    path = _write(tmp_path, "".join(f"{k} 1 {-2 + 0.4 * k:.1f} -4\n" for k in range(11)))
    env = orca_env.parallel_env(_cfg({"file": path}, count=1), on_collision="continue")
    env.reset(seed=0)
    for k in range(16):  # the robot waits at (0, -4), on the pedestrian's line
        env.step({"agent_0": np.zeros(2, dtype=np.float32)})
        if env._batch.active[1]:
            np.testing.assert_allclose(env._batch.positions[1], [-2 + k * 0.25 + 0.25, -4],
                                       atol=1e-9)


def test_shipped_sample_is_what_the_script_makes(tmp_path):
    spec = importlib.util.spec_from_file_location(
        "make_replay_sample", os.path.join(ROOT, "examples", "make_replay_sample.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out = tmp_path / "sample.txt"
    mod.write(str(out))
    with open(SAMPLE) as fh:
        assert out.read_text() == fh.read()
    ids, tracks = read_tracks(SAMPLE)
    assert ids.size == 67 and min(t.shape[0] for t in tracks) >= 2


def test_sample_is_package_data():
    try:
        import tomllib
    except ModuleNotFoundError:
        tomllib = pytest.importorskip("tomli")
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as fh:
        st = tomllib.load(fh)["tool"]["setuptools"]
    assert "orca_env.data" in st["packages"] and st["package-data"]["orca_env.data"] == ["*.txt"]


def test_shipped_replay_config_runs():
    env = orca_env.parallel_env(os.path.join(ROOT, "configs", "replay_sample.yaml"))
    env.reset(seed=0)
    counts = []
    while env.agents:
        env.step(env.heuristic_actions())
        counts.append(int(env._batch.active[1:].sum()))
    assert max(counts) >= 8 and len(set(counts)) > 1  # pedestrians come and go


@pytest.mark.parametrize("clone", ["pickle", "deepcopy"])
def test_pickle_and_deepcopy_mid_episode_with_the_new_humans(clone):
    import copy
    import pickle

    env = orca_env.parallel_env(dict(scenario="crowdnav_circle_v0", max_steps=80, groups=[
        {"name": "robot", "population": "learned", "count": 1},
        {"population": "social_force", "count": 3, "on_goal": "stay"},
        {"population": "replay", "count": 4, "max_speed": 3.0,
         "replay": {"file": "replay_sample.txt"}}]))
    env.reset(seed=2)
    rng = np.random.default_rng(0)
    for _ in range(10):
        env.step({"agent_0": rng.uniform(-1, 1, 2).astype(np.float32)})
    other = pickle.loads(pickle.dumps(env)) if clone == "pickle" else copy.deepcopy(env)
    for _ in range(30):
        if not env.agents:
            break
        act = {"agent_0": rng.uniform(-1, 1, 2).astype(np.float32)}
        o1, *_ = env.step(act)
        o2, *_ = other.step(act)
        assert np.array_equal(o1["agent_0"], o2["agent_0"])
        assert np.array_equal(env.sim.positions, other.sim.positions)
