"""Published learned baselines: CADRL and GA3C-CADRL, with the weights of gym-collision-avoidance.

``orca-env eval CONFIG --policy cadrl`` (or ``ga3c_cadrl``, and the same in ``orca-env bench``)
runs a published policy for every learned agent, with the weights that the package
`gym-collision-avoidance <https://github.com/mit-acl/gym-collision-avoidance>`_ (MIT, PyPI
0.0.3) ships:

* ``cadrl``: :class:`CadrlPolicy`, the SA-CADRL value network of Chen et al., "Socially Aware
  Motion Planning with Deep Reinforcement Learning" (IROS 2017) as the package's
  ``CADRLPolicy`` loads it (4 agents, no passing-side norm, RL self-play iteration 1000), with
  its one-step look-ahead over 47 candidate velocities.
* ``ga3c_cadrl``: :class:`Ga3cCadrlPolicy`, GA3C-CADRL-10-LSTM of Everett et al., "Motion
  Planning Among Dynamic, Decision-Making Agents with Deep Reinforcement Learning" (IROS 2018):
  the package's ``IROS18`` checkpoint, an LSTM over the other agents and 11 discrete actions
  (speed x heading change).

Only the package's data files are read; none of its code is imported (it needs the old
``gym`` and, for GA3C-CADRL, TensorFlow), and neither policy needs TensorFlow: CADRL's weights
are a pickle of numpy arrays, read by a restricted unpickler that builds numpy arrays and
nothing else (:func:`read_array_pickle`), and GA3C-CADRL's TensorFlow 1 checkpoint and graph are
read by :mod:`orca_env.policies.tf_checkpoint` and run in numpy. The computations are ports of
the package's (``CADRLPolicy``, ``nn_navigation_value_multi``, ``pedData_processing_multi``,
``GA3CCADRLPolicy``, ``OtherAgentsStatesSensor``), checked against its own code, and, for
GA3C-CADRL, against TensorFlow running its graph (``tests/test_cadrl_reference.py``).
Install (the package's pinned dependencies, TensorFlow and ``imageio==2.4.1`` among them, are
not needed; see :data:`INSTALL`)::

    pip install --no-deps gym-collision-avoidance==0.0.3

How orca-env's state becomes the package's observation, per live learned agent (as the
package's own sensors build it): the other agents are the active slots of the world (parked
ones included), sorted by their gap (centre distance minus both radii, rounded to 0.01 m) and
then by their offset to the agent's left; positions and velocities are projected on the
agent's goal-aligned frame (x axis to its goal or waypoint). An agent's heading is its motion
model's (unicycle, differential drive); a holonomic agent's is its velocity's direction, and
while it stands still the direction it was last commanded (its goal's at the start), as the
package's unicycle dynamics set it. CADRL sees the 3 closest others (its network's size) with
their velocities averaged over the last two steps (the package's ``filter_vel``), GA3C-CADRL
up to 18 (the package's evaluation config) with their current velocities. Both return a
speed and a heading; the velocity ``speed * (cos heading, sin heading)`` becomes the env's
action through :meth:`OrcaEnv.velocity_actions` (the preferred velocity, in units of the max
speed and in the observation frame; with the safety layer ORCA filters it; a non-holonomic
robot turns towards it as far as it can in one step). The env's ``action`` must be
``velocity`` (evaluation and bench set it, :func:`env_settings`).

Where the package's code cannot run, the port decides: CADRL with no other agent in sight
goes straight to its goal at its preferred speed (the package's branch for that case reads an
attribute its policy never sets, and fails).
"""

from __future__ import annotations

import functools
import importlib.util
import math
import os
import pickle
from typing import Any

import numpy as np

from .tf_checkpoint import read_graph, read_variables

__all__ = ["CadrlPolicy", "Ga3cCadrlPolicy", "INSTALL", "POLICIES", "env_settings",
           "package_dir", "read_array_pickle", "load_cadrl_network", "load_ga3c_network",
           "cadrl_action", "cadrl_actions"]

#: The package whose files hold the weights, and the version whose files these ports read.
PACKAGE, MODULE, VERSION = "gym-collision-avoidance", "gym_collision_avoidance", "0.0.3"
#: How to install it: without its pinned dependencies, which neither policy needs.
INSTALL = f"pip install --no-deps {PACKAGE}=={VERSION}"

# Files inside the package (gym_collision_avoidance/envs/policies/...).
_CADRL_WEIGHTS = ("envs", "policies", "CADRL", "pickle_files", "multi", "no_constr_none",
                  "RL_selfplay", "4_agents_policy_iter_1000.p")
_GA3C_CHECKPOINT = ("envs", "policies", "GA3C_CADRL", "checkpoints", "IROS18",
                    "network_01900000")

# The package's constants (envs/policies/CADRL/scripts/multi/global_var.py, envs/config.py).
_EPS = 1e-5
_GAMMA, _DT_NORMAL = 0.97, 0.5
_COLLISION_COST, _DIST_2_GOAL_THRES, _GETTING_CLOSE_RANGE = -0.25, 0.05, 0.2
_CADRL_NUM_AGENTS = 4  # the value network's size: the agent and 3 others
_GA3C_MAX_OTHERS = 18  # EvaluateConfig: MAX_NUM_AGENTS_IN_ENVIRONMENT 19


