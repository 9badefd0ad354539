import glob
import os

import pytest

import orca_env
from orca_env.config import EnvConfig, describe, load_config

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))


@pytest.mark.parametrize("bad, match", [
    ({"scenarioo": "circle_v0"}, r"scenarioo.*valid keys.*scenario"),
    ({"rewards": {"colision": 1.0}}, r"rewards\.colision.*collision"),
    ({"observation": {"frame": "robot"}}, r"observation\.frame.*goal"),
    ({"observation": {"num_agents": 2.5}}, r"observation\.num_agents.*integer"),
    ({"max_steps": "10"}, r"max_steps.*integer"),
    ({"guidance": 1}, r"guidance.*true or false"),
    ({"rewards": {"goal": True}}, r"rewards\.goal.*number"),
    ({"time_step": -1.0}, r"time_step.*positive"),
    ({"groups": [{"population": "learned", "cout": 1}]}, r"groups\[0\]\.cout.*count"),
    ({"groups": [{"population": "robot"}]}, r"groups\[0\]\.population.*learned"),
    ({"groups": {"population": "learned"}}, r"groups.*list"),
    ({"stall": []}, r"stall.*mapping"),
    ({"rewards": {"progress": float("inf")}}, r"rewards\.progress.*finite.*inf"),
    ({"rewards": {"discomfort_dist": float("nan")}}, r"rewards\.discomfort_dist.*finite"),
    ({"collision_tolerance": float("inf")}, r"collision_tolerance.*finite"),
    ({"stall": {"speed_fraction": 5.0}}, r"stall\.speed_fraction.*<= 1\.0.*5\.0"),
])
def test_config_errors_name_the_key(bad, match):
    with pytest.raises(ValueError, match=match):
        load_config(bad)


def test_env_level_config_errors():
    with pytest.raises(ValueError, match="unknown scenario 'nope'.*circle_v0"):
        orca_env.parallel_env(scenario="nope")
    with pytest.raises(ValueError, match="radiuss.*circle_radius"):
        orca_env.parallel_env(scenario="circle_v0", scenario_kwargs={"radiuss": 3})
    with pytest.raises(ValueError, match="circle_radius.*float"):
        orca_env.parallel_env(scenario="circle_v0", scenario_kwargs={"circle_radius": "big"})
    with pytest.raises(ValueError, match="at least one learned"):
        orca_env.parallel_env(scenario="crowdnav_circle_v0",
                              groups=[{"population": "orca", "count": 3}])
    with pytest.raises(ValueError, match="new_goal"):
        orca_env.parallel_env(scenario="corridor_v0",
                              groups=[{"population": "learned", "on_goal": "new_goal"}])
    with pytest.raises(ValueError, match="safety_layer"):
        orca_env.parallel_env(scenario="corridor_v0",
                              groups=[{"population": "learned"},
                                      {"population": "orca", "safety_layer": False}])
    with pytest.raises(ValueError, match="guidance"):
        orca_env.parallel_env(scenario="circle_v0", guidance=True)


def test_yaml_and_keyword_overrides(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text("scenario: crowdnav_circle_v0\nrewards: {goal: 2.0}\nmax_steps: 50\n")
    cfg = load_config(str(p), rewards={"collision": -1.0}, max_steps=70)
    assert cfg.rewards.goal == 2.0 and cfg.rewards.collision == -1.0 and cfg.max_steps == 70
    assert cfg.rewards.progress == EnvConfig().rewards.progress
    env = orca_env.parallel_env(str(p), observation={"num_agents": 2})
    assert env.observation_space("agent_0").shape == (8 + 6 * 2,)
    p.write_text("scenario: crowdnav_circle_v0\nbogus: 1\n")
    with pytest.raises(ValueError, match="bogus"):
        orca_env.parallel_env(str(p))
    assert "rewards.collision" in describe()


@pytest.mark.parametrize("path", sorted(glob.glob(os.path.join(ROOT, "configs", "*.yaml"))))
def test_provided_configs_load(path):
    cfg = load_config(path)
    if cfg.scenario in ("circle_v0",):
        return  # 250 agents: built in the benchmark, not here
    env = orca_env.parallel_env(path)
    obs, _ = env.reset(seed=0)
    assert set(obs) == set(env.possible_agents)
    env.step(env.heuristic_actions())


@pytest.mark.parametrize("kwargs, match", [
    (dict(groups=[{"population": "learned", "count": 2, "noise": 0.1}]),
     r"groups\[0\]\.noise.*scripted groups.*0\.1"),
    (dict(collision_tolerance=0.5), r"collision_tolerance.*smallest agent radius.*0\.5"),
    (dict(scenario_kwargs={"circle_radius": float("inf")}), r"circle_radius.*finite.*inf"),
    (dict(scenario_kwargs={"circle_radius": float("nan")}), r"circle_radius.*finite"),
])
def test_more_env_level_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        orca_env.parallel_env(scenario="crowdnav_circle_v0", **kwargs)


def test_numpy_scalars_are_accepted():
    import numpy as np

    env = orca_env.parallel_env(scenario="circle_v0", max_steps=np.int64(50),
                                scenario_kwargs={"circle_radius": np.float64(4.0),
                                                 "interleave": np.bool_(True)},
                                groups=[{"population": "learned", "count": np.int64(3)}])
    assert env.max_steps == 50 and len(env.possible_agents) == 3


def test_crowdnav_discomfort_is_a_penalty():
    """CrowdNav penalises getting closer than 0.2 m: the shipped configs' term is never > 0."""
    seen = 0.0
    for name in ("crowdnav_circle.yaml", "crowdnav_square.yaml"):
        env = orca_env.parallel_env(os.path.join(ROOT, "configs", name))
        for seed in range(3):
            env.reset(seed=seed)
            while env.agents:
                _, _, _, _, infos = env.step(env.heuristic_actions())
                for info in infos.values():
                    assert info["reward_terms"]["discomfort"] <= 0.0
                    seen += info["reward_terms"]["discomfort"]
    assert seen < 0.0  # the robot does get close to humans in these scenarios
