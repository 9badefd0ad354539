"""A downloaded run folder's ``config.yaml`` is checked by training's own rules before the
network is built (issue 27 item 11): an unknown or mismatched algorithm, a class or function by
name, negative or gigabyte layer sizes are one-line ValueErrors naming the file and the key;
torch builds nothing. Training refuses the same configs with the same words (one validator,
``orca_env.training.config.check_model_config``)."""

import shutil

import pytest
import yaml

pytest.importorskip("stable_baselines3")

from orca_env.policies.sb3 import load  # noqa: E402
from tiny_training import tiny_config  # noqa: E402

from orca_env.cli import main as cli_main  # noqa: E402
from orca_env.training import model_files  # noqa: E402
from orca_env.training.config import TrainConfigError, load_train_config  # noqa: E402

ENV = {"scenario": "circle_v0", "scenario_kwargs": {"circle_radius": 2.5}, "max_steps": 20,
       "groups": [{"population": "learned", "count": 3, "on_goal": "stop"}],
       "observation": {"num_agents": 2, "range": 3.0}}

# (the config's changes, what the message says after "<file>: ")
BAD = {
    "sac_with_ppo_nets": ({"algo": "sac", "policy_kwargs": {"net_arch": {"pi": [8], "vf": [8]}}},
                          "training config key 'policy_kwargs.net_arch' must be a list of layer "
                          "sizes or a mapping {pi: [...], qf: [...]}; 'vf' is not a sac "
                          "sub-network"),
    "unknown_algo": ({"algo": "a2c"}, "training config key 'algo' must be ppo or sac, got 'a2c'"),
    "activation_class": ({"policy_kwargs": {"activation_fn": "torch.nn.Tanh"}},
                         "policy_kwargs.activation_fn must be one of ['tanh', 'relu', 'elu', "
                         "'leaky_relu', 'gelu', 'silu'], got 'torch.nn.Tanh'"),
    "optimizer_function": ({"policy_kwargs": {"optimizer_class": "os.system"}},
                           "training config key 'policy_kwargs.optimizer_class' is not a ppo "
                           "policy argument a config may set (classes cannot be named in a "
                           "config)"),
    "negative_layer": ({"policy_kwargs": {"net_arch": [-5, 64]}},
                       "training config key 'policy_kwargs.net_arch': layer sizes must be "
                       "integers in 1 .. 4096, got -5"),
    "huge_layer": ({"policy_kwargs": {"net_arch": [200000000, 64]}},
                   "training config key 'policy_kwargs.net_arch': layer sizes must be integers "
                   "in 1 .. 4096, got 200000000"),
    "huge_sub_network": ({"policy_kwargs": {"net_arch": {"pi": [8], "vf": [8] * 17}}},
                         "training config key 'policy_kwargs.net_arch.vf' must be a list of at "
                         "most 16 layer sizes"),
    "float_layer": ({"policy_kwargs": {"net_arch": [8.5]}}, "layer sizes must be integers"),
    "not_a_mapping": ({"policy_kwargs": "wide"},
                      "training config key 'policy_kwargs' must be a mapping, got 'wide'"),
    "nan_log_std": ({"policy_kwargs": {"log_std_init": float("nan")}},
                    "'policy_kwargs.log_std_init' must be a finite number"),
    "flag_not_bool": ({"policy_kwargs": {"ortho_init": "yes"}},
                      "'policy_kwargs.ortho_init' must be true or false, got 'yes'"),
    "use_sde_here": ({"policy_kwargs": {"use_sde": True}}, "(set hyperparams.use_sde)"),
}


@pytest.fixture(scope="module")
def trained(tmp_path_factory, train_tiny):
    return train_tiny(tmp_path_factory.mktemp("run"), ENV, n_envs=1, n_timesteps=128,
                      batch_size=48, net_arch=(8,))


def _poisoned(trained, tmp_path, changes):
    run = tmp_path / "run"
    shutil.copytree(trained, run)
    cfg = yaml.safe_load((run / "config.yaml").read_text())
    for key, value in changes.items():
        if key == "policy_kwargs" and isinstance(value, dict):
            cfg["policy_kwargs"] = {**cfg["policy_kwargs"], **value}
            if "net_arch" in value:
                cfg["policy_kwargs"]["net_arch"] = value["net_arch"]
        else:
            cfg[key] = value
    (run / "config.yaml").write_text(yaml.safe_dump(cfg))
    return run


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_poisoned_run_config_is_refused_before_torch_builds_anything(trained, tmp_path,
                                                                       monkeypatch, case):
    changes, message = BAD[case]
    run = _poisoned(trained, tmp_path, changes)

    def built(*args, **kwargs):
        raise AssertionError("the network was built from a config that should be refused")

    monkeypatch.setattr(model_files, "build_policy", built)
    with pytest.raises(ValueError) as info:
        load(run)
    msg = str(info.value)
    assert msg.startswith(f"{run / 'config.yaml'}: ") and message in msg and "\n" not in msg


@pytest.mark.parametrize("case", sorted(BAD))
def test_training_refuses_the_same_config_with_the_same_words(tmp_path, case):
    changes, message = BAD[case]
    over = dict(changes)
    if isinstance(over.get("policy_kwargs"), dict):
        over["policy_kwargs"] = {"net_arch": [16, 16], "activation_fn": "tanh",
                                 **over["policy_kwargs"]}
    with pytest.raises(TrainConfigError) as info:
        load_train_config(tiny_config(tmp_path, **over))
    assert message in str(info.value)


def test_the_loader_and_eval_accept_the_good_run_and_eval_prints_one_line(trained, tmp_path,
                                                                          capsys):
    load(trained)  # unchanged: loads
    run = _poisoned(trained, tmp_path, BAD["huge_layer"][0])
    with pytest.raises(SystemExit) as info:
        cli_main(["eval", "configs/crowdnav_circle.yaml", "--policy", str(run), "--episodes",
                  "1", "--quiet"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("orca-env eval: error: ") and err.count("\n") == 1, err
    assert "config.yaml: training config key 'policy_kwargs.net_arch'" in err
