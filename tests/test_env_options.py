"""The env options for tensor libraries (issue 26, item 1): numeric infos, finished agents'
actions, the absorbing state, and ``max_cycles`` as PettingZoo's name for ``max_steps``."""

import numpy as np
import pytest

import orca_env
from orca_env.codes import STATUSES, Hit, Status
from orca_env.infos import NUMERIC_KEYS, numeric_keys
from orca_env.scenarios import SCENARIOS, register_scenario

CFG = "circle_dense"  # 16 learned agents that leave at their goals, some collide


def run(env, seed, steps=10_000, noise=0.4):
    """Step ``env`` with noisy heuristic actions (the same draws for every env and seed).

    Returns the list of ``(obs, rew, term, trunc, infos, positions, agents)`` per step, the
    reset's ``(obs, infos)`` first.
    """
    rng = np.random.default_rng(seed)
    obs, infos = env.reset(seed=seed)
    out = [(obs, infos)]
    for _ in range(steps):
        if not env.agents:
            break
        noise_all = rng.normal(0.0, noise, (len(env.possible_agents), 2))
        acts = {a: np.clip(h + noise_all[env.possible_agents.index(a)], -1, 1)
                for a, h in env.heuristic_actions().items()}
        out.append(env.step(acts) + (env.sim.positions.copy(), list(env.agents)))
    return out


@pytest.fixture
def heading_scenario():
    """A scenario with a reward term of its own (``heading``), registered for one test."""
    saved = dict(SCENARIOS)
    base = SCENARIOS["corridor_v0"]

    class Heading(base):
        name = "corridor_heading_test_v0"
        EXTRA_REWARDS = {"heading": 0.01}

        def reward_terms(self, view, slots):
            return np.ones((len(slots), 1))

    register_scenario(Heading)
    yield Heading.name
    SCENARIOS.clear()
    SCENARIOS.update(saved)


# -- numeric infos --------------------------------------------------------------------------
def test_numeric_infos_are_numbers_with_fixed_keys_and_match_full_infos(heading_scenario):
    kw = dict(scenario=heading_scenario, max_steps=80)
    full = orca_env.parallel_env(**kw)
    num = orca_env.parallel_env(infos="numeric", **kw)
    a_run, b_run = run(full, 3), run(num, 3)
    assert len(a_run) == len(b_run) > 10
    keys = numeric_keys(num.reward_term_names)
    assert "reward_heading" in keys and keys[0] == "status" and len(keys) == len(
        NUMERIC_KEYS) + len(num.reward_term_names)
    types = {k: NUMERIC_KEYS.get(k, (float,))[0] for k in keys}
    seen_status, seen_hit = set(), set()
    for t, (a, b) in enumerate(zip(a_run, b_run, strict=True)):
        fi, ni = a[4] if t else a[1], b[4] if t else b[1]
        if t:
            for x, y in zip(a[:4], b[:4], strict=True):  # the episode is the same
                assert x.keys() == y.keys()
                assert all(np.array_equal(x[k], y[k]) for k in x)
        assert fi.keys() == ni.keys()
        for agent, info in ni.items():
            assert tuple(info) == keys, (t, agent)  # the same keys at reset and every step
            for k, v in info.items():
                assert type(v) is types[k], (t, agent, k, v)  # numbers only: no str, None, dict
            f = fi[agent]
            assert STATUSES[info["status"]] == f["status"]
            assert info["group"] == full.group_names.index(f["group"])
            hit = {None: Hit.NONE, "agent": Hit.AGENT, "obstacle": Hit.OBSTACLE}
            assert info["collided_with"] == hit[f["collided_with"]]
            for term in num.reward_term_names:
                assert info[f"reward_{term}"] == f["reward_terms"].get(term, 0.0)
            for k in ("intervention", "num_orca_lines", "used_lp3", "position_corrected",
                      "distance_to_goal", "nearest_separation"):
                assert info[k] == f[k]
            assert info["active"] is True
            seen_status.add(info["status"])
            seen_hit.add(info["collided_with"])
    assert {Status.ACTIVE, Status.TIMED_OUT} <= seen_status
    assert b_run[2][4]["agent_0"]["reward_heading"] == pytest.approx(0.01)


