"""Every sub-case of issue 27, item 15: one-line errors, not tracebacks or silent acceptance.

train.py's refusals are one line on stderr with exit 2 before anything is written: a mistyped
``--resume`` folder, seeds that reset env copies with evaluation seeds, ``n_steps: 0``, a
``--run-dir`` or ``--runs-root`` under a file or on a read-only filesystem, ``--ship`` with a
traversing ``name.txt`` (tests/training/test_runs_and_resume.py), configs that are not UTF-8
or are a model zip. Files that are not UTF-8 (configs, suites, a run's ``config.yaml``) are
errors naming the file; a plug-in policy with the wrong signature is refused before an
episode; ``groups: [null]``, a circle jitter of 1e6 m and boolean actions are refused, changing
nothing; reset options, which the env does not read, warn naming them (PettingZoo's API test
passes one, so they cannot be refused). RLlib's ``policy_kwargs`` get training's validator.
"""

import os
import shutil
import sys

import numpy as np
import pytest
import yaml
from tiny_training import tiny_config

import orca_env
from orca_env.evaluation import resolve_policy

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODEL = os.path.join(ROOT, "policies", "trained", "circle_ppo", "model.zip")


def _train(argv, capsys):
    pytest.importorskip("stable_baselines3")
    from orca_env.training.cli import main

    code = main(argv)
    return code, capsys.readouterr().err


@pytest.mark.parametrize("case", ["resume_typo", "eval_seed", "n_steps_0", "run_dir_in_file",
                                  "runs_root_in_file", "read_only_run_dir",
                                  "read_only_runs_root", "not_utf8", "model_zip"])
def test_train_py_refusals_are_one_line_exit_2_and_write_nothing(case, tmp_path, capsys,
                                                                 monkeypatch):
    afile = tmp_path / "afile"
    afile.write_text("x")
    runs = tmp_path / "runs"
    for sub in ("good", "seed", "steps"):
        (tmp_path / sub).mkdir()
    cfg = str(tiny_config(tmp_path / "good"))
    bad = tmp_path / "latin1.yaml"
    bad.write_bytes(b"seed: 0\nname: caf\xe9\n")
    if case.startswith("read_only"):
        import orca_env.training.run_folder as run_folder

        real = os.access
        monkeypatch.setattr(run_folder.os, "access",
                            lambda p, mode: False if str(p) == str(tmp_path) else real(p, mode))
    argv, want = {
        "resume_typo": (["--resume", str(tmp_path / "typo")], "is not a run folder"),
        "eval_seed": (["--config", str(tiny_config(tmp_path / "seed", seed=9_999)), "--runs-root",
                       str(runs)], "overlap the evaluation seeds"),
        "n_steps_0": (["--config", str(tiny_config(tmp_path / "steps", hyperparams={"n_steps": 0})),
                       "--runs-root", str(runs)], "n_steps"),
        "run_dir_in_file": (["--config", cfg, "--run-dir", str(afile / "run")],
                            f"--run-dir '{afile}/run': '{afile}' is a file, not a folder"),
        "runs_root_in_file": (["--config", cfg, "--runs-root", str(afile / "runs")],
                              f"--runs-root '{afile}/runs': '{afile}' is a file, not a folder"),
        "read_only_run_dir": (["--config", cfg, "--run-dir", str(tmp_path / "run")],
                              f"--run-dir '{tmp_path}/run': cannot write into '{tmp_path}' "
                              f"(read-only or no permission)"),
        "read_only_runs_root": (["--config", cfg, "--runs-root", str(runs)],
                                f"cannot write into '{tmp_path}'"),
        "not_utf8": (["--config", str(bad)], f"'{bad}' is not UTF-8 text: byte 0xe9 at "
                                             f"position 17"),
        "model_zip": (["--config", MODEL], "(it is a zip archive: a model, not a config?)"),
    }[case]
    before = sorted(os.listdir(tmp_path))
    code, err = _train([*argv, "--no-eval", "--no-progress"], capsys)
    assert code == 2 and err.count("\n") == 1 and err.startswith("train.py: error: "), err
    assert want in err, err
    assert sorted(os.listdir(tmp_path)) == before  # no run folder, nothing written


def test_files_that_are_not_utf8_are_errors_naming_the_file(tmp_path, capsys):
    from orca_env.cli import main
    from orca_env.evaluation.bench import load_suite

    suite = tmp_path / "suite.yaml"
    suite.write_bytes(b"seed: 0\nentries: [\xff]\n")
    with pytest.raises(ValueError, match=rf"'{suite}' is not UTF-8 text: byte 0xff at "
                                         rf"position 18$"):
        load_suite(str(suite))
    env_cfg = tmp_path / "env.yaml"
    env_cfg.write_bytes(b"scenario: circle_v0\n# \x80\n")
    with pytest.raises(ValueError, match="is not UTF-8 text: byte 0x80"):
        orca_env.parallel_env(str(env_cfg))
    with pytest.raises(SystemExit) as exc:
        main(["eval", str(env_cfg), "--episodes", "1"])
    err = capsys.readouterr().err
    assert exc.value.code == 2
    assert err.count("\n") == 1 and f"'{env_cfg}' is not UTF-8 text" in err, err


