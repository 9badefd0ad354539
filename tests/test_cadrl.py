"""The published baselines ``--policy cadrl`` and ``--policy ga3c_cadrl`` (issue 26 item 5).

They read their weights from gym-collision-avoidance's files (installed with ``pip install
--no-deps gym-collision-avoidance==0.0.3``; ``.ci/run`` installs it into the dev venv, so in CI
these tests run: a missing package fails there instead of skipping). Their agreement with the
package's own code, its own environment and TensorFlow is tests/test_cadrl_reference.py's.
"""

import importlib.util
import json
import os
import pickle
import shutil
import warnings

import numpy as np
import pytest

import orca_env
from orca_env.evaluation import evaluate
from orca_env.evaluation.bench import BenchPolicy
from orca_env.evaluation.suite import policy_settings, resolve_policy

INSTALL = "pip install --no-deps gym-collision-avoidance==0.0.3"

if importlib.util.find_spec("gym_collision_avoidance") is None:
    if os.environ.get("CI"):
        raise RuntimeError(f"CI must install gym-collision-avoidance before pytest (.ci/run): "
                           f"{INSTALL}")
    pytest.skip(f"gym-collision-avoidance is not installed (its files hold the weights): "
                f"{INSTALL}", allow_module_level=True)

from orca_env.policies import cadrl, tf_checkpoint  # noqa: E402

#: The package's circle test case (test_cases.gen_circle_test_case(6, 5.0): radius 0.5 m,
#: preferred speed 1 m/s, goal = antipode) at its EvaluateConfig's time step, 0.1 s. Without
#: the safety layer an orca-env agent moves exactly as commanded, as the package's agents do.
CIRCLE6 = dict(scenario="circle_v0", scenario_kwargs=dict(circle_radius=5.0), time_step=0.1,
               max_steps=300, stall={"end_episode": False}, observation=dict(num_agents=5),
               groups=[dict(population="learned", count=6, on_goal="stay", radius=0.5,
                            max_speed=1.0, pref_speed=1.0, safety_layer=False)])

#: Agents' positions at steps 30 and 60 of that circle in gym-collision-avoidance's own env
#: (CollisionAvoidanceEnv, EvaluateConfig, unicycle dynamics), as recorded by
#: tests/test_cadrl_reference.py::test_package_env_circle, which checks these numbers against
#: the package wherever it runs.
PACKAGE_CIRCLE6 = {
    "cadrl": {
        30: [[2.1251, 0.1042], [0.9723, 1.8925], [-1.1528, 1.7883], [-2.1251, -0.1042],
             [-0.9723, -1.8925], [1.1528, -1.7883]],
        60: [[-0.514, 1.2144], [-1.3087, 0.1621], [-0.7948, -1.0523], [0.514, -1.2144],
             [1.3087, -0.1621], [0.7948, 1.0523]]},
    "ga3c_cadrl": {
        30: [[2.1022, -0.7765], [1.7235, 1.4323], [-0.3787, 2.2088], [-2.1022, 0.7765],
             [-1.7235, -1.4323], [0.3787, -2.2088]],
        60: [[-0.833, -1.0094], [0.4576, -1.2261], [1.2907, -0.2167], [0.833, 1.0094],
             [-0.4576, 1.2261], [-1.2907, 0.2167]]},
}


def run_circle(policy, config=CIRCLE6, seed=10000):
    """Positions per step and each agent's final status."""
    env = orca_env.parallel_env(config)
    pol, _ = resolve_policy(policy, None, env)
    obs, _ = env.reset(seed=seed)
    positions, status = [env.sim.positions.copy()], {}
    while env.agents:
        obs, _, _, _, infos = env.step(pol(obs, env))
        positions.append(env.sim.positions.copy())
        status.update({k: v["status"] for k, v in infos.items()})
    return positions, status