def package_dir(policy: str) -> str:
    """The installed package's folder (found without importing it).

    Raises:
        ImportError: One line naming ``policy`` and the install command.
    """
    try:
        spec = importlib.util.find_spec(MODULE)
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(f"policy {policy!r} needs the weights of {PACKAGE}, which is not "
                          f"installed: {INSTALL}")
    return list(spec.submodule_search_locations)[0]


def _package_file(policy: str, parts: tuple[str, ...], suffix: str = "") -> str:
    path = os.path.join(package_dir(policy), *parts)
    if not os.path.isfile(path + suffix):
        raise ImportError(f"policy {policy!r}: {path + suffix} is missing from the installed "
                          f"{PACKAGE}; reinstall version {VERSION}: {INSTALL} "
                          f"--force-reinstall")
    return path


# -- CADRL: the weights, read as data ----------------------------------------------------------
def _numpy_global(module: str, name: str):
    """The three numpy callables a pickled array uses (NumPy 1 and 2 module names)."""
    if (module, name) in (("numpy", "ndarray"),):
        return np.ndarray
    if (module, name) in (("numpy", "dtype"),):
        return np.dtype
    if (module, name) in (("numpy.core.multiarray", "_reconstruct"),
                          ("numpy._core.multiarray", "_reconstruct")):
        try:
            from numpy._core.multiarray import _reconstruct  # noqa: PLC0415
        except ImportError:  # NumPy < 2
            from numpy.core.multiarray import _reconstruct  # noqa: PLC0415
        return _reconstruct
    if (module, name) in (("numpy.core.numeric", "_frombuffer"),
                          ("numpy._core.numeric", "_frombuffer")):  # protocol 5
        try:
            from numpy._core.numeric import _frombuffer  # noqa: PLC0415
        except ImportError:  # NumPy < 2
            from numpy.core.numeric import _frombuffer  # noqa: PLC0415
        return _frombuffer
    if (module, name) == ("_codecs", "encode"):  # bytes in Python 3's protocols 0-2
        return _latin1_encode
    return None


def _latin1_encode(text: str, encoding: str = "latin1") -> bytes:
    if encoding not in ("latin1", "latin-1"):
        raise pickle.UnpicklingError(f"refused _codecs.encode with encoding {encoding!r}")
    return text.encode("latin1")


class _ArrayUnpickler(pickle.Unpickler):
    """Builds numpy arrays, lists, tuples, strings and numbers; refuses every other global."""

    def find_class(self, module: str, name: str):
        obj = _numpy_global(module, name)
        if obj is None:
            raise pickle.UnpicklingError(f"refused {module}.{name}: only numpy arrays are read")
        return obj


def read_array_pickle(path: str | os.PathLike) -> Any:
    """Read a pickle of numpy arrays (and lists, tuples, strings, numbers) as data.

    The unpickler resolves no global but ``numpy.ndarray``, ``numpy.dtype``, numpy's array
    reconstructors (``_reconstruct``, ``_frombuffer``) and a latin-1 ``_codecs.encode`` (bytes
    in protocols 0-2), so reading runs no code of the file's choosing; arrays of Python
    objects are refused too. Python 2 pickles (latin-1 strings) are read as the package's own loader
    reads them.

    Raises:
        ValueError: Naming the file, if it holds anything else.
    """
    path = os.fspath(path)
    try:
        with open(path, "rb") as f:
            data = _ArrayUnpickler(f, encoding="latin1").load()
    except (pickle.UnpicklingError, EOFError, TypeError, AttributeError, IndexError,
            KeyError) as exc:
        raise ValueError(f"{path}: not a pickle of numpy arrays ({exc})") from exc

    def check(x: Any) -> None:
        if isinstance(x, np.ndarray) and x.dtype.hasobject:
            raise ValueError(f"{path}: refused an array of Python objects")
        if isinstance(x, (list, tuple)):
            for y in x:
                check(y)

    check(data)
    return data


class CadrlNetwork:
    """SA-CADRL's value network (``neural_network_regr_multi.make_prediction_raw``).

    Input: ``(n, 31)`` agent-centric states (7 own features, then 8 for each of 3 others);
    output: ``(n,)`` values. Layers as the file lists them: fully connected with ReLU
    (``conn``), a max over the other agents' blocks (``max``), and a linear last layer; inputs
    and the output scaled by the file's averages and deviations.
    """

    def __init__(self, weights: list, biases: list, avg: np.ndarray, std: np.ndarray,
                 out_avg: np.ndarray, out_std: np.ndarray, layers_info: list,
                 layers_type: list) -> None:
        self.W, self.b = weights, biases
        self.avg, self.std, self.out_avg, self.out_std = avg, std, out_avg, out_std
        self.layers_info, self.layers_type = layers_info, layers_type

    def __call__(self, x_raw: np.ndarray) -> np.ndarray:
        out = (x_raw - self.avg) / self.std
        last = len(self.W) - 1
        for layer in range(last):
            if self.layers_type[layer] == "conn":
                tmp = out @ self.W[layer] + self.b[layer]
                out = tmp * (tmp > 0)
            else:  # "max": per block of agents, the max over them
                blocks, start = [], 0
                for n_agents, stride in self.layers_info[layer]:
                    stop = start + int(n_agents) * int(stride)
                    blocks.append(out[:, start:stop].reshape(out.shape[0], -1, int(stride))
                                  .max(axis=1))
                    start = stop
                out = np.concatenate(blocks, axis=1)
        y = out @ self.W[last] + self.b[last]
        return (y * self.out_std + self.out_avg)[:, 0]


