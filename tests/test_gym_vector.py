"""OrcaVectorEnv as a Gymnasium vector env (issue 26, item 2): NEXT_STEP autoreset, per-row
infos, the absorbing state, make_vec's vector entry point, and Gymnasium's vector wrappers."""

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode
from gymnasium.wrappers import vector as vw

import orca_env
from orca_env.single import GENERIC_ID, GYM_IDS, SingleAgentEnv
from orca_env.vector import OrcaVectorEnv

pytestmark = pytest.mark.filterwarnings("ignore:actions outside the box")
NEXT, SAME = AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP


def run_pair(config, worlds, steps, seed, mode, finished_agents="leave", **kw):
    """Step a vector env and one OrcaEnv per world (numeric infos) with the same actions.

    Checks every row against its world's single env, bit for bit: observations, rewards,
    flags and numeric infos; with NEXT_STEP the step after a world's end returns its first
    observation (reward 0, no flags, world not stepped). Returns (world resets, finished rows).
    """
    opts = dict(infos="numeric", finished_agents=finished_agents)
    v = OrcaVectorEnv(config, worlds, seed=seed, autoreset_mode=mode, **opts, **kw)
    assert v.metadata["autoreset_mode"] is mode
    envs = [orca_env.parallel_env(config, **opts, **kw) for _ in range(worlds)]
    L = v.num_agents_per_world
    obs, info = v.reset()

    def same_reset(b, e, o, inf, obs, info, skip=()):
        for k, a in enumerate(e.possible_agents):
            row = b * L + k
            assert np.array_equal(obs[row], o[a])
            for key, val in inf[a].items():
                assert key in skip or info[key][row] == val, (key, row)

    for b, e in enumerate(envs):
        same_reset(b, e, *e.reset(seed=seed + b), obs, info)
    rng = np.random.default_rng(seed)
    pending = [False] * worlds
    resets = finished = 0
    for t in range(steps):
        act = rng.uniform(-1.2, 1.2, (worlds * L, 2))
        for b, e in enumerate(envs):
            if e.agents and t % 3:
                for a, h in e.heuristic_actions().items():
                    act[b * L + e.possible_agents.index(a)] = h
        obs, rew, term, trunc, info = v.step(act)
        # One entry per row (SAME_STEP keeps its per-world world_reset, (B,)).
        assert all(len(x) == v.num_envs for k, x in info.items()
                   if not (k == "world_reset" and mode is SAME))
        assert len(info["world_reset"]) == (worlds if mode is SAME else v.num_envs)
        for b, e in enumerate(envs):
            rows = slice(b * L, (b + 1) * L)
            if pending[b]:  # NEXT_STEP: this step resets the world and returns its start
                pending[b] = False
                resets += 1
                o, inf = e.reset()
                same_reset(b, e, o, inf, obs, info, skip=("active",))  # the rows did not act
                assert not rew[rows].any() and not term[rows].any() and not trunc[rows].any()
                assert info["world_reset"][rows].all() and not info["active"][rows].any()
                continue
            o, r, te, tr, inf = e.step({a: act[b * L + e.possible_agents.index(a)]
                                        for a in e.agents})
            for k, a in enumerate(e.possible_agents):
                row = b * L + k
                if a not in o:  # left earlier (finished_agents="leave")
                    restarted = mode is SAME and not e.agents  # obs: the next episode's
                    assert restarted or not obs[row].any()
                    assert rew[row] == 0.0 and not info["active"][row]
                    continue
                done = te[a] or tr[a]
                finished += done
                got = info["final_obs"][row] if done and mode is SAME else obs[row]
                assert np.array_equal(got, o[a]), (t, b, a)
                assert (rew[row], term[row], trunc[row]) == (r[a], te[a], tr[a]), (t, b, a)
                for key, val in inf[a].items():
                    assert info[key][row] == val, (t, b, a, key)
            if mode is NEXT:
                assert not info["world_reset"][rows].any()
            if not e.agents:
                assert not info["alive"][rows].any() if mode is NEXT else info["alive"][rows].all()
                if mode is SAME:  # reset on this step: obs holds the first observation
                    resets += 1
                    assert info["world_reset"][b]
                    o, _ = e.reset()
                    for k, a in enumerate(e.possible_agents):
                        assert np.array_equal(obs[b * L + k], o[a])
                else:
                    pending[b] = True
    v.close()
    return resets, finished


@pytest.mark.parametrize("config, kw", [
    ("circle_dense", {}),
    ("blocks", dict(max_steps=40)),             # crowd noise from each world's generator
    ("random_obstacles", dict(max_steps=50)),   # guidance, crowds with new goals
])
@pytest.mark.parametrize("mode", [NEXT, SAME])
def test_bit_identical_to_single_envs(config, kw, mode):
    resets, finished = run_pair(config, 3, 160, seed=5, mode=mode, **kw)
    assert resets >= 2 and finished > 0