# -- the circle: every agent home, along the package's own paths -------------------------------
@pytest.mark.parametrize("policy", ["cadrl", "ga3c_cadrl"])
def test_six_agent_circle_every_agent_home(policy):
    positions, status = run_circle(policy)
    assert status == {f"agent_{k}": "at_goal" for k in range(6)}
    for step, expected in PACKAGE_CIRCLE6[policy].items():
        np.testing.assert_allclose(positions[step], expected, atol=2e-4)
    # Home within 10-11 s (the package's agents: 10.5 s for CADRL, 10.2 s for GA3C-CADRL).
    assert 95 <= len(positions) - 1 <= 106


def test_unicycle_robot_gets_actions_in_its_box():
    # A unicycle robot has a heading (the humans have none) and gets (speed, rotation) actions
    # from the velocities the policy picks.
    env = orca_env.parallel_env("crowdnav_circle_unicycle_invisible")
    pol, _ = resolve_policy("ga3c_cadrl", None, env)
    obs, _ = env.reset(seed=10000)
    assert np.isfinite(env.headings[env.live_slots]).all()
    assert np.isnan(env.headings[1:]).all()  # the holonomic humans have none
    for _ in range(5):
        actions = pol(obs, env)
        assert set(actions) == set(env.agents)
        for a in actions.values():
            assert a.shape == (2,) and np.all(np.abs(a) <= 1.0)
        obs, *_ = env.step(actions)


# -- the names, the settings and the errors ------------------------------------------------------
def test_names_resolve_before_folders(tmp_path, monkeypatch):
    (tmp_path / "cadrl").mkdir()  # a folder of that name does not shadow the policy
    monkeypatch.chdir(tmp_path)
    env = orca_env.parallel_env("crowdnav_circle_invisible")
    pol, name = resolve_policy("cadrl", None, env)
    assert isinstance(pol, cadrl.CadrlPolicy) and name == "cadrl"
    pol, name = resolve_policy("ga3c_cadrl", None, env)
    assert isinstance(pol, cadrl.Ga3cCadrlPolicy) and name == "ga3c_cadrl"
    assert BenchPolicy("cadrl").label == "cadrl"
    assert BenchPolicy("ga3c_cadrl", safety_layer=False).label == "ga3c_cadrl (no safety layer)"
    assert policy_settings("cadrl") == policy_settings("ga3c_cadrl") == {"action": "velocity"}
    assert policy_settings("orca") is None


def test_eval_sets_velocity_actions_and_a_residual_env_is_refused():
    # evaluate applies the policy's settings: a residual config runs with velocity actions...
    config = {"scenario": "crowdnav_circle_v0", "action": "residual", "max_steps": 5}
    report = evaluate(config, "cadrl", episodes=1, progress=False)
    assert report["policy"] == "cadrl" and report["num_episodes"] == 1  # the policy acted
    # ... but an explicit residual override wins, and the policy refuses it by name.
    with pytest.raises(ValueError, match="policy 'cadrl' needs action: velocity"):
        evaluate(config, "cadrl", episodes=1, progress=False, overrides={"action": "residual"})


@pytest.mark.parametrize("policy", ["cadrl", "ga3c_cadrl"])
def test_missing_package_is_one_line_with_the_install_recipe(policy, monkeypatch, capsys):
    from orca_env.cli import main
    real = importlib.util.find_spec
    monkeypatch.setattr(cadrl.importlib.util, "find_spec",
                        lambda name, *a: None if name == "gym_collision_avoidance"
                        else real(name, *a))
    cadrl.load_cadrl_network.cache_clear()
    cadrl.load_ga3c_network.cache_clear()
    try:
        env = orca_env.parallel_env("crowdnav_circle_invisible")
        with pytest.raises(ImportError) as exc:
            resolve_policy(policy, None, env)
        assert str(exc.value) == (f"policy {policy!r} needs the weights of "
                                  f"gym-collision-avoidance, which is not installed: {INSTALL}")
        with pytest.raises(SystemExit) as code:
            main(["eval", "crowdnav_circle_invisible", "--policy", policy, "--episodes", "1"])
        assert code.value.code == 1
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and INSTALL in err and repr(policy) in err
    finally:
        cadrl.load_cadrl_network.cache_clear()
        cadrl.load_ga3c_network.cache_clear()