@functools.cache
def load_cadrl_network(path: str | None = None) -> CadrlNetwork:
    """The CADRL value network the package's ``CADRLPolicy`` loads (or the file ``path``).

    The file is the list ``[W, b, avg_vec, std_vec, output_avg_vec, output_std_vec,
    layers_info, layers_type, symmetric_indices, symmetric_indices_b, id_num]`` that the
    package's ``Neural_network_regr_multi.load_neural_network`` reads; its layout is checked.

    Raises:
        ImportError: If the package is not installed (with the install command).
        ValueError: Naming the file, if it is not such a network.
    """
    path = path or _package_file("cadrl", _CADRL_WEIGHTS)
    nn = read_array_pickle(path)
    n_in = 7 + 8 * (_CADRL_NUM_AGENTS - 1)
    try:
        W, b, avg, std, out_avg, out_std, info, types = nn[:8]
        info = [np.asarray(i, dtype=np.int64) for i in info]
        types = [str(t) for t in types]
        ok = (len(W) == len(b) == len(types) and len(info) == len(W) + 1
              and set(types) <= {"conn", "max"} and types[-1] == "conn"
              and np.shape(avg) == np.shape(std) == (n_in,)
              and np.shape(out_avg) == np.shape(out_std) == (1,))
        width = n_in
        for w, bb, t, inf in zip(W, b, types, info[1:], strict=False):
            if not ok:
                break
            if t == "conn":
                ok = (isinstance(w, np.ndarray) and w.ndim == 2 and w.shape[0] == width
                      and np.shape(bb) == (1, w.shape[1]))
                width = w.shape[1] if ok else width
            else:
                width = int(inf[:, 1].sum())
        ok = ok and width == 1
    except (TypeError, ValueError, IndexError) as exc:
        raise ValueError(f"{path}: not CADRL's value network ({exc})") from exc
    if not ok:
        raise ValueError(f"{path}: not CADRL's value network (unexpected layers)")
    as64 = functools.partial(np.asarray, dtype=np.float64)
    return CadrlNetwork([as64(w) if t == "conn" else None for w, t in zip(W, types, strict=True)],
                        [as64(bb).reshape(-1) if t == "conn" else None
                         for bb, t in zip(b, types, strict=True)],
                        as64(avg), as64(std), as64(out_avg), as64(out_std), info, types)


# -- CADRL: the look-ahead (nn_navigation_value_multi, no_constr mode) ------------------------
# A state row is the package's: x, y, vx, vy, heading, pref_speed, goal_x, goal_y, radius,
# turning_dir (unused by the value: the agent-centric state sets it to 0).
def _angle_diff(a, b):
    return (a - b + np.pi) % (2 * np.pi) - np.pi


def _candidate_actions(s: np.ndarray) -> np.ndarray:
    """``find_actions_theta``: (speed, angle) candidates, world frame (47 rows)."""
    desired = np.tile([s[5], math.atan2(s[7] - s[1], s[6] - s[0])], (5, 1))
    desired[1:, 0] *= np.array([0.8, 0.6, 0.4, 0.2])
    default = np.array([math.hypot(s[2], s[3]), s[4]])
    near = np.tile([s[5], s[4]], (10, 1))
    near[:, 1] += np.linspace(-np.pi / 3.0, np.pi / 3.0, num=10)
    near = np.vstack([near, near * [0.75, 1.0], near * [0.5, 1.0], near * [0.25, 1.0]])
    actions = np.vstack([default, desired, np.zeros((1, 2)), near])
    actions[:, 1] = (actions[:, 1] + np.pi) % (np.pi * 2) - np.pi
    return actions


def _next_states(s: np.ndarray, actions: np.ndarray, dt: float) -> np.ndarray:
    """``update_states`` (positions, velocities and heading; turning_dir is not used)."""
    nxt = np.tile(s, (actions.shape[0], 1))
    vx, vy = actions[:, 0] * np.cos(actions[:, 1]), actions[:, 0] * np.sin(actions[:, 1])
    nxt[:, 0] += vx * dt
    nxt[:, 1] += vy * dt
    nxt[:, 2], nxt[:, 3], nxt[:, 4] = vx, vy, actions[:, 1]
    return nxt


def _dist_between_segs(x1, x2, y1, y2):
    """``gen_rand_testcases.find_dist_between_segs``: closest approach of two moving points."""
    end = np.linalg.norm(x2 - y2, axis=1)
    crit = end.copy()
    z = (x2 - x1) - (y2 - y1)
    inds = np.where(np.linalg.norm(z, axis=1) > 0)[0]
    t = -np.sum((x1 - y1) * z[inds], axis=1) / np.sum(z[inds] * z[inds], axis=1)
    tt = t[:, None]
    d = np.linalg.norm(x1 + (x2[inds] - x1) * tt - y1 - (y2[inds] - y1) * tt, axis=1)
    ok = (t > 0) & (t < 1.0)
    crit[inds[ok]] = d[ok]
    return np.minimum(end, crit)