@pytest.mark.parametrize("mode", [NEXT, SAME])
def test_absorbing_bit_identical_to_single_envs(mode):
    resets, finished = run_pair("circle_dense", 2, 150, seed=9, mode=mode,
                                finished_agents="absorb", max_steps=45)
    assert resets >= 2 and finished >= 2 * 16


def test_absorbing_rows_end_together():
    v = OrcaVectorEnv("circle_dense", 2, seed=3, finished_agents="absorb", max_steps=40,
                      autoreset_mode=NEXT)
    v.reset()
    ends = 0
    for _ in range(130):
        obs, rew, term, trunc, info = v.step(np.zeros((32, 2)) + [[1.0, 0.0]])
        done = (term | trunc).reshape(2, 16)
        assert (done.all(axis=1) | ~done.any(axis=1)).all()  # a world's rows end together
        for b in np.flatnonzero(done.all(axis=1)):
            ends += 1
            assert trunc[b * 16:(b + 1) * 16].all() or term[b * 16:(b + 1) * 16].all()
        idle = ~info["active"] & ~info["world_reset"]
        assert not obs[idle].any() and not rew[idle].any()
        assert info["alive"][~info["active"] & ~info["world_reset"]].sum() == 0
    assert ends >= 4


def test_options_errors():
    for kw, match in [(dict(autoreset_mode="Disabled"), "autoreset_mode"),
                      (dict(autoreset_mode=3), "autoreset_mode"),
                      (dict(finished_agents="ghost"), "finished_agents"),
                      (dict(infos="full"), "infos")]:
        with pytest.raises(ValueError, match=match):
            OrcaVectorEnv("circle_dense", 2, **kw)
    assert OrcaVectorEnv("circle_dense", 1, autoreset_mode="next_step").metadata[
        "autoreset_mode"] is NEXT
    assert OrcaVectorEnv("circle_dense", 1, autoreset_mode="NextStep").autoreset_mode is NEXT
    assert OrcaVectorEnv("circle_dense", 1).metadata["autoreset_mode"] is SAME  # the default


# -- make_vec ---------------------------------------------------------------------------------
@pytest.mark.parametrize("env_id", sorted(GYM_IDS))
def test_make_vec_vector_entry_point(env_id):
    envs = gym.make_vec(env_id, num_envs=3, vectorization_mode="vector_entry_point", seed=4)
    assert isinstance(envs, OrcaVectorEnv) and envs.num_envs == 3
    assert envs.metadata["autoreset_mode"] is NEXT
    assert envs.spec.id == env_id
    obs, _ = envs.reset()
    for b in range(3):  # row b is the robot of a SingleAgentEnv reset with seed 4 + b
        o, _ = SingleAgentEnv(GYM_IDS[env_id]).reset(seed=4 + b)
        assert np.array_equal(obs[b], o)
    envs.close()


def test_make_vec_modes_and_errors():
    env_id = "orca_env/CrowdNavSquare-v0"
    assert isinstance(gym.make_vec(env_id, num_envs=2), OrcaVectorEnv)  # its default mode
    sync = gym.make_vec(env_id, num_envs=2, vectorization_mode="sync")
    assert isinstance(sync, gym.vector.SyncVectorEnv)
    same = gym.make_vec(env_id, num_envs=2, autoreset_mode="same_step", max_steps=30)
    assert same.metadata["autoreset_mode"] is SAME and same.config.max_steps == 30
    mine = gym.make_vec(GENERIC_ID, num_envs=2, config="crowdnav_circle")
    assert isinstance(mine, OrcaVectorEnv)
    with pytest.raises(ValueError, match="exactly one learned agent.*has 16"):
        gym.make_vec(GENERIC_ID, num_envs=2, config="circle_dense")
    with pytest.raises(ValueError, match="num_envs"):
        gym.make_vec(env_id, num_envs=0, vectorization_mode="vector_entry_point")


# -- Gymnasium's vector wrappers --------------------------------------------------------------
def venv(**kw):
    return OrcaVectorEnv("circle_dense", 2, seed=0, autoreset_mode=NEXT, max_steps=40, **kw)


def heuristic(rng, n):
    """Full speed towards the goal (the goal-aligned frame's x axis), with noise."""
    return np.clip(np.array([[1.0, 0.0]]) + rng.normal(0.0, 0.3, (n, 2)), -1, 1)


