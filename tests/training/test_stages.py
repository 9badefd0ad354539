"""Training config key ``stages``: later phases of one run with a new learning rate and new
mixture weights; validated up front, identical to the run without stages up to the first one,
and picked up again on resume."""

import copy
import os

import pytest
import yaml

pytest.importorskip("stable_baselines3")

from orca_env.training.config import load_train_config, stage_schedule  # noqa: E402
from orca_env.training.experiment import run_experiment  # noqa: E402
from orca_env.training.model_files import read_model_zip  # noqa: E402
from orca_env.training.sb3 import trainer  # noqa: E402

ENTRY = {"scenario": "circle_v0", "scenario_kwargs": {"circle_radius": 2.5}, "max_steps": 30,
         "groups": [{"population": "learned", "count": 4, "on_goal": "stop", "radius": 0.3,
                     "max_speed": 1.0, "pref_speed": 1.0, "neighbor_dist": 4.0,
                     "time_horizon": 3.0, "time_horizon_obst": 3.0}]}
MIXTURE_ENV = {"mixture": [{"config": copy.deepcopy(ENTRY)},
                           {"config": "circle_dense", "set": {"groups.0.count": 4,
                                                              "max_steps": 30}}],
               "observation": {"layout": "universal", "num_agents": 3, "num_obstacles": 2}}


def config(tmp_path, **over):
    cfg = {"env": copy.deepcopy(MIXTURE_ENV), "n_envs": 2, "n_timesteps": 768, "seed": 0,
           "checkpoint_freq": 256, "hyperparams": {"n_steps": 32, "batch_size": 64,
                                                    "n_epochs": 1, "learning_rate": 3e-4},
           "policy_kwargs": {"net_arch": [16, 16]}, "eval": {"n_episodes": 2, "video": False}}
    cfg.update(over)
    path = tmp_path / "stages.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return str(path)


def test_schedule_resolves_names_and_carries_values_forward(tmp_path):
    cfg = load_train_config(config(tmp_path, stages=[
        {"from": 300, "learning_rate": 1e-4},
        {"from": 600, "weights": {"circle_dense": 5}},
        {"from": 700, "weights": {0: 0.5}, "learning_rate": 5e-5}]))
    assert stage_schedule(cfg) == [
        {"from": 300, "learning_rate": 1e-4, "weights": None,
         "changes": {"learning_rate": 1e-4}},
        {"from": 600, "learning_rate": 1e-4, "weights": [1.0, 5.0],
         "changes": {"weights": {1: 5.0}}},
        {"from": 700, "learning_rate": 5e-5, "weights": [0.5, 5.0],
         "changes": {"learning_rate": 5e-5, "weights": {0: 0.5}}}]
    assert load_train_config(config(tmp_path))["stages"] == []
    # YAML reads 1.2e7 as a float: a step count with an integer value is that integer.
    cfg = load_train_config(config(tmp_path, stages=[{"from": 300.0, "learning_rate": 1e-4}]))
    assert [type(s["from"]) for s in stage_schedule(cfg)] == [int]


@pytest.mark.parametrize("stages, match", [
    ("later", r"'stages' must be a list, got 'later'"),
    ([{"learning_rate": 1e-4}], r"'stages\[0\]' must be a mapping with 'from'"),
    ([{"from": 10}], r"'stages\[0\]' must be a mapping with 'from' and at least one of "
                     r"'learning_rate', 'weights', got \{'from': 10\}"),
    ([{"from": 10, "weights": {0: 2, "circle_dense": 3, 1: 4}}],
     r"'stages\[0\].weights' names mixture entry 1 twice \('circle_dense' and 1\)"),
    ([{"from": 10, "lr": 1e-4}], r"'stages\[0\]' must be a mapping with 'from' and at least"),
    ([{"from": 0, "learning_rate": 1e-4}],
     r"'stages\[0\].from' must be an integer entry-step count > 0, got 0"),
    ([{"from": 10.5, "learning_rate": 1e-4}],
     r"'stages\[0\].from' must be an integer entry-step count > 0, got 10.5"),
    ([{"from": 500, "learning_rate": 1e-4}, {"from": 400, "learning_rate": 1e-5}],
     r"'stages\[1\].from' must be an integer entry-step count > 500 \(the previous stage's\), "
     r"got 400"),
    ([{"from": 10, "learning_rate": 0}], r"'stages\[0\].learning_rate' must be a finite number "
                                         r"> 0, got 0"),
    ([{"from": 10, "weights": {"corridor": 2}}], r"'corridor' names no env.mixture entries; "
                                                 r"name one by its index \(0..1\) or by a "
                                                 r"config name that one entry has: "
                                                 r"\['circle_dense'\]"),
    ([{"from": 10, "weights": {2: 1}}], r"entry 2 is not an index of env.mixture \(0..1\)"),
    ([{"from": 10, "weights": {1: -1}}], r"'stages\[0\].weights.1' must be a finite number > 0"),
    ([{"from": 10, "weights": []}], r"'stages\[0\].weights' must be a mapping"),
])
def test_bad_stages_are_named(tmp_path, stages, match):
    with pytest.raises(ValueError, match=match):
        load_train_config(config(tmp_path, stages=stages))


