"""The crowd networks as an RLlib module: selected by policy_kwargs.extractor, trained, loaded."""

import numpy as np
import pytest
import yaml

pytest.importorskip("ray.rllib", reason="the RLlib tests need ray[rllib]: the rllib or dev extra "
                    "(the test extra leaves it out)")

import ray  # noqa: E402
import torch  # noqa: E402
from orca_env.policies import load_policy  # noqa: E402
from orca_env.policies.rllib import RLlibPolicy  # noqa: E402

from orca_env.files import read_npz  # noqa: E402
from orca_env.observations import OWN, PER_AGENT  # noqa: E402
from orca_env.training.cli import main  # noqa: E402
from orca_env.training.config import TrainConfigError, load_train_config  # noqa: E402
from orca_env.training.rllib.algorithm import module_spec  # noqa: E402
from orca_env.training.rllib.module import CrowdPPOModule  # noqa: E402

ENV = {"scenario": "circle_v0", "scenario_kwargs": {"circle_radius": 2.5}, "max_steps": 30,
       "groups": [{"population": "learned", "count": 4, "on_goal": "stop", "radius": 0.3,
                   "max_speed": 1.0, "pref_speed": 1.0, "neighbor_dist": 4.0}],
       "observation": {"layout": "universal", "num_agents": 3, "num_obstacles": 0,
                       "stall": True, "time": True}}


def _cfg(tmp_path, **over):
    cfg = {"backend": "rllib", "env": ENV, "num_env_runners": 0, "n_envs": 1,
           "n_timesteps": 128, "seed": 0, "normalize": False, "checkpoint_freq": 128,
           "hyperparams": {"train_batch_size_per_learner": 128, "minibatch_size": 64,
                           "num_epochs": 1},
           "policy_kwargs": {"extractor": "sarl", "head_fcnet_hiddens": [16],
                             "extractor_kwargs": {"embed": [16, 8], "value": [8],
                                                  "attention": [8]}},
           "eval": {"n_episodes": 1, "video": False}}
    cfg.update(over)
    path = tmp_path / "crowd_rllib.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


@pytest.mark.parametrize("shared", [True, False])
def test_module_is_the_crowd_network_and_ignores_the_neighbour_order(tmp_path, shared):
    pk = {"extractor": "sarl", "vf_share_layers": shared, "head_fcnet_hiddens": [16]}
    cfg = load_train_config(_cfg(tmp_path, policy_kwargs=pk))
    module = module_spec(cfg, inference_only=False).build()
    assert isinstance(module, CrowdPPOModule)
    names = set(module.state_dict())
    assert any(n.startswith("encoder.actor_encoder.net.attention") for n in names)
    assert any(n.startswith("encoder.critic_encoder") for n in names) is not shared
    d = module.observation_space.shape[0]
    x = torch.rand(5, d)
    for j in range(3):
        x[:, OWN + PER_AGENT * j + 5] = 1.0
    perm = x.clone()
    for src, dst in enumerate([2, 0, 1]):
        perm[:, OWN + PER_AGENT * dst: OWN + PER_AGENT * (dst + 1)] = \
            x[:, OWN + PER_AGENT * src: OWN + PER_AGENT * (src + 1)]
    with torch.no_grad():
        a = module.forward_inference({"obs": x})["action_dist_inputs"]
        b = module.forward_inference({"obs": perm})["action_dist_inputs"]
        va, vb = module.compute_values({"obs": x}), module.compute_values({"obs": perm})
    torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(va, vb, rtol=1e-5, atol=1e-6)
    with pytest.raises(TrainConfigError, match=r"policy_kwargs\.extractor' must be one of"):
        load_train_config(_cfg(tmp_path, policy_kwargs={"extractor": "lstm"}))


@pytest.fixture(scope="module")
def ray_session():
    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_train_then_load_without_unpickling(ray_session, tmp_path):
    run = tmp_path / "run"
    assert main(["--config", str(_cfg(tmp_path)), "--run-dir", str(run), "--no-eval",
                 "--no-progress"]) == 0
    policy = load_policy(str(run))
    assert isinstance(policy, RLlibPolicy) and isinstance(policy.module, CrowdPPOModule)
    own = policy.module.state_dict()
    saved = read_npz(str(run / "rllib_module.npz"), list(own))
    for k, v in own.items():  # the trained weights, loaded from the plain arrays
        np.testing.assert_array_equal(v.numpy(), saved[k])
    import orca_env
    env = orca_env.parallel_env(ENV)
    obs, _ = env.reset(seed=10_000)
    acts = policy(obs, env)
    again = load_policy(str(run))(obs, env)
    assert all(np.array_equal(acts[a], again[a]) and np.isfinite(acts[a]).all() for a in acts)