def test_observation_wrappers():
    raw = venv()
    refused = OrcaVectorEnv("circle_dense", 2)  # SAME_STEP: the observation wrappers refuse it
    with pytest.raises((AssertionError, ValueError)):  # gymnasium 1.2 asserts, 1.4 raises
        vw.NormalizeObservation(refused)
    norm = vw.NormalizeObservation(venv())
    scaled = vw.TransformObservation(venv(), lambda o: 2.0 * o, raw.observation_space)
    f64 = vw.DtypeObservation(venv(), np.float64)
    flat = vw.FlattenObservation(venv())
    outs = {name: env.reset()[0] for name, env in
            dict(raw=raw, norm=norm, scaled=scaled, f64=f64, flat=flat).items()}
    rng = np.random.default_rng(0)
    for _ in range(90):  # two world ends and resets
        act = heuristic(rng, 32)
        for name, env in dict(raw=raw, norm=norm, scaled=scaled, f64=f64, flat=flat).items():
            outs[name] = env.step(act)[0]
        assert np.array_equal(outs["scaled"], 2.0 * outs["raw"])
        assert outs["f64"].dtype == np.float64 and np.array_equal(outs["f64"], outs["raw"])
        assert np.array_equal(outs["flat"], outs["raw"])
        assert outs["norm"].shape == outs["raw"].shape
    assert np.abs(outs["norm"]).max() < 10.0 and not np.allclose(outs["norm"], outs["raw"])


def test_dict_info_to_list_and_normalize_reward():
    for infos in (True, "numeric"):
        env, twin = vw.DictInfoToList(venv(infos=infos)), venv(infos=infos)  # the same steps
        _, listed = env.reset()
        _, info = twin.reset()
        assert len(listed) == 32 and listed[0]["alive"]
        rng = np.random.default_rng(1)
        finals = 0
        for _ in range(50):
            act = heuristic(rng, 32)
            *_, listed = env.step(act)
            *_, info = twin.step(act)
            assert len(listed) == 32 and set(info) >= {"alive", "active", "world_reset"}
            for i in range(32):
                assert listed[i].keys() == {k for k in info if not k.startswith("_")}
                for k, val in listed[i].items():
                    assert np.array_equal(val, info[k][i]), (i, k)
            finals += int(info["world_reset"].any())
        assert finals >= 1
    rewards = vw.NormalizeReward(venv(), gamma=0.99)
    plain = venv()
    rewards.reset()
    plain.reset()
    rng = np.random.default_rng(2)
    seen = []
    for _ in range(60):
        act = heuristic(rng, 32)
        r_norm, r_raw = rewards.step(act)[1], plain.step(act)[1]
        assert np.isfinite(r_norm).all() and ((r_norm == 0) == (r_raw == 0)).all()
        seen.append(r_norm / np.where(r_raw == 0, 1.0, r_raw))
    assert not np.allclose(np.concatenate(seen), 1.0)


def test_record_episode_statistics_per_agent():
    """Episode returns and lengths as a manual count gives them, per agent, not per slot."""
    env = vw.RecordEpisodeStatistics(venv(finished_agents="absorb"))
    env.reset()
    rng = np.random.default_rng(3)
    ret, length = np.zeros(32), np.zeros(32, dtype=int)
    got, want, agent_lengths = [], [], []
    since = np.zeros(32, dtype=int)
    for _ in range(200):
        obs, rew, term, trunc, info = env.step(heuristic(rng, 32))
        reset_rows = info["world_reset"]
        ret[reset_rows], length[reset_rows], since[reset_rows] = 0.0, 0, 0
        ret += np.where(info["active"], rew, 0.0)  # only the agent's own steps pay
        length += ~reset_rows
        since += info["active"]
        done = term | trunc
        if done.any():
            got += list(zip(info["episode"]["r"][done], info["episode"]["l"][done],
                            strict=True))
            want += list(zip(ret[done], length[done], strict=True))
            agent_lengths += since[done].tolist()
    assert len(got) >= 4 * 16
    assert np.allclose(got, want)
    # Rows of a world end together: each row's episode is its world's; its return its agent's.
    assert min(agent_lengths) < np.mean([g[1] for g in got])
    single = vw.RecordEpisodeStatistics(gym.make_vec("orca_env/CrowdNavCircle-v0", num_envs=4,
                                                     seed=0))
    single.reset()
    counts, lens = np.zeros(4, dtype=int), []
    for _ in range(150):  # one robot per world: the row's episode is the robot's
        *_, term, trunc, info = single.step(heuristic(rng, 4))
        counts = np.where(info["world_reset"], 0, counts + 1)
        if (term | trunc).any():
            assert np.array_equal(info["episode"]["l"][term | trunc], counts[term | trunc])
            lens += counts[term | trunc].tolist()
    assert len(lens) >= 4


