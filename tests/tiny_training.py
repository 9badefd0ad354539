"""Shared by the training tests: a tiny PPO config (4 learners on a small circle, 512 steps)."""

import yaml

TINY_ENV = {"scenario": "circle_v0", "scenario_kwargs": {"circle_radius": 2.5}, "max_steps": 30,
            "groups": [{"population": "learned", "count": 4, "on_goal": "stop", "radius": 0.3,
                        "max_speed": 1.0, "pref_speed": 1.0, "neighbor_dist": 4.0,
                        "time_horizon": 3.0, "time_horizon_obst": 3.0}],
            "observation": {"num_agents": 3, "range": 3.0}}


def tiny_config(folder, **over):
    cfg = {"env": TINY_ENV, "n_envs": 2, "n_timesteps": 512, "seed": 0, "checkpoint_freq": 128,
           "hyperparams": {"n_steps": 32, "batch_size": 64, "n_epochs": 1},
           "policy_kwargs": {"net_arch": [16, 16], "activation_fn": "tanh"},
           "eval": {"n_episodes": 1, "video": False}}
    cfg.update(over)
    path = folder / "tiny.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path