def _actions_collide(s, actions, o, o_action, dt):
    """``if_actions_collide``: closest gap to one other agent over the look-ahead, per action."""
    radius = s[8] + o[8]
    n = actions.shape[0]
    if_collide = np.zeros(n, dtype=bool)
    min_dists = np.full(n, radius + _GETTING_CLOSE_RANGE + _EPS)
    gap = math.hypot(s[0] - o[0], s[1] - o[1])
    if gap > (s[5] + o_action[0]) * dt + radius:
        return min_dists, if_collide  # out of reach: no collision
    vels = np.stack([actions[:, 0] * np.cos(actions[:, 1]),
                     actions[:, 0] * np.sin(actions[:, 1])], axis=1)
    ov = np.array([o_action[0] * math.cos(o_action[1]), o_action[0] * math.sin(o_action[1])])
    ovs = np.tile(ov, (n, 1))
    p_oa = math.atan2(o[1] - s[1], o[0] - s[0])
    angles = np.arctan2(vels[:, 1], vels[:, 0])
    heading_diff = _angle_diff(angles, math.atan2(ov[1], ov[0]))
    to_other = _angle_diff(angles, p_oa)
    r = s[8] + o[8] + _GETTING_CLOSE_RANGE
    coll_angle = abs(np.arcsin(min(0.95, r / gap)))
    front = np.where((abs(to_other) < coll_angle) & (abs(heading_diff) < np.pi / 2.0))[0]
    if len(front) > 0:
        dot = np.sum(vels * ovs, axis=1)
        valid = np.where(vels[:, 0] > _EPS)[0]  # sic: the package tests the x component
        dot[valid] /= np.linalg.norm(vels[valid], axis=1)
        ovs[front] = ovs[front] - dot[front][:, None] * vels[front] / 2.0
    h = min(1.0, dt)
    min_dists = _dist_between_segs(s[0:2], s[0:2] + h * vels, o[0:2], o[0:2] + h * ovs)
    if gap < radius:
        if_collide[:] = True
    else:
        if_collide = min_dists < radius
    return min_dists - radius, if_collide


def _action_rewards(s, cur_dist, min_dists):
    """``find_action_rewards``."""
    rewards = np.zeros(len(min_dists))
    if cur_dist < 0:
        rewards[:] = _COLLISION_COST
        return rewards
    d = math.hypot(s[0] - s[6], s[1] - s[7])
    penalty = _GAMMA ** (d / _DT_NORMAL) * (1.0 - _GAMMA ** (-s[5] / _DT_NORMAL))
    close = np.where((min_dists > 0) & (min_dists < _GETTING_CLOSE_RANGE))[0]
    if cur_dist < _GETTING_CLOSE_RANGE:
        rewards[:] = penalty
    rewards[close] += penalty
    rewards[np.where(min_dists < 0)[0]] = _COLLISION_COST
    rewards[close] = 2 * rewards[close] + 5 * penalty * (_GETTING_CLOSE_RANGE - min_dists[close])
    rewards[close] = np.clip(rewards[close], _COLLISION_COST + 0.01, 0.0)
    return rewards


def _agent_centric(states: np.ndarray, others: list) -> np.ndarray:
    """``rawStates_2_agentCentricStates`` for a 4-agent network: ``(n, 31)``."""
    others = list(others)
    d = [np.linalg.norm(o[0:2] - states[0, 0:2]) for o in others]
    k = int(np.argmin(d))  # reorder_other_agents_state: the closest one first
    others[0], others[k] = others[k], others[0]
    n = states.shape[0]
    nn = np.zeros((n, 7 + 8 * (_CADRL_NUM_AGENTS - 1)))
    goal_dir = states[:, 6:8] - states[:, 0:2]
    dist = np.clip(np.linalg.norm(goal_dir, axis=1), 0, 30)
    prll = np.stack([np.cos(states[:, 4]), np.sin(states[:, 4])], axis=1)
    valid = dist > _EPS
    prll[valid] = goal_dir[valid] / dist[valid, None]
    orth = np.stack([-prll[:, 1], prll[:, 0]], axis=1)
    heading = _angle_diff(states[:, 4], np.arctan2(prll[:, 1], prll[:, 0]))
    speed = np.linalg.norm(states[:, 2:4], axis=1)
    nn[:, 0:7] = np.stack([dist, states[:, 5], speed, heading, speed * np.cos(heading),
                           speed * np.sin(heading), states[:, 8]], axis=1)
    for i, o in enumerate(others):
        rel = o[0:2] - states[:, 0:2]
        ovx, ovy = np.sum(o[2:4] * prll, axis=1), np.sum(o[2:4] * orth, axis=1)
        is_on = np.where(ovx ** 2 + ovy ** 2 < _EPS, 2.0, 1.0)
        gap = np.clip(np.linalg.norm(rel, axis=1) - states[:, 8] - o[8], -3, 10)
        nn[:, 7 + 8 * i:15 + 8 * i] = np.stack([
            ovx, ovy, np.clip(np.sum(rel * prll, axis=1), -8, 8),
            np.clip(np.sum(rel * orth, axis=1), -8, 8), np.full(n, o[8]), states[:, 8] + o[8],
            gap, is_on], axis=1)
    for i in range(len(others), _CADRL_NUM_AGENTS - 1):  # absent agents: a copy, switched off
        nn[:, 7 + 8 * i:14 + 8 * i] = nn[:, 7:14]
    return nn