def test_cli_eval_and_bench_take_the_names(tmp_path):
    from orca_env.cli import main
    out = tmp_path / "eval"
    assert main(["eval", "crowdnav_circle_invisible", "--policy", "ga3c_cadrl", "--episodes",
                 "2", "--quiet", "--out", str(out)]) == 0
    report = json.loads((out / "metrics.json").read_text())
    assert report["policy"] == "ga3c_cadrl" and len(report["episodes"]) == 2
    suite = tmp_path / "tiny.yaml"
    suite.write_text("name: tiny\nseed: 11000\nentries:\n"
                     "  - {name: crowdnav, config: crowdnav_circle_invisible, tag: standard,\n"
                     "     seed_offset: 0, episodes: 1, set: {max_steps: 20}}\n")
    assert main(["bench", str(suite), "--no-figure", "--policy", "cadrl", "--no-safety",
                 "cadrl", "--out", str(tmp_path / "bench")]) == 0
    bench = json.loads((tmp_path / "bench" / "bench.json").read_text())
    assert set(bench["results"]["crowdnav"]) == {"cadrl", "cadrl (no safety layer)"}


# -- the files are read as data ----------------------------------------------------------------
class _Evil:
    def __reduce__(self):
        return (print, ("this must never run",))


@pytest.mark.parametrize("protocol", [0, 2, 5])
def test_array_pickle_builds_arrays_and_refuses_everything_else(tmp_path, capsys, protocol):
    good = tmp_path / "good.p"
    data = [[np.arange(6.0).reshape(2, 3), np.array([1, 2], dtype=np.int32)], "conn", 3]
    good.write_bytes(pickle.dumps(data, protocol=protocol))
    back = cadrl.read_array_pickle(good)
    np.testing.assert_array_equal(back[0][0], data[0][0])
    assert back[0][1].dtype == np.int32 and back[1:] == ["conn", 3]
    evil = tmp_path / "evil.p"
    evil.write_bytes(pickle.dumps([np.zeros(2), _Evil()], protocol=protocol))
    with pytest.raises(ValueError, match=r"evil\.p: not a pickle of numpy arrays "
                                         r"\(refused (__builtin__|builtins)\.print"):
        cadrl.read_array_pickle(evil)
    assert "never run" not in capsys.readouterr().out
    objects = tmp_path / "objects.p"
    objects.write_bytes(pickle.dumps(np.array([1, "a"], dtype=object), protocol=protocol))
    with pytest.raises(ValueError, match="objects.p: refused an array of Python objects"):
        cadrl.read_array_pickle(objects)


def test_cadrl_network_file_layout(tmp_path):
    net = cadrl.load_cadrl_network()
    assert [None if w is None else w.shape for w in net.W] == \
        [(31, 200), (200, 200), None, (100, 50), (50, 1)]
    assert net.layers_type == ["conn", "conn", "max", "conn", "conn"]
    assert net(np.zeros((3, 31))).shape == (3,)
    bad = tmp_path / "bad.p"
    bad.write_bytes(pickle.dumps([[np.zeros((5, 5))], [np.zeros((1, 5))]] + [np.zeros(1)] * 9))
    with pytest.raises(ValueError, match="bad.p: not CADRL's value network"):
        cadrl.load_cadrl_network(str(bad))


def _checkpoint_copy(tmp_path):
    src = os.path.join(cadrl.package_dir("ga3c_cadrl"), *cadrl._GA3C_CHECKPOINT)
    dst = tmp_path / "network"
    for ext in (".index", ".data-00000-of-00001", ".meta"):
        shutil.copyfile(src + ext, str(dst) + ext)
    return str(dst)


