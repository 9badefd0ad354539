"""Fine-tuning: a training config's ``init`` starts a fresh run from a trained model's policy
weights (and normaliser), refuses a model that does not fit before anything is written, and is
not read again on resume."""

import numpy as np
import pytest
import torch
import yaml
from tiny_training import TINY_ENV, tiny_config

pytest.importorskip("stable_baselines3")

from orca_env.training.config import TrainConfigError, load_train_config, resolve_init  # noqa: E402
from orca_env.training.experiment import run_experiment  # noqa: E402
from orca_env.training.model_files import load_normalizer, read_model_zip  # noqa: E402
from orca_env.training.sb3.trainer import _build  # noqa: E402


def _state(policy):
    return {k: v.detach().clone() for k, v in policy.state_dict().items()}


def test_init_starts_from_the_models_weights_and_normaliser(trained, tmp_path):
    cfg = load_train_config(str(tiny_config(tmp_path, init=str(trained), seed=5)))
    fresh, venv0, _ = _build(load_train_config(str(tiny_config(tmp_path, seed=5))),
                             str(tmp_path / "a"), None)
    model, venv, _ = _build(cfg, str(tmp_path / "b"), None, init=resolve_init(cfg["init"]))
    try:
        saved = read_model_zip(str(trained / "model.zip")).params["policy"]
        got = _state(model.policy)
        assert set(got) == set(saved)
        for name, value in saved.items():
            assert torch.equal(got[name], value), name
        # Not the random weights of the same seed: the test could fail.
        assert any(not torch.equal(got[k], v) for k, v in _state(fresh.policy).items())
        assert model.num_timesteps == 0
        stats = load_normalizer(str(trained / "vecnormalize.npz"))
        np.testing.assert_array_equal(venv.obs_rms.mean, stats["obs_mean"])
        np.testing.assert_array_equal(venv.obs_rms.var, stats["obs_var"])
    finally:
        venv.close()
        venv0.close()


def test_a_fine_tuned_run_trains_on_and_resume_does_not_read_init_again(trained, tmp_path):
    cfg = tiny_config(tmp_path, init=str(trained), n_timesteps=128)
    res = run_experiment(str(cfg), run_dir=str(tmp_path / "ft"), evaluate=False,
                         progress_bar=False)
    assert res["stats"]["timesteps"] >= 128
    saved = yaml.safe_load((tmp_path / "ft" / "config.yaml").read_text())
    assert saved["init"] == str(trained)
    # The model it started from is gone: resuming needs only the run's own checkpoint.
    saved["init"] = str(tmp_path / "gone")
    (tmp_path / "ft" / "config.yaml").write_text(yaml.safe_dump(saved))
    res = run_experiment(resume=str(tmp_path / "ft"), n_timesteps=256, evaluate=False,
                         progress_bar=False)
    assert res["stats"]["timesteps"] >= 256


@pytest.mark.parametrize("over, match", [
    ({"policy_kwargs": {"net_arch": [32, 32], "activation_fn": "tanh"}}, "policy_kwargs"),
    ({"env": {**TINY_ENV, "observation": {"num_agents": 2, "range": 3.0}}},
     "observation and action spaces"),
    ({"env": {**TINY_ENV, "action": "residual"}}, "trained with action .velocity."),
    ({"normalize": False}, "normalised observations"),
])
def test_a_model_that_does_not_fit_is_refused_before_the_run_folder(trained, tmp_path, over,
                                                                    match):
    cfg = tiny_config(tmp_path, init=str(trained), **over)
    with pytest.raises(ValueError, match=match) as err:
        run_experiment(str(cfg), run_dir=str(tmp_path / "ft"), evaluate=False,
                       progress_bar=False)
    assert "'init'" in str(err.value)
    assert not (tmp_path / "ft").exists()


def test_init_names_the_value_and_the_shipped_policies(tmp_path):
    with pytest.raises(ValueError, match=r"'init'.*'no_such_model'.*generalist_sarl"):
        run_experiment(str(tiny_config(tmp_path, init="no_such_model")),
                       run_dir=str(tmp_path / "ft"), evaluate=False, progress_bar=False)
    assert not (tmp_path / "ft").exists()
    with pytest.raises(TrainConfigError, match=r"'init' must be .* got 3"):
        load_train_config(str(tiny_config(tmp_path, init=3)))
    with pytest.raises(TrainConfigError, match="'init'.*backend sb3"):
        load_train_config(str(tiny_config(tmp_path, init="generalist", backend="rllib")))
    assert "init" not in load_train_config(str(tiny_config(tmp_path, init=None)))
    assert resolve_init("generalist_sarl").endswith("generalist_sarl")