def test_crowd_agents_at_their_goal_get_new_ones():
    """Every new_goal crowd agent that reaches its goal gets a new one on that step (also when
    several arrive at once: the pipeline's renewal counts per world)."""
    from orca_env.codes import Population

    for seed in (0, 7):
        env = orca_env.parallel_env("corridor")
        env.reset(seed=seed)
        crowd = np.flatnonzero(env.populations == Population.ORCA)
        renewed = 0
        for _ in range(120):
            before = env.goals[crowd].copy()
            env.step(env.heuristic_actions())
            renewed += int((env.goals[crowd] != before).any(axis=1).sum())
            gap = np.linalg.norm(env.sim.positions[crowd] - env.goals[crowd], axis=1)
            assert (gap > env.goal_tolerances[crowd]).all()
            if not env.agents:
                break
        assert renewed >= 2


def test_one_world_next_step_is_bit_identical():
    resets, finished = run_pair("blocks", 1, 100, seed=2, mode=NEXT, max_steps=30)
    assert resets >= 2 and finished > 0


# -- partial resets (reset(options={"reset_mask": ...})) -----------------------------------
@pytest.mark.parametrize("infos", [False, "numeric"])
def test_partial_reset_is_a_world_reset_with_its_seed(infos):
    """World 1 reset alone: it starts as a single env reset with its seed and then steps
    like it; worlds 0 and 2 go on exactly as in a vector env that was not reset."""
    B, L = 3, 16
    v = OrcaVectorEnv("circle_dense", B, seed=4, infos=infos)
    ref = OrcaVectorEnv("circle_dense", B, seed=4, infos=infos)
    single = orca_env.parallel_env("circle_dense", infos=infos or "full")
    rng = np.random.default_rng(0)
    v.reset(), ref.reset()
    for _ in range(5):
        act = rng.uniform(-1, 1, (B * L, 2))
        last, *_ = v.step(act)
        ref.step(act)
    mask = np.zeros(B * L, dtype=bool)
    mask[L:2 * L] = True
    obs, info = v.reset(seed=[0, 77, 0], options={"reset_mask": mask})
    assert np.array_equal(info["reset_mask"], mask) and info["alive"].all()
    assert np.array_equal(obs[~mask], last[~mask])  # the other rows: their last observation
    o, inf = single.reset(seed=77)
    for k, a in enumerate(single.possible_agents):
        assert np.array_equal(obs[L + k], o[a])
        if infos == "numeric":
            for key, val in inf[a].items():
                assert info[key][L + k] == val, key
    for _ in range(20):
        act = rng.uniform(-1, 1, (B * L, 2))
        obs, rew, term, trunc, _ = v.step(act)
        o_ref, rew_ref, *_ = ref.step(act)
        assert np.array_equal(obs[~mask], o_ref[~mask]) and np.array_equal(rew[~mask],
                                                                             rew_ref[~mask])
        if single.agents:
            o, r, *_ = single.step({a: act[L + single.possible_agents.index(a)]
                                    for a in single.agents})
            for a in o:
                k = single.possible_agents.index(a)
                assert np.array_equal(obs[L + k], o[a]) and rew[L + k] == r[a]


def test_partial_reset_clears_a_pending_next_step_reset():
    v = OrcaVectorEnv("circle_dense", 2, seed=3, finished_agents="absorb", max_steps=5,
                      autoreset_mode=NEXT)
    v.reset()
    for _ in range(5):
        obs, rew, term, trunc, info = v.step(np.zeros((32, 2)))
    assert (term | trunc).all()  # both worlds ended: pending a reset on the next step
    mask = np.repeat([True, False], 16)
    v.reset(options={"reset_mask": mask})
    obs, rew, term, trunc, info = v.step(np.zeros((32, 2)))
    assert not info["world_reset"][:16].any() and info["active"][:16].all()  # world 0 stepped
    assert info["world_reset"][16:].all()  # world 1 resets now, as NEXT_STEP does


def test_partial_reset_errors():
    v = OrcaVectorEnv("circle_dense", 2, seed=3)
    good = np.repeat([True, False], 16)
    with pytest.raises(RuntimeError, match="before the first reset"):
        v.reset(options={"reset_mask": good})
    v.reset()
    before, *_ = v.step(np.zeros((32, 2)))
    half = good.copy()
    half[3] = False
    for mask, match in [(half, r"rows 0\.\.15 of world 0 must be all True or all False"),
                        (good[:16], r"\(32,\) bool array over rows, got shape \(16,\)"),
                        (good.astype(int), "dtype int64"),
                        (np.zeros(32, dtype=bool), "selects no row")]:
        with pytest.raises(ValueError, match=match):
            v.reset(options={"reset_mask": mask})
    after, *_ = v.step(np.zeros((32, 2)))  # nothing was reset by the failed calls
    ref = OrcaVectorEnv("circle_dense", 2, seed=3)
    ref.reset()
    ref.step(np.zeros((32, 2)))
    assert np.array_equal(after, ref.step(np.zeros((32, 2)))[0])
