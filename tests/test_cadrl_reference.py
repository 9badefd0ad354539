"""CADRL and GA3C-CADRL against gym-collision-avoidance's own code, its env and TensorFlow.

These need the package's own dependencies (TensorFlow for GA3C-CADRL's graph, the old ``gym``,
matplotlib, imageio and scipy for its env), which orca-env's policies do not: ``.ci/run`` runs
this file in a venv of its own (its "reference" step, with ``ORCA_ENV_CADRL_REFERENCE=1``, so a
missing package fails there) and removes that venv; elsewhere it skips, saying so. By hand::

    pip install "tensorflow-cpu==2.21.*" gym matplotlib imageio scipy pytest
    pip install --no-deps gym-collision-avoidance==0.0.3
    ORCA_ENV_CADRL_REFERENCE=1 python -m pytest tests/test_cadrl_reference.py

The package's code is run as it ships, from its installed files (trusted as its code is: its
CADRL loader unpickles its own weights, and rewrites a pickle of training settings inside its
folder when it does, which is why only a throwaway venv runs it). Two things of the package
need a hand with NumPy 2: ``gym.make`` (its env checker uses ``np.bool8``), so the env is built
directly, and nothing else.
"""

import importlib.util
import os

import numpy as np
import pytest

_NEEDED = ("gym_collision_avoidance", "tensorflow", "gym", "matplotlib", "imageio", "scipy")
_missing = [m for m in _NEEDED if importlib.util.find_spec(m) is None]
if _missing:
    if os.environ.get("ORCA_ENV_CADRL_REFERENCE"):
        raise RuntimeError(f"the CADRL reference step needs {', '.join(_missing)}")
    pytest.skip(f"the package's own code needs {', '.join(_missing)}: .ci/run's reference "
                f"step runs this file in a venv of its own (see the module docstring)",
                allow_module_level=True)

# The package reads its config class when first imported: its evaluation config (dt 0.1 s,
# up to 19 agents), the one orca-env's GA3C-CADRL observation follows.
os.environ["GYM_CONFIG_CLASS"] = "EvaluateConfig"
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from test_cadrl import CIRCLE6, PACKAGE_CIRCLE6, run_circle  # noqa: E402

from orca_env.policies import cadrl  # noqa: E402


@pytest.fixture(scope="module")
def tf1():
    import tensorflow.compat.v1 as tf
    tf.Session().__enter__()  # as the package's examples do
    return tf


@pytest.fixture(scope="module")
def package_ga3c(tf1):
    from gym_collision_avoidance.envs.policies.GA3CCADRLPolicy import GA3CCADRLPolicy
    policy = GA3CCADRLPolicy()
    policy.initialize_network()  # the package's own TF1 loading, through TF2's compat layer
    return policy


def random_ga3c_observations(rng, n):
    """Observation vectors as the package's sensor fills them (5 + 18 x 7 numbers)."""
    obs = np.zeros((n, 5 + 7 * 18))
    for q in range(n):
        k = int(rng.integers(0, 19))
        r = rng.uniform(0.2, 0.8)
        obs[q, :5] = [k, rng.uniform(0, 12), rng.uniform(-np.pi, np.pi), rng.uniform(0.5, 2),
                      r]
        others = np.zeros((k, 7))
        others[:, 0:2] = rng.uniform(-8, 8, (k, 2))
        others[:, 2:4] = rng.uniform(-1.5, 1.5, (k, 2))
        others[:, 4] = rng.uniform(0.2, 0.8, k)
        others[:, 5] = r + others[:, 4]
        others[:, 6] = np.linalg.norm(others[:, 0:2], axis=1) - others[:, 5]
        others = others[np.argsort(others[:, 6], kind="stable")]
        obs[q, 5:5 + 7 * k] = others.reshape(-1)
    return obs


def test_checkpoint_reader_matches_tensorflow(tf1, package_ga3c):
    import tensorflow as tf
    prefix = os.path.join(cadrl.package_dir("ga3c_cadrl"), *cadrl._GA3C_CHECKPOINT)
    from orca_env.policies import tf_checkpoint
    ours = tf_checkpoint.read_variables(prefix)
    theirs = tf.train.load_checkpoint(prefix)
    assert sorted(ours) == sorted(theirs.get_variable_to_shape_map())
    for name, value in ours.items():
        ref = theirs.get_tensor(name)
        assert value.dtype == ref.dtype and np.array_equal(value, ref), name
    graph = tf_checkpoint.read_graph(prefix + ".meta")
    sess, g = package_ga3c.nn.sess, package_ga3c.nn.graph
    for name in ("Const", "Const_1", "Reshape/shape"):
        np.testing.assert_array_equal(graph[name].value, sess.run(g.get_tensor_by_name(
            name + ":0")))