def test_a_run_config_that_is_not_utf8_is_refused_by_the_loader(tmp_path):
    pytest.importorskip("stable_baselines3")
    from orca_env.policies.sb3 import load

    run = tmp_path / "run"
    shutil.copytree(os.path.dirname(MODEL), run)
    (run / "config.yaml").write_bytes((run / "config.yaml").read_bytes() + b"# \xc3\x28\n")
    with pytest.raises(ValueError, match=rf"'{run}/config.yaml' is not UTF-8 text: byte 0xc3"):
        load(run)


def test_a_plug_in_policy_with_the_wrong_signature_is_refused_before_an_episode(
        tmp_path, monkeypatch, capsys):
    from orca_env.cli import main

    (tmp_path / "plug.py").write_text(
        "def one(obs):\n    return {}\n"
        "def good(observations, env, extra=None):\n    return {}\n"
        "class Needs:\n    def __init__(self, x):\n        pass\n"
        "class Fine:\n    def __call__(self, observations, env):\n        return {}\n"
        "def loader(path):\n    return None\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "plug", raising=False)
    for spec, model, want in [
            ("plug:one", None, r"policy 'plug:one' has the signature \(obs\), which cannot be "
                               r"called as policy\(observations, env\) -> actions"),
            ("plug:Needs", None, r"policy class 'plug:Needs' has the signature \(x\)"),
            ("plug:loader", str(tmp_path), r"loader 'plug:loader' has the signature \(path\), "
                                           r"which cannot be called as loader\(path, env\)")]:
        with pytest.raises(ValueError, match=want):
            resolve_policy(spec, model=model)
    assert resolve_policy("plug:good")[1] == "plug:good"
    assert resolve_policy("plug:Fine")[1] == "plug:Fine"
    with pytest.raises(SystemExit) as exc:
        main(["eval", "circle_dense", "--policy", "plug:one", "--episodes", "1"])
    err = capsys.readouterr().err
    assert exc.value.code == 2
    assert err.count("\n") == 1 and "has the signature (obs)" in err, err


def test_small_silent_acceptances_are_refused_and_change_nothing():
    with pytest.raises(ValueError, match=r"config key 'groups\[0\]' must be a mapping of group "
                                         r"keys, got None"):
        orca_env.parallel_env({"scenario": "circle_v0", "groups": [None]})
    with pytest.raises(ValueError, match=r"scenario_kwargs key 'jitter' of circle_v0 must be at "
                                         r"most half of circle_radius \(100 m\), got 1000000.0"):
        orca_env.parallel_env({"scenario": "circle_v0", "scenario_kwargs": {"jitter": 1e6}})
    orca_env.parallel_env({"scenario": "circle_v0",
                           "scenario_kwargs": {"circle_radius": 4.0, "jitter": 2.0}})

    # Reset options: none is read. PettingZoo's API test resets with options={"options": 1},
    # so they cannot be refused; they are ignored with a warning naming them, not silently.
    env = orca_env.parallel_env("circle_dense")
    env.reset(seed=5)
    want = env.render_data()["positions"].copy()
    with pytest.warns(UserWarning, match=r"options: this env reads no reset options, ignoring "
                                         r"\['bogus', 'seed'\]"):
        env.reset(seed=5, options={"bogus": 1, "seed": 4})
    assert np.array_equal(env.render_data()["positions"], want)  # the seed option is not one
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        env.reset(seed=5, options={})  # an empty mapping is no option
    with pytest.raises(ValueError, match=r"must be 2 real numbers, got array\(\[ True, False\]\)"):
        env.step({a: np.array([True, False]) for a in env.agents})

    from orca_env.vector import OrcaVectorEnv

    venv = OrcaVectorEnv("circle_dense", num_worlds=2, seed=0)
    with pytest.warns(UserWarning, match="options: this env reads no reset options"):
        venv.reset(options={"bogus": 1})


@pytest.mark.parametrize("kwargs, match", [
    ({"fcnet_hiddens": [-5, 64]}, r"'policy_kwargs.fcnet_hiddens': layer sizes must be integers "
                                  r"in 1 .. 4096, got -5"),
    ({"fcnet_hiddens": [200_000_000]}, "layer sizes must be integers in 1 .. 4096"),
    ({"head_fcnet_hiddens": "wide"}, "must be a list of at most 16 layer sizes"),
    ({"fcnet_activation": "os.system"}, r"'policy_kwargs.fcnet_activation' must be one of"),
    ({"fcnet_kernel_initializer": "os.system"}, "initializers cannot be named in a config"),
    ({"use_lstm": True}, "is not an RLlib model setting a config may set"),
    ({"vf_share_layers": "yes"}, "must be true or false"),
    ({"log_std_clip_param": float("nan")}, r"must be a finite number in \(0, 100\]"),
])
def test_rllib_policy_kwargs_go_through_the_shared_validator(kwargs, match):
    from orca_env.training.config import check_model_config, load_train_config

    cfg = {"backend": "rllib", "algo": "ppo", "policy_kwargs": kwargs}
    with pytest.raises(ValueError, match=match):
        check_model_config(cfg, "rllib", where="run/config.yaml")
    with pytest.raises(ValueError, match="^run/config.yaml: "):
        check_model_config(cfg, "rllib", where="run/config.yaml")
    shipped = load_train_config(os.path.join(ROOT, "configs", "train", "circle_rllib.yaml"))
    check_model_config(shipped, "rllib")
    assert yaml.safe_load(open(os.path.join(ROOT, "configs", "train", "circle_rllib.yaml"))
                          )["policy_kwargs"]["fcnet_hiddens"] == [64, 64]