def test_tf_checkpoint_reader(tmp_path):
    prefix = _checkpoint_copy(tmp_path)
    variables = tf_checkpoint.read_variables(prefix)
    assert len(variables) == 39  # the network's 12 and Adam's slots, steps and powers
    assert variables["rnn/lstm_cell/kernel:0"].shape == (71, 256)
    assert variables["step:0"].dtype == np.int32 and variables["step:0"].shape == ()
    some = tf_checkpoint.read_variables(prefix, ["layer1/bias:0", "no such"])
    assert list(some) == ["layer1/bias:0"]
    np.testing.assert_array_equal(some["layer1/bias:0"], variables["layer1/bias:0"])
    graph = tf_checkpoint.read_graph(prefix + ".meta")
    assert graph["Softmax"].op == "Softmax" and graph["Softmax"].inputs == ["logits_p/BiasAdd"]
    assert graph["Const"].value.shape == (138,) and graph["Reshape/shape"].value.tolist() == \
        [-1, 19, 7]
    assert float(graph["rnn/while/rnn/lstm_cell/lstm_cell/add/y"].value) == 1.0
    # A damaged data shard fails its CRC32C, a file that is no index is refused by name.
    data = prefix + ".data-00000-of-00001"
    raw = bytearray(open(data, "rb").read())
    raw[100] ^= 0xFF
    open(data, "wb").write(bytes(raw))
    with pytest.raises(ValueError, match="fails its CRC32C check"):
        tf_checkpoint.read_variables(prefix)
    open(prefix + ".index", "wb").write(b"not an index" * 8)
    with pytest.raises(ValueError, match=r"network\.index: not a TensorFlow checkpoint index"):
        tf_checkpoint.read_variables(prefix)
    open(prefix + ".meta", "wb").write(b"\xff\xff\xff")
    with pytest.raises(ValueError, match=r"network\.meta: not a TensorFlow MetaGraphDef"):
        tf_checkpoint.read_graph(prefix + ".meta")


def test_ga3c_loader_checks_the_graph(tmp_path):
    net = cadrl.load_ga3c_network()
    assert (net.width, net.max_others, net.hidden, net.forget_bias) == (138, 19, 64, 1.0)
    p = net(np.zeros((2, 131)))  # cropped (zero-padded) to the network's width, as the package
    assert p.shape == (2, 11) and np.allclose(p.sum(axis=1), 1.0)
    assert cadrl.ga3c_actions().shape == (11, 2)
    with warnings.catch_warnings():  # saturated gates: no overflow warning, finite output
        warnings.simplefilter("error")
        assert np.isfinite(net(np.full((1, 138), 1e4))).all()
    # A checkpoint with another graph is refused, naming the node.
    prefix = _checkpoint_copy(tmp_path)
    meta = open(prefix + ".meta", "rb").read().replace(b"Softmax", b"Sigmoid")
    open(prefix + ".meta", "wb").write(meta)
    with pytest.raises(ValueError, match="not GA3C-CADRL's network .node 'Softmax'"):
        cadrl.load_ga3c_network(prefix)


# -- env.velocity_actions, the conversion both policies use ----------------------------------------
def test_velocity_actions():
    env = orca_env.parallel_env("crowdnav_circle_invisible")
    env.reset(seed=10000)
    slot = env.live_slots[0]
    to_goal = env.targets[slot] - env.sim.positions[slot]
    v = to_goal / np.linalg.norm(to_goal) * 0.5 * env.max_speeds[slot]
    a = env.velocity_actions(v[None])["agent_0"]
    np.testing.assert_allclose(a, [0.5, 0.0], atol=1e-6)  # goal frame: half speed to the goal
    left = np.array([-v[1], v[0]])
    np.testing.assert_allclose(env.velocity_actions(left[None])["agent_0"], [0.0, 0.5],
                               atol=1e-6)
    world = orca_env.parallel_env("crowdnav_circle_invisible", observation={"frame": "world"})
    world.reset(seed=10000)
    np.testing.assert_allclose(world.velocity_actions([[0.0, -0.5]])["agent_0"],
                               [0.0, -0.5 / world.max_speeds[slot]], atol=1e-6)
    with pytest.raises(ValueError, match="velocities must be 1 finite"):
        env.velocity_actions([[np.nan, 0.0]])
    residual = orca_env.parallel_env("crowdnav_circle_invisible", action="residual")
    residual.reset(seed=10000)
    with pytest.raises(ValueError, match="velocity_actions needs action: velocity"):
        residual.velocity_actions([[0.0, 0.0]])