def test_ga3c_network_matches_tensorflow(package_ga3c):
    obs = random_ga3c_observations(np.random.default_rng(0), 400)
    ours = cadrl.load_ga3c_network()(obs)
    theirs = package_ga3c.nn.predict_p(obs)
    np.testing.assert_allclose(ours, theirs, atol=2e-6)
    top2 = np.sort(theirs, axis=1)[:, -2:]
    clear = top2[:, 1] - top2[:, 0] > 1e-4
    assert clear.mean() > 0.95
    assert np.array_equal(ours.argmax(axis=1)[clear], theirs.argmax(axis=1)[clear])
    # And the whole action, from the package's observation dict, as its policy computes it.
    from gym_collision_avoidance.envs import Config
    actions = cadrl.ga3c_actions()
    for q in range(20):
        x = obs[q]
        d = {"is_learning": np.array(0.0), "num_other_agents": np.array(x[0]),
             "dist_to_goal": np.array(x[1]), "heading_ego_frame": np.array(x[2]),
             "pref_speed": np.array(x[3]), "radius": np.array(x[4]),
             "other_agents_states": x[5:].reshape(Config.MAX_NUM_OTHER_AGENTS_OBSERVED, 7)}
        theirs_a = package_ga3c.find_next_action(d, None, 0)
        best = actions[np.argmax(ours[q])]
        if clear[q]:
            np.testing.assert_allclose(theirs_a, [x[3] * best[0], best[1]])


@pytest.fixture(scope="module")
def package_cadrl_value():
    from gym_collision_avoidance.envs.policies.CADRL.scripts.multi import (
        nn_navigation_value_multi as nav,
    )
    from gym_collision_avoidance.envs.policies.CADRL.scripts.neural_networks import (
        neural_network_regr_multi as nn,
    )
    value = nav.NN_navigation_value(4, nn.NN_training_param(0.5, 0.001, 1000, 500, 0.1),
                                    mode="no_constr", passing_side="none")
    path = os.path.join(cadrl.package_dir("cadrl"), *cadrl._CADRL_WEIGHTS)
    value.nn.load_neural_network(path)  # the package's own (pickle) loader
    return value


def test_cadrl_network_and_lookahead_match_the_package(package_cadrl_value):
    rng = np.random.default_rng(1)
    net = cadrl.load_cadrl_network()
    x = rng.normal(size=(300, 31)) * 3
    np.testing.assert_allclose(net(x), package_cadrl_value.nn.make_prediction_raw(x)[:, 0],
                               rtol=1e-12, atol=1e-12)
    compared = 0
    for _ in range(300):
        k = int(rng.integers(1, 4))
        pref = rng.uniform(0.5, 1.5)
        s = np.array([*rng.uniform(-4, 4, 2), *rng.uniform(-1, 1, 2), rng.uniform(-np.pi, np.pi),
                      pref, *rng.uniform(-6, 6, 2), rng.uniform(0.2, 0.6), 0.0])
        others = np.zeros((k, 10))
        others[:, 0:2] = s[0:2] + rng.uniform(-3, 3, (k, 2))
        others[:, 2:4] = rng.uniform(-1, 1, (k, 2))
        others[:, 5], others[:, 8] = 1.0, rng.uniform(0.2, 0.6, k)
        gaps = np.linalg.norm(others[:, 0:2] - s[0:2], axis=1) - s[8] - others[:, 8]
        if (gaps < 0.05).any():
            continue
        acts = np.stack([rng.uniform(0, 1.2, k), rng.uniform(-np.pi, np.pi, k)], axis=1)
        theirs = package_cadrl_value.find_next_action(s, [o.copy() for o in others],
                                                      [a.copy() for a in acts])
        ours = cadrl.cadrl_action(net, s, others, acts)
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)
        compared += 1
    assert compared > 150


def _package_circle(policy_name, n=6, radius=5.0):
    from gym_collision_avoidance.envs import test_cases as tc
    from gym_collision_avoidance.envs.collision_avoidance_env import CollisionAvoidanceEnv
    env = CollisionAvoidanceEnv()
    agents = tc.cadrl_test_case_to_agents(tc.gen_circle_test_case(n, radius),
                                          policies=policy_name)
    for a in agents:
        if hasattr(a.policy, "initialize_network"):
            a.policy.initialize_network()
    env.set_agents(agents)
    env.reset()
    traj = []
    for _ in range(400):
        traj.append(np.array([a.pos_global_frame for a in env.agents]))
        *_, done, _, _ = env.step({})
        if done:
            break
    return traj, env.agents


@pytest.mark.parametrize("policy,package_name", [("cadrl", "CADRL"),
                                                 ("ga3c_cadrl", "GA3C_CADRL")])
def test_package_env_circle(tf1, policy, package_name):
    """The 6-agent circle in the package's own env and in orca-env: every agent home in both,
    along the same paths (until the first arrival, where the two envs' goal rules differ)."""
    traj, agents = _package_circle(package_name)
    assert all(a.is_at_goal for a in agents) and not any(a.in_collision for a in agents)
    for step, expected in PACKAGE_CIRCLE6[policy].items():  # the numbers test_cadrl checks
        np.testing.assert_allclose(np.round(traj[step], 4), expected, atol=1e-9)
    positions, status = run_circle(policy, CIRCLE6)
    assert set(status.values()) == {"at_goal"}
    goals = np.array([a.goal_global_frame for a in agents])
    first = min(len(positions), len(traj))
    for t in range(first):
        if (np.linalg.norm(traj[t] - goals, axis=1) < 0.5).any():
            break
        np.testing.assert_allclose(positions[t], traj[t], atol=1e-5, err_msg=f"step {t}")
    assert t > 80
