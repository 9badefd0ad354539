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