def cadrl_action(net: CadrlNetwork, s: np.ndarray, others: np.ndarray,
                 others_actions: np.ndarray) -> np.ndarray:
    """``NN_navigation_value.find_next_action`` (no_constr): the best (speed, angle).

    Args:
        net: The value network.
        s: The agent's state row (10,).
        others: ``(k, 10)`` state rows of the (at most 3) others it sees, ``k >= 1``.
        others_actions: ``(k, 2)`` their (speed, angle), world frame.

    Returns:
        ``(speed, angle)``, world frame.
    """
    return cadrl_actions(net, [(s, others, others_actions)])[0]


def cadrl_actions(net: CadrlNetwork, queries: list) -> list[np.ndarray]:
    """:func:`cadrl_action` of several agents, with one call of the network for all of them."""
    looks = [_lookahead(*q) for q in queries]
    xs = [look[3] for look in looks if look[3] is not None]
    v = np.clip(net(np.concatenate(xs)), -0.25, 1.0) if xs else None
    out, start = [], 0
    for actions, rewards, values, x, rows, dt, pref in looks:
        if x is not None:
            values[rows] = np.minimum(_GAMMA ** (x[:, 0] / _DT_NORMAL),
                                      v[start:start + len(x)])
            start += len(x)
        # find_next_states_values_and_components (the passing-side cost is 0 without a norm)
        dt_vec = 0.2 * dt + 0.8 * actions[:, 0] / pref * dt
        total = rewards + _GAMMA ** (dt_vec * pref / _DT_NORMAL) * values
        out.append(actions[int(np.argmax(total))])
    return out


def _lookahead(s: np.ndarray, others: np.ndarray, others_actions: np.ndarray):
    """One agent's candidates, their rewards and values, and the states the network values."""
    actions = _candidate_actions(s)
    pref = s[5]
    dist_to_goal = math.hypot(s[6] - s[0], s[7] - s[1])
    dt = min(max(1.0, 0.5 / pref), dist_to_goal / pref)
    # check_collisions_and_get_action_rewards: the others move at their (filtered) velocity.
    o_states = np.array(others, dtype=np.float64, copy=True)
    o_next = []
    n_act = actions.shape[0]
    min_mat = np.zeros((n_act, len(o_states)))
    coll_mat = np.zeros((n_act, len(o_states)))
    cur = np.zeros(len(o_states))
    for t, (o, oa) in enumerate(zip(o_states, others_actions, strict=True)):
        o[2], o[3] = oa[0] * math.cos(oa[1]), oa[0] * math.sin(oa[1])
        o_next.append(_next_states(o, np.asarray(oa, dtype=np.float64)[None], dt)[0])
        min_mat[:, t], coll_mat[:, t] = _actions_collide(s, actions, o, oa, dt)
        cur[t] = math.hypot(s[0] - o[0], s[1] - o[1]) - (s[8] + o[8])
    min_dists, if_collide, cur_dist = min_mat.min(axis=1), coll_mat.max(axis=1), cur.min()
    rewards = _action_rewards(s, cur_dist, min_dists)
    # find_values_and_action_rewards (find_states_values: the network, in cadrl_actions)
    values = np.zeros(n_act)
    x, rows = None, None
    free = np.where(if_collide == 0)[0]
    if len(free) > 0:
        nxt = _next_states(s, actions[free], dt)
        d_goal = np.linalg.norm(nxt[:, 0:2] - nxt[:, 6:8], axis=1)
        reached = (d_goal < _DIST_2_GOAL_THRES) & (min_dists[free] > _GETTING_CLOSE_RANGE)
        if (~reached).any():
            x, rows = _agent_centric(nxt[~reached], o_next), free[~reached]
        values[free[reached]] = _GAMMA ** (d_goal[reached] / _DT_NORMAL)
    return actions, rewards, values, x, rows, dt, pref


