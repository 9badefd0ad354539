"""Scenario mixtures (config key mixture): draws, determinism, validation, adapters."""

import copy
import warnings

import numpy as np
import pytest

import orca_env
from orca_env.config import load_config, universal_observation
from orca_env.mixture import Mixture
from orca_env.observations import make_universal_space
from orca_env.scenarios import SpawnError

COMMON = {"observation": {"layout": "universal", "num_agents": 6, "num_obstacles": 4},
          "collision_tolerance": {"relative": 0.01}}
ENTRIES = [
    {"config": "circle_dense", "weight": 2, "set": {"groups.0.count": 4},
     "ranges": {"scenario_kwargs.circle_radius": [3.0, 6.0]}},
    {"config": "crowdnav_circle", "set": {"groups.0.count": 4},
     "ranges": {"groups.1.count": [0, 6], "groups.1.radius": [0.2, 0.4]}},
    {"config": "corridor", "weight": 1, "set": {"groups.0.count": 4},
     "ranges": {"groups.1.count": [2, 10], "max_steps": [50, 80]}},
]


def mix(**over):
    return {"mixture": copy.deepcopy(ENTRIES), **copy.deepcopy(COMMON), **over}


def test_one_agent_list_and_one_space_for_all_entries():
    env = orca_env.parallel_env(mix())
    assert env.possible_agents == [f"agent_{k}" for k in range(4)]
    space = env.observation_space("agent_0")
    assert space == make_universal_space(6, 4)
    rng = np.random.default_rng(0)
    seen = set()
    for seed in range(12):
        obs, _ = env.reset(seed=seed)
        seen.add(env.scenario.name)
        assert env.episode_config.scenario == env.scenario.name
        for t in range(15):
            for o in obs.values():
                assert space.contains(o)
            if not env.agents:
                break
            acts = {a: rng.uniform(-1, 1, 2).astype(np.float32) for a in env.agents} \
                if t % 2 else env.heuristic_actions()
            obs, *_ = env.step(acts)
    assert seen == {"circle_v0", "crowdnav_circle_v0", "corridor_v1"}


def test_draws_are_deterministic_and_come_first_from_the_seeded_generator():
    env = orca_env.parallel_env(mix())
    again = orca_env.parallel_env(mix())
    mixture = Mixture(load_config(mix()).mixture)
    for seed in range(8):
        obs, _ = env.reset(seed=seed)
        obs2, _ = again.reset(seed=seed)
        k, cfg, values = mixture.draw(np.random.Generator(np.random.PCG64(seed)))
        assert (env.mixture_entry, env.mixture_values) == (k, values)
        assert env.episode_config == cfg
        assert obs.keys() == obs2.keys()
        assert all(np.array_equal(obs[a], obs2[a]) for a in obs)
        assert np.array_equal(env.sim.positions, again.sim.positions)
    # Resets without a seed continue the generator, identically in both envs.
    for _ in range(5):
        env.reset()
        again.reset()
        assert (env.mixture_entry, env.mixture_values) == (again.mixture_entry,
                                                            again.mixture_values)
        assert np.array_equal(env.sim.positions, again.sim.positions)


def test_a_draw_that_cannot_be_placed_is_drawn_again():
    # A corridor of 4 + 300 agents cannot be placed; the mixture draws again from the same
    # generator (it does not die), and an episode placed at the first draw is unchanged.
    crowded = {"config": "corridor", "set": {"groups.0.count": 4, "groups.1.count": 300}}
    feasible = copy.deepcopy(ENTRIES[0])
    env = orca_env.parallel_env({"mixture": [crowded, feasible], **copy.deepcopy(COMMON)})
    plain = orca_env.parallel_env({"mixture": [copy.deepcopy(ENTRIES[0])],
                                   **copy.deepcopy(COMMON)})
    mixture = Mixture(load_config({"mixture": [crowded, feasible], **COMMON}).mixture)

    def first_draw(seed):
        return mixture.draw(np.random.Generator(np.random.PCG64(seed)))[0]

    redrawn = 0
    for seed in range(6):
        before = env.mixture_redraws
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            env.reset(seed=seed)
        # Said once per env (at its first redraw), counted always.
        assert len(caught) == (before == 0 and env.mixture_redraws > 0)
        if caught:
            assert "could not place its agents" in str(caught[0].message)
        assert env.mixture_entry == 1 and env.scenario.name == "circle_v0"
        first = first_draw(seed)
        redrawn += first == 0
        if first == 1:  # placed at the first draw: the same episode as without the bad entry
            plain.reset(seed=seed)
            assert plain.mixture_values == env.mixture_values
            assert np.array_equal(plain.starts, env.starts)
    assert redrawn >= 1 and env.mixture_redraws >= redrawn
    # Only unplaceable draws: a clear error after MIXTURE_SPAWN_DRAWS of them.
    env = orca_env.parallel_env({"mixture": [crowded], **copy.deepcopy(COMMON)})
    with pytest.raises(SpawnError, match=r"mixture: 10 draws in a row could not place their "
                                         r"agents; the last, entry 0 .*corridor_v1: could not"):
        env.reset(seed=0)