def test_weights_need_a_mixture_and_rllib_has_no_stages(tmp_path):
    with pytest.raises(ValueError, match=r"'stages\[0\].weights' needs an env with a "
                                         r"'mixture'"):
        load_train_config(config(tmp_path, env=ENTRY, stages=[{"from": 5,
                                                               "weights": {0: 1}}]))
    with pytest.raises(ValueError, match="'stages' is a key of backend sb3"):
        load_train_config(config(tmp_path, backend="rllib", stages=[{"from": 5}]))


def _weights(run):
    return {k: v.cpu().numpy() for k, v in read_model_zip(run).params["policy"].items()}


def test_a_stage_changes_the_run_from_its_step_on_and_not_before(tmp_path, capsys):
    # Rollouts of 2 worlds x 4 agents x 32 steps = 256 entry-steps; the stage starts with the
    # third rollout (at 512), after the checkpoints at 256 and 512.
    stages = [{"from": 400, "learning_rate": 1e-5, "weights": {"circle_dense": 50}}]
    cfg = load_train_config(config(tmp_path, stages=stages))
    built = trainer._build(cfg, str(tmp_path / "staged"), None)
    model, _, base = built
    os.makedirs(tmp_path / "staged")
    trainer.train(cfg, str(tmp_path / "staged"), progress_bar=False, built=built)
    assert "Stage 1 of 1 (from 400 entry-steps) at 512: learning rate 1e-05; weights " \
           "circle_dense 1 -> 50" in capsys.readouterr().out
    assert model.lr_schedule(1.0) == 1e-5
    assert all(env.mixture_weights == [1.0, 50.0] for env in base.envs)
    plain = load_train_config(config(tmp_path))
    run_experiment(config(tmp_path), run_dir=str(tmp_path / "plain"), evaluate=False,
                   progress_bar=False)
    assert plain["stages"] == []
    ck = "checkpoints/rl_model_{}_steps.zip"
    for n in (256, 512):  # the same run up to the stage
        a, b = (_weights(str(tmp_path / r / ck.format(n))) for r in ("staged", "plain"))
        assert all((a[k] == b[k]).all() for k in a)
    a, b = (_weights(str(tmp_path / r / "model.zip")) for r in ("staged", "plain"))
    assert any((a[k] != b[k]).any() for k in a)


def test_a_resumed_run_starts_in_its_stage(tmp_path, capsys):
    stages = [{"from": 200, "learning_rate": 2e-5}]  # after the first rollout (256 steps)
    run = str(tmp_path / "run")
    run_experiment(config(tmp_path, stages=stages, n_timesteps=256), run_dir=run,
                   evaluate=False, progress_bar=False)
    out = capsys.readouterr().out
    assert "Stage 1" not in out
    res = run_experiment(resume=run, n_timesteps=512, evaluate=False, progress_bar=False)
    assert res["stats"]["timesteps"] == 512
    assert "Stage 1 of 1 (from 200 entry-steps) at 256: learning rate 2e-05" \
        in capsys.readouterr().out


def test_a_stage_beyond_the_budget_warns(tmp_path):
    with pytest.warns(UserWarning, match=r"'stages\[0\]' starts at 5,000 entry-steps, not below "
                                         r"n_timesteps \(256\): it will not run"):
        run_experiment(config(tmp_path, stages=[{"from": 5000, "learning_rate": 1e-5}],
                              n_timesteps=256), run_dir=str(tmp_path / "r"), evaluate=False,
                       progress_bar=False)


def test_train_py_rejects_a_bad_config_in_one_line(tmp_path, capsys):
    from orca_env.training.cli import EXIT_USAGE, main

    run = tmp_path / "r"
    assert main(["--config", config(tmp_path, stages=[{"from": 0, "learning_rate": 1e-4}]),
                 "--run-dir", str(run), "--no-eval", "--no-progress"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert err == ("train.py: error: training config key 'stages[0].from' must be an integer "
                   "entry-step count > 0, got 0\n")
    assert main(["--config", str(tmp_path / "missing.yaml")], prog="orca-env train") == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.startswith("orca-env train: error: no training config") and err.count("\n") == 1
    assert not run.exists()
    # A misspelt hyperparameter too, before the run folder is made.
    hyper = {"n_stepz": 32, "batch_size": 64, "n_epochs": 1}
    assert main(["--config", config(tmp_path, hyperparams=hyper), "--run-dir", str(run),
                 "--no-eval", "--no-progress"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.startswith("train.py: error: training config key 'hyperparams.n_stepz' is not a "
                          "ppo hyperparameter; valid: [") and err.count("\n") == 1
    assert not run.exists()


def test_count_hyperparameters_may_be_written_as_floats(tmp_path):
    """The loader reads 3.2e1 as a float; SB3 needs the integer."""
    path = config(tmp_path, hyperparams={"n_steps": 32.0, "batch_size": 64.0, "n_epochs": 1,
                                         "learning_rate": 1e-3})
    hyper = load_train_config(path)["hyperparams"]
    assert [type(hyper[k]) for k in ("n_steps", "batch_size", "learning_rate")] == \
        [int, int, float]