# -- GA3C-CADRL: the checkpoint, read as data -------------------------------------------------
# The forward path of the IROS18 graph (NetworkVP_rnn), node by node: (name, op, inputs). The
# loader checks it, so a different graph is refused instead of being run wrongly.
_GA3C_GRAPH = [
    ("sub", "Sub", ["X", "Const"]), ("div", "RealDiv", ["sub", "Const_1"]),
    ("strided_slice", "StridedSlice", ["X"]), ("ToInt32", "Cast", ["strided_slice"]),
    ("strided_slice_1", "StridedSlice", ["div"]), ("strided_slice_2", "StridedSlice", ["div"]),
    ("Reshape", "Reshape", ["strided_slice_2", "Reshape/shape"]),
    ("rnn/while/rnn/lstm_cell/lstm_cell/split", "Split", [
        "rnn/while/rnn/lstm_cell/lstm_cell/split/split_dim",
        "rnn/while/rnn/lstm_cell/lstm_cell/lstm_cell/BiasAdd"]),
    ("rnn/while/rnn/lstm_cell/lstm_cell/add", "Add", [
        "rnn/while/rnn/lstm_cell/lstm_cell/split:2", "rnn/while/rnn/lstm_cell/lstm_cell/add/y"]),
    ("rnn/while/rnn/lstm_cell/lstm_cell/Sigmoid", "Sigmoid", [
        "rnn/while/rnn/lstm_cell/lstm_cell/add"]),
    ("rnn/while/rnn/lstm_cell/lstm_cell/Sigmoid_1", "Sigmoid", [
        "rnn/while/rnn/lstm_cell/lstm_cell/split"]),
    ("rnn/while/rnn/lstm_cell/lstm_cell/Tanh", "Tanh", [
        "rnn/while/rnn/lstm_cell/lstm_cell/split:1"]),
    ("rnn/while/rnn/lstm_cell/lstm_cell/Sigmoid_2", "Sigmoid", [
        "rnn/while/rnn/lstm_cell/lstm_cell/split:3"]),
    ("layer1_input", "ConcatV2", ["strided_slice_1", "rnn/while/Exit_3"]),
    ("layer1/Relu", "Relu", ["layer1/BiasAdd"]), ("layer2/MatMul", "MatMul", ["layer1/Relu"]),
    ("layer2/Relu", "Relu", ["layer2/BiasAdd"]), ("Flatten/Reshape", "Reshape", ["layer2/Relu"]),
    ("fullyconnected1/MatMul", "MatMul", ["Flatten/Reshape"]),
    ("fullyconnected1/Relu", "Relu", ["fullyconnected1/BiasAdd"]),
    ("logits_p/MatMul", "MatMul", ["fullyconnected1/Relu"]),
    ("Softmax", "Softmax", ["logits_p/BiasAdd"]),
]
_GA3C_VARIABLES = ["rnn/lstm_cell/kernel", "rnn/lstm_cell/bias", "layer1/kernel", "layer1/bias",
                   "layer2/kernel", "layer2/bias", "fullyconnected1/kernel",
                   "fullyconnected1/bias", "logits_p/kernel", "logits_p/bias"]


def ga3c_actions() -> np.ndarray:
    """GA3C-CADRL's 11 actions (``network.Actions``): (speed fraction, heading change)."""
    a = np.mgrid[1.0:1.1:0.5, -np.pi / 6:np.pi / 6 + 0.01:np.pi / 12].reshape(2, -1).T
    a = np.vstack([a, np.mgrid[0.5:0.6:0.5, -np.pi / 6:np.pi / 6 + 0.01:np.pi / 6]
                   .reshape(2, -1).T])
    return np.vstack([a, np.mgrid[0.0:0.1:0.5, -np.pi / 6:np.pi / 6 + 0.01:np.pi / 6]
                      .reshape(2, -1).T])


class Ga3cNetwork:
    """GA3C-CADRL's policy network in numpy (float32, as TensorFlow runs it).

    ``(n, width)`` observations (``[num_other_agents, dist_to_goal, heading_ego_frame,
    pref_speed, radius, others...]``, 7 numbers per other agent) -> ``(n, 11)`` action
    probabilities: the input normalised by the graph's constants, an LSTM over the others
    (TensorFlow's ``LSTMCell`` with its forget bias; the state stops at ``num_other_agents``),
    three ReLU layers on the agent's 4 features and the LSTM's last output, a softmax.
    """

    def __init__(self, avg, std, max_others, forget_bias, variables) -> None:
        self.avg, self.std = avg.astype(np.float32), std.astype(np.float32)
        self.width, self.max_others = avg.shape[0], int(max_others)
        self.forget_bias = np.float32(forget_bias)
        v = {k: a.astype(np.float32) for k, a in variables.items()}
        self.lstm_k, self.lstm_b = v["rnn/lstm_cell/kernel"], v["rnn/lstm_cell/bias"]
        self.hidden = self.lstm_b.shape[0] // 4
        self.dense = [(v[f"{n}/kernel"], v[f"{n}/bias"])
                      for n in ("layer1", "layer2", "fullyconnected1")]
        self.logits = (v["logits_p/kernel"], v["logits_p/bias"])

    def crop(self, x: np.ndarray) -> np.ndarray:
        """``NetworkVPCore.crop_x``: cut or zero-pad the observations to the input width."""
        out = np.zeros((x.shape[0], self.width), dtype=np.float32)
        w = min(self.width, x.shape[1])
        out[:, :w] = x[:, :w]
        return out

    def __call__(self, x: np.ndarray) -> np.ndarray:
        x = self.crop(np.asarray(x, dtype=np.float32))
        xn = (x - self.avg) / self.std
        seq_len = x[:, 0].astype(np.int32)  # ToInt32 of the raw count
        host = xn[:, 1:5]
        seq = xn[:, 5:].reshape(x.shape[0], self.max_others, -1)
        h = np.zeros((x.shape[0], self.hidden), dtype=np.float32)
        c = np.zeros_like(h)
        for t in range(self.max_others):
            if not (seq_len > t).any():
                break
            z = np.concatenate([seq[:, t], h], axis=1) @ self.lstm_k + self.lstm_b
            i, j, f, o = np.split(z, 4, axis=1)
            new_c = c * _sigmoid(f + self.forget_bias) + _sigmoid(i) * np.tanh(j)
            new_h = np.tanh(new_c) * _sigmoid(o)
            on = (seq_len > t)[:, None]
            c, h = np.where(on, new_c, c), np.where(on, new_h, h)
        out = np.concatenate([host, h], axis=1)
        for w, b in self.dense:
            out = np.maximum(out @ w + b, 0)
        logits = out @ self.logits[0] + self.logits[1]
        e = np.exp(logits - logits.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)