def test_a_draw_whose_starts_overlap_is_drawn_again():
    # The env's own start check (a circle too small for its agents) counts as unplaceable too.
    tiny = {"config": "circle_dense", "set": {"groups.0.count": 4, "scenario_kwargs.jitter": 0.0},
            "ranges": {"scenario_kwargs.circle_radius": [0.2, 0.6]}}
    env = orca_env.parallel_env({"mixture": [tiny], **copy.deepcopy(COMMON)})
    with pytest.warns(UserWarning, match="agents start overlapping"):
        for seed in range(10):
            env.reset(seed=seed)
            # 4 agents of radius 0.3 on a circle of radius R are R * sqrt(2) apart: R > 0.42
            assert env.mixture_values["scenario_kwargs.circle_radius"] > 0.42
    assert env.mixture_redraws >= 1


def test_draws_follow_the_weights_and_the_ranges():
    mixture = Mixture(load_config(mix()).mixture)
    assert mixture.probabilities.tolist() == [0.5, 0.25, 0.25]
    rng = np.random.default_rng(123)
    n = 4000
    counts = np.zeros(3)
    values = {k: [] for k in range(3)}
    for _ in range(n):
        k, cfg, v = mixture.draw(rng)
        counts[k] += 1
        values[k].append(v)
        if k == 0:
            assert cfg.scenario_kwargs["circle_radius"] == v["scenario_kwargs.circle_radius"]
        elif k == 1:
            assert cfg.groups[1].count == v["groups.1.count"]
            assert cfg.groups[1].radius == v["groups.1.radius"]
        else:
            assert cfg.max_steps == v["max_steps"]
    p = counts / n
    sd = np.sqrt(mixture.probabilities * (1 - mixture.probabilities) / n)
    assert np.all(np.abs(p - mixture.probabilities) < 4 * sd), p
    radius = np.array([v["scenario_kwargs.circle_radius"] for v in values[0]])
    assert radius.min() >= 3.0 and radius.max() <= 6.0 and abs(radius.mean() - 4.5) < 0.1
    crowd = np.array([v["groups.1.count"] for v in values[1]])
    assert crowd.dtype.kind == "i" and set(crowd.tolist()) == set(range(7))  # both ends drawn
    steps = [v["max_steps"] for v in values[2]]
    assert min(steps) == 50 and max(steps) == 80 and all(isinstance(s, int) for s in steps)
    hum = np.array([v["groups.1.radius"] for v in values[1]])
    assert hum.min() >= 0.2 and hum.max() <= 0.4 and hum.dtype.kind == "f"


def test_the_env_uses_the_drawn_values():
    env = orca_env.parallel_env(mix())
    for seed in range(10):
        env.reset(seed=seed)
        v = env.mixture_values
        if env.mixture_entry == 1:
            assert env.num_slots == 4 + v["groups.1.count"]
            assert np.all(env.radii[4:] == v["groups.1.radius"])
        elif env.mixture_entry == 2:
            assert env.max_steps == v["max_steps"]
        else:
            assert np.allclose(np.linalg.norm(env.starts, axis=1),
                               v["scenario_kwargs.circle_radius"], atol=0.2)


def test_common_keys_apply_to_every_entry_and_round_trip():
    cfg = load_config(mix(max_steps=33, rewards={"goal": 2.0}))
    for e in cfg.entries():
        assert e.max_steps == 33 and e.rewards.goal == 2.0
        assert e.observation.layout == "universal"
        assert e.collision_tolerance == {"absolute": 0.0, "relative": 0.01}
    # The resolved config is the mixture alone, and reads back the same.
    d = cfg.to_dict()
    assert list(d) == ["mixture"]
    assert load_config(d) == cfg and load_config(cfg) == cfg
    # Keyword overrides apply to every entry too.
    env = orca_env.parallel_env(cfg, max_steps=20)
    assert all(e.max_steps == 20 for e in env.config.entries())
    assert universal_observation(cfg) == {"layout": "universal", "frame": "goal",
                                          "num_agents": 6, "num_obstacles": 4}
    assert "mixture" not in load_config("circle_dense").to_dict()