def test_numeric_infos_for_a_spec():
    """What a tensor library does: a spec (dtype per key) from the reset infos fits every step."""
    env = orca_env.parallel_env(CFG, infos="numeric", finished_agents="absorb", max_steps=40)
    steps = run(env, 0)
    spec = {k: np.asarray(v).dtype for k, v in steps[0][1]["agent_0"].items()}
    assert all(dt.kind in "biuf" for dt in spec.values())
    for _, _, _, _, infos, _, _ in steps[1:]:
        assert set(infos) == set(env.possible_agents)
        for info in infos.values():
            assert {k: np.asarray(v).dtype for k, v in info.items()} == spec
    table = {k: np.array([i[k] for i in steps[-1][4].values()]) for k in spec}
    assert table["status"].dtype == np.int64 and table["active"].dtype == bool


# -- finished agents' actions ---------------------------------------------------------------
def test_finished_actions_ignore_accepts_actions_of_finished_agents():
    strict = orca_env.parallel_env(CFG, max_steps=60)
    lax = orca_env.parallel_env(CFG, max_steps=60, finished_actions="ignore")
    strict.reset(seed=1)
    lax.reset(seed=1)
    rng = np.random.default_rng(0)
    left = 0
    while strict.agents:
        acts = {a: rng.uniform(-1, 1, 2) for a in lax.possible_agents}  # every agent, always
        if len(strict.agents) < 16:
            with pytest.raises(ValueError, match="unknown or finished agent .*finished_actions"):
                strict.step(acts)
        o1, r1, *_ = strict.step({a: acts[a] for a in strict.agents})
        o2, r2, *_ = lax.step(acts)
        assert r1 == r2 and all(np.array_equal(o1[a], o2[a]) for a in o1)
        left = max(left, 16 - len(lax.agents))
    assert left > 0 and lax.agents == []
    lax.reset(seed=1)
    with pytest.raises(ValueError, match="'agent_99'"):
        lax.step({**{a: np.zeros(2) for a in lax.agents}, "agent_99": np.zeros(2)})
    with pytest.raises(ValueError, match="no action for live agent 'agent_0'"):
        lax.step({a: np.zeros(2) for a in lax.agents[1:]})


@pytest.mark.parametrize("kw, match", [
    (dict(infos="numbers"), "infos must be one of"),
    (dict(finished_agents="dead"), "finished_agents must be one of"),
    (dict(finished_actions=True), "finished_actions must be one of"),
])
def test_option_errors(kw, match):
    with pytest.raises(ValueError, match=match):
        orca_env.parallel_env(CFG, **kw)


# -- the absorbing state --------------------------------------------------------------------
def last_step_mixed_seed():
    """A seed whose episode (max_steps 36, noisy heuristic) ends with agents at goal earlier
    and the rest timed out on the last step."""
    for seed in range(20):
        env = orca_env.parallel_env(CFG, max_steps=36)
        steps = run(env, seed)
        early = sum(sum(s[2].values()) for s in steps[1:-1])
        if early and any(steps[-1][3].values()):
            return seed
    raise AssertionError("no seed gives agents that finish early and a time-out")