def _sigmoid(x):
    with np.errstate(over="ignore"):  # exp(-x) = inf for x << 0 gives the limit 0
        return 1.0 / (1.0 + np.exp(-x))


@functools.cache
def load_ga3c_network(prefix: str | None = None) -> Ga3cNetwork:
    """GA3C-CADRL's IROS18 network, as the package's ``GA3CCADRLPolicy`` loads it.

    Reads the checkpoint ``prefix`` (default: the package's ``IROS18/network_01900000``):
    its variables, and from its graph (``.meta``) the input's normalisation constants, the
    LSTM's length and forget bias, after checking that the forward path is the one
    :class:`Ga3cNetwork` runs.

    Raises:
        ImportError: If the package is not installed (with the install command).
        ValueError: Naming the file, if the checkpoint is not that network.
    """
    prefix = prefix or _package_file("ga3c_cadrl", _GA3C_CHECKPOINT, ".meta")
    graph = read_graph(prefix + ".meta")
    for name, op, inputs in _GA3C_GRAPH:
        node = graph.get(name)
        if node is None or node.op != op or node.inputs[:len(inputs)] != inputs:
            raise ValueError(f"{prefix}.meta: not GA3C-CADRL's network (node {name!r}: "
                             f"expected {op}{inputs}, found "
                             f"{None if node is None else (node.op, node.inputs)})")

    def const(name):
        value = graph[name].value if name in graph else None
        if value is None:
            raise ValueError(f"{prefix}.meta: constant {name!r} is missing")
        return value

    avg, std, shape = const("Const"), const("Const_1"), const("Reshape/shape")
    slices = [(const(f"{s}/stack")[1], const(f"{s}/stack_1")[1])
              for s in ("strided_slice", "strided_slice_1", "strided_slice_2")]
    forget = const("rnn/while/rnn/lstm_cell/lstm_cell/add/y")
    variables = read_variables(prefix, [f"{v}:0" for v in _GA3C_VARIABLES])
    variables = {k[:-2]: a for k, a in variables.items()}
    k = variables.get("rnn/lstm_cell/kernel")
    if (avg.ndim != 1 or std.shape != avg.shape or slices != [(0, 1), (1, 5), (5, 0)]
            or list(shape) != [-1, (avg.shape[0] - 5) // 7, 7] or (avg.shape[0] - 5) % 7
            or len(variables) != len(_GA3C_VARIABLES) or k is None
            or k.shape[0] != 7 + k.shape[1] // 4
            or variables["layer1/kernel"].shape[0] != 4 + k.shape[1] // 4):
        raise ValueError(f"{prefix}: not GA3C-CADRL's network (unexpected shapes)")
    return Ga3cNetwork(avg, std, shape[1], float(forget), variables)


# -- orca-env's state as the package's sensors see it -----------------------------------------
def _wrap(a):
    """``util.wrap``: an angle in [-pi, pi)."""
    return (np.asarray(a) + np.pi) % (2 * np.pi) - np.pi


class _Baseline:
    """What both policies share: per-episode memory and the package's view of the world."""

    name = ""

    def __init__(self) -> None:
        self._episode = None

    def reset(self, seed: int | None = None) -> None:
        """Forget the last episode (the next call starts a new one)."""
        self._episode = None

    def _start(self, env: Any) -> None:
        if env.episode_config.action != "velocity":
            raise ValueError(f"policy {self.name!r} needs action: velocity (it picks "
                             f"velocities), the env has action: {env.episode_config.action}")
        pos, targets = env.sim.positions, env.targets
        self._episode = env.sim
        self._prev_vel = np.array(env.sim.velocities, dtype=np.float64)
        to_goal = targets - pos
        self._heading = np.arctan2(to_goal[:, 1], to_goal[:, 0])  # the package's reset

    def _view(self, env: Any):
        """Positions, velocities, radii, targets, pref speeds, headings, active flags."""
        if env.sim is not self._episode:
            self._start(env)
        pos = np.array(env.sim.positions, dtype=np.float64)
        vel = np.array(env.sim.velocities, dtype=np.float64)
        heads = np.array(env.headings)
        holo = np.isnan(heads)
        moving = np.hypot(vel[:, 0], vel[:, 1]) > _EPS
        heads[holo & moving] = np.arctan2(vel[holo & moving, 1], vel[holo & moving, 0])
        still = holo & ~moving
        heads[still] = self._heading[still]
        self._heading = heads.copy()
        return (pos, vel, np.asarray(env.radii, dtype=np.float64), np.asarray(env.targets),
                np.asarray(env.pref_speeds, dtype=np.float64), heads,
                np.asarray(env.sim.active, dtype=bool))

    def _sorted_others(self, i, pos, radii, targets, active, closest_first):
        """``OtherAgentsStatesSensor``'s order of the agents ``i`` sees, and its frame."""
        to_goal = targets[i] - pos[i]
        dist = math.hypot(to_goal[0], to_goal[1])
        prll = to_goal / dist if dist > 1e-8 else to_goal
        orth = np.array([-prll[1], prll[0]])
        others = np.where(active & (np.arange(len(pos)) != i))[0]
        rel = pos[others] - pos[i]
        gaps = np.hypot(rel[:, 0], rel[:, 1]) - radii[i] - radii[others]
        key_gap = np.array([round(float(g), 2) for g in gaps])
        key_orth = rel @ orth
        order = np.lexsort((key_orth, key_gap if closest_first else -key_gap))
        return others[order], prll, orth, dist

    def _finish(self, env: Any, live: np.ndarray, speed: np.ndarray, angle: np.ndarray) -> dict:
        self._heading[live] = angle
        self._prev_vel = np.array(env.sim.velocities, dtype=np.float64)
        v = np.stack([speed * np.cos(angle), speed * np.sin(angle)], axis=1)
        return env.velocity_actions(v)


class CadrlPolicy(_Baseline):
    """CADRL (SA-CADRL's value network with its look-ahead) for every live learned agent.

    See the module's documentation for how orca-env's state becomes its observation.

    Raises:
        ImportError: At construction, if gym-collision-avoidance is not installed.
    """

    name = "cadrl"

    def __init__(self) -> None:
        super().__init__()
        self.net = load_cadrl_network()

    def __call__(self, observations: dict, env: Any) -> dict:
        """Actions of the live agents (``env.agents``)."""
        pos, vel, radii, targets, pref, heads, active = self._view(env)
        live = np.asarray(env.live_slots)
        speed, angle = np.empty(len(live)), np.empty(len(live))
        queries, asked = [], []
        # The others' velocities averaged over the last two steps (CADRLPolicy: filter_vel).
        filtered = (vel + self._prev_vel) / 2.0
        f_speed = np.hypot(filtered[:, 0], filtered[:, 1])
        f_angle = np.arctan2(filtered[:, 1], filtered[:, 0])
        states = np.column_stack([pos, vel, heads, pref, targets, radii, np.zeros(len(pos))])
        for q, i in enumerate(live):
            order, prll, orth, dist = self._sorted_others(i, pos, radii, targets, active,
                                                          closest_first=False)
            seen = order[-min(len(order), _CADRL_NUM_AGENTS - 1):] if len(order) else order
            if len(seen) == 0:  # nobody in sight: straight to the goal
                speed[q], angle[q] = pref[i], math.atan2(prll[1], prll[0]) if dist > 1e-8 \
                    else heads[i]
                continue
            queries.append((states[i], states[seen],
                            np.stack([f_speed[seen], f_angle[seen]], axis=1)))
            asked.append(q)
        for q, best in zip(asked, cadrl_actions(self.net, queries), strict=True):
            speed[q], angle[q] = best
        return self._finish(env, live, speed, _wrap(angle))


class Ga3cCadrlPolicy(_Baseline):
    """GA3C-CADRL (the IROS18 LSTM policy) for every live learned agent, in one batch.

    See the module's documentation for how orca-env's state becomes its observation.

    Raises:
        ImportError: At construction, if gym-collision-avoidance is not installed.
    """

    name = "ga3c_cadrl"

    def __init__(self) -> None:
        super().__init__()
        self.net = load_ga3c_network()
        self.actions = ga3c_actions()

    def observe(self, env: Any) -> np.ndarray:
        """``(len(env.agents), 5 + 7 * 18)`` observation vectors, as the package builds them."""
        pos, vel, radii, targets, pref, heads, active = self._view(env)
        live = np.asarray(env.live_slots)
        obs = np.zeros((len(live), 5 + 7 * _GA3C_MAX_OTHERS))
        for q, i in enumerate(live):
            order, prll, orth, dist = self._sorted_others(i, pos, radii, targets, active,
                                                          closest_first=True)
            seen = order[:_GA3C_MAX_OTHERS]
            rel = pos[seen] - pos[i]
            rows = np.column_stack([rel @ prll, rel @ orth, vel[seen] @ prll, vel[seen] @ orth,
                                    radii[seen], radii[i] + radii[seen],
                                    np.linalg.norm(rel, axis=1) - radii[i] - radii[seen]])
            heading_ego = _wrap(heads[i] - math.atan2(prll[1], prll[0]))
            obs[q, :5] = [len(seen), dist, heading_ego, pref[i], radii[i]]
            obs[q, 5:5 + rows.size] = rows.reshape(-1)
        return obs

    def __call__(self, observations: dict, env: Any) -> dict:
        """Actions of the live agents (``env.agents``)."""
        obs = self.observe(env)
        live = np.asarray(env.live_slots)
        if len(live) == 0:
            return {}
        best = self.actions[np.argmax(self.net(obs), axis=1)]
        pref = np.asarray(env.pref_speeds, dtype=np.float64)[live]
        return self._finish(env, live, pref * best[:, 0], _wrap(self._heading[live] + best[:, 1]))


def env_settings() -> dict:
    """The env config keys both policies need: their actions are velocities."""
    return {"action": "velocity"}


#: The policies by the name ``--policy`` takes.
POLICIES = {"cadrl": CadrlPolicy, "ga3c_cadrl": Ga3cCadrlPolicy}