@pytest.mark.parametrize("over, match", [
    ({"mixture": []}, r"'mixture' must be a non-empty list"),
    ({"mixture": [{"weight": 1}]}, r"'mixture\[0\]' needs 'config'"),
    ({"mixture": [{"config": "circle_dense", "wieght": 1}]},
     r"unknown config key 'mixture\[0\].wieght'.*'ranges'"),
    ({"mixture": [{"config": "circle_dense", "weight": 0}]},
     r"'mixture\[0\].weight' must be a finite number > 0, got 0"),
    ({"mixture": [{"config": "circle_dense", "weight": True}]}, r"'mixture\[0\].weight'"),
    ({"mixture": [{"config": "no_such_config"}]}, r"'mixture\[0\].config': .*no_such_config"),
    ({"mixture": [{"config": 3}]}, r"'mixture\[0\].config' must be a config name"),
    ({"mixture": [{"config": {"mixture": [{"config": "circle_dense"}]}}]},
     r"'mixture\[0\].config': mixtures do not nest"),
    ({"mixture": [{"config": "circle_dense", "set": {"groups.3.count": 2}}]},
     r"'mixture\[0\].set.groups.3.count'.*list of 1 items"),
    ({"mixture": [{"config": "circle_dense", "set": {"max_step": 2}}]},
     r"'mixture\[0\]': unknown config key 'max_step'"),
    ({"mixture": [{"config": "circle_dense", "ranges": {"scenario": [0, 1]}}]},
     r"'mixture\[0\].ranges.scenario': not a numeric config key"),
    ({"mixture": [{"config": "circle_dense", "ranges": {"scenario_kwargs.interleave": [0, 1]}}]},
     r"'mixture\[0\].ranges.scenario_kwargs.interleave': not a numeric"),
    ({"mixture": [{"config": "circle_dense", "ranges": {"max_steps": [10.5, 20]}}]},
     r"'mixture\[0\].ranges.max_steps' is an integer key"),
    ({"mixture": [{"config": "circle_dense", "ranges": {"max_steps": [20, 10]}}]},
     r"'mixture\[0\].ranges.max_steps': low must be <= high"),
    ({"mixture": [{"config": "circle_dense", "ranges": {"time_step": [0.1]}}]},
     r"'mixture\[0\].ranges.time_step' must be \[low, high\]"),
    ({"mixture": [{"config": "circle_dense", "ranges": {"groups.0.radius": [-1.0, 0.3]}}]},
     r"'mixture\[0\]' at the low end of its ranges: config key 'groups\[0\].radius' must be "
     r"positive"),
    ({"mixture": [{"config": "circle_dense"}], "max_step": 3},
     r"unknown config key 'max_step'"),
])
def test_bad_mixtures_name_the_entry_and_key(over, match):
    data = {**copy.deepcopy(COMMON), **over}
    with pytest.raises(ValueError, match=match):
        orca_env.parallel_env(data)


def test_every_entry_needs_the_universal_layout_and_the_same_agents():
    with pytest.raises(ValueError, match=r"'mixture\[0\]': every entry of a mixture must observe "
                                         r"with observation.layout: universal"):
        orca_env.parallel_env({"mixture": [{"config": "circle_dense"}]})
    with pytest.raises(ValueError, match=r"'mixture\[1\]' at the low end of its ranges observes "
                                         r"with .*'num_agents': 5.*set observation: "
                                         r"\{layout: universal, num_agents: K"):
        orca_env.parallel_env({"mixture": [{"config": "circle_dense",
                                            "set": {"groups.0.count": 1}},
                                           {"config": "crowdnav_circle",
                                            "ranges": {"groups.1.count": [1, 5]}}],
                               "observation": {"layout": "universal"}})
    with pytest.raises(ValueError, match=r"'mixture\[1\]' has 1 learned agents, but mixture\[0\] "
                                         r"has 16.*vary the crowd"):
        orca_env.parallel_env({"mixture": [{"config": "circle_dense"},
                                           {"config": "crowdnav_circle"}], **COMMON})
    with pytest.raises(ValueError, match=r"'mixture\[0\]' at the high end of its ranges has 8 "
                                         r"learned agents, but mixture\[0\] at its low end has 4"):
        orca_env.parallel_env({"mixture": [{"config": "circle_dense",
                                            "ranges": {"groups.0.count": [4, 8]}}], **COMMON})