def test_absorb_keeps_every_agent_until_the_world_ends():
    seed = last_step_mixed_seed()
    leave = orca_env.parallel_env(CFG, max_steps=36)
    absorb = orca_env.parallel_env(CFG, max_steps=36, finished_agents="absorb")
    a_run, b_run = run(leave, seed), run(absorb, seed)
    assert len(a_run) == len(b_run)
    ret_a = dict.fromkeys(leave.possible_agents, 0.0)
    ret_b = dict.fromkeys(leave.possible_agents, 0.0)
    ended = {}  # agent -> (step, terminated) in the leave env
    for t, (a, b) in enumerate(zip(a_run[1:], b_run[1:], strict=True), start=1):
        obs_a, rew_a, te_a, tr_a, inf_a, pos_a, _ = a
        obs_b, rew_b, te_b, tr_b, inf_b, pos_b, agents_b = b
        assert np.array_equal(pos_a, pos_b)  # the same world
        last = t == len(a_run) - 1
        assert set(obs_b) == set(absorb.possible_agents)  # every agent on every step
        assert agents_b == ([] if last else absorb.possible_agents)
        for agent in absorb.possible_agents:
            ret_b[agent] += rew_b[agent]
            if agent in obs_a:
                ret_a[agent] += rew_a[agent]
                assert np.array_equal(obs_a[agent], obs_b[agent]) and rew_a[agent] == rew_b[agent]
                assert inf_b[agent]["active"] and inf_b[agent]["status"] == inf_a[agent]["status"]
                if te_a[agent] or tr_a[agent]:
                    ended[agent] = (t, te_a[agent])
            else:  # finished earlier: absorbing
                assert not obs_b[agent].any() and rew_b[agent] == 0.0
                assert inf_b[agent]["active"] is False
                assert inf_b[agent]["status"] in ("at_goal", "collided")
            if not last:
                assert not te_b[agent] and not tr_b[agent]
        if last:
            # Everyone ends together: terminated as they did, and all truncated (time-out).
            assert all(tr_b.values())
            assert {a for a in te_b if te_b[a]} == {a for a, (_, te) in ended.items() if te}
    assert ret_a == pytest.approx(ret_b)
    assert any(step < len(a_run) - 1 for step, _ in ended.values())  # some absorbed early
    assert any(te for _, te in ended.values()) and not all(te for _, te in ended.values())


def test_absorb_all_terminated_world_end_and_actions():
    env = orca_env.parallel_env(CFG, finished_agents="absorb")  # max_steps 100: all finish
    env.reset(seed=0)
    absorbed = 0
    while env.agents:
        acts = env.heuristic_actions()
        assert set(acts) == set(env.agents) == set(env.possible_agents)
        live = env.live_agents
        assert len(live) == len(env.live_slots)
        if len(live) < len(env.agents):  # the absorbing agents' actions: required, ignored
            absorbed += 1
            assert not any(acts[a].any() for a in env.agents if a not in live)
            with pytest.raises(ValueError, match="which finished and absorbs"):
                env.step({a: acts[a] for a in live})
        _, _, te, tr, infos = env.step(acts)
    assert absorbed > 5 and all(te.values()) and not any(tr.values())
    assert env.live_agents == []
    # finished_actions="ignore" lets the absorbing agents' actions be left out.
    lax = orca_env.parallel_env(CFG, finished_agents="absorb", finished_actions="ignore")
    lax.reset(seed=0)
    while lax.agents:
        acts = lax.heuristic_actions()
        lax.step({a: acts[a] for a in lax.live_agents})
    assert lax.step_count == env.step_count


# -- max_cycles -----------------------------------------------------------------------------
def test_max_cycles_is_max_steps():
    from pettingzoo.test import max_cycles_test

    assert orca_env.parallel_env(max_cycles=7).max_steps == 7
    assert orca_env.parallel_env(max_cycles=7, max_steps=7).max_steps == 7
    assert orca_env.parallel_env({"max_cycles": 9}).max_steps == 9
    # A keyword overrides the file's max_steps (circle_dense.yaml: 100).
    assert orca_env.parallel_env(CFG, max_cycles=5).max_steps == 5
    with pytest.raises(ValueError, match="'max_steps' and 'max_cycles'.*differ: 7 and 8"):
        orca_env.parallel_env(max_cycles=8, max_steps=7)
    with pytest.raises(ValueError, match="max_steps"):
        orca_env.parallel_env(max_cycles=0)
    max_cycles_test(orca_env)