def test_the_sb3_adapter_runs_mixtures_on_the_vector_env_as_on_copies():
    pytest.importorskip("stable_baselines3")
    from orca_env.training.sb3.adapter import make_vec_env

    runs = []
    for backend in ("vector", "copies"):
        venv = make_vec_env(mix(), 3, backend=backend)
        assert bool(venv.envs) == (backend == "copies") and venv.num_envs == 12
        venv.seed(7)
        seq = [venv.reset()]
        rng = np.random.default_rng(0)
        scen = set()
        for _ in range(60):
            venv.step_async(rng.uniform(-1, 1, (12, 2)))
            obs, rew, done, infos = venv.step_wait()
            seq += [obs, rew, done]
            scen |= set(venv.worlds.scenario_names) \
                if backend == "vector" else {e.scenario.name for e in venv.envs}
            assert venv.observation_space.contains(obs[0])
        runs.append(seq)
        venv.close()
    assert len(scen) >= 2
    assert all(np.array_equal(a, b) for a, b in zip(*runs, strict=True))


def test_evaluation_runs_a_mixture_and_reports_it():
    from orca_env.evaluation import OVERLAP_METRICS, evaluate, format_table

    rep = evaluate(mix(), "orca", episodes=4)
    assert list(rep["config"]) == ["mixture"] and len(rep["config"]["mixture"]) == 3
    assert set(OVERLAP_METRICS) <= set(rep["aggregate"])  # the size-aware tolerance
    assert "scenario mixture" in format_table(rep)
    again = evaluate(mix(), "orca", episodes=4)
    assert again == rep


def test_pettingzoo_api_and_copies_mid_episode():
    from pettingzoo.test import parallel_api_test

    parallel_api_test(orca_env.parallel_env(mix()), num_cycles=60)
    env = orca_env.parallel_env(mix())
    env.reset(seed=2)
    for _ in range(3):
        env.step(env.heuristic_actions())
    twin = copy.deepcopy(env)
    for _ in range(5):
        if not env.agents:
            break
        a = env.step(env.heuristic_actions())[0]
        b = twin.step(twin.heuristic_actions())[0]
        assert all(np.array_equal(a[k], b[k]) for k in a)
    env.reset()
    twin.reset()
    assert (env.mixture_entry, env.mixture_values) == (twin.mixture_entry, twin.mixture_values)


def test_set_mixture_weights_changes_the_draws_from_the_next_reset():
    env = orca_env.parallel_env(mix())
    assert env.mixture_weights == [2.0, 1.0, 1.0]
    env.reset(seed=0)
    episode = env.episode_config
    env.set_mixture_weights([1e-9, 1e-9, 1.0])
    assert env.episode_config is episode  # the episode under way is untouched
    assert env.mixture_weights == [1e-9, 1e-9, 1.0]
    assert env.config.mixture[0]["weight"] == 2  # the config as built keeps its weights
    entries = set()
    for seed in range(20):
        env.reset(seed=seed)
        entries.add(env.mixture_entry)
    assert entries == {2}
    # Same seed, same weights: the same draws as an env built with those weights.
    other = mix()
    for e, w in zip(other["mixture"], [1e-9, 1e-9, 1.0], strict=True):
        e["weight"] = w
    built = orca_env.parallel_env(other)
    for seed in range(5):
        env.reset(seed=seed)
        built.reset(seed=seed)
        assert (env.mixture_entry, env.mixture_values) == (built.mixture_entry,
                                                           built.mixture_values)


@pytest.mark.parametrize("bad, match", [
    ([1, 2], r"one weight per entry \(3\), got \[1, 2\]"),
    ([1, 0, 1], r"'mixture\[1\]\.weight' must be a finite number > 0, got 0"),
    ([1, float("nan"), 1], r"mixture\[1\]\.weight"),
    ("abc", "one weight per entry"),
])
def test_set_mixture_weights_rejects_bad_weights_and_changes_nothing(bad, match):
    env = orca_env.parallel_env(mix())
    with pytest.raises(ValueError, match=match):
        env.set_mixture_weights(bad)
    assert env.mixture_weights == [2.0, 1.0, 1.0]


def test_set_mixture_weights_needs_a_mixture():
    env = orca_env.parallel_env("circle_dense")
    assert env.mixture_weights is None
    with pytest.raises(ValueError, match="has no mixture"):
        env.set_mixture_weights([1.0])
