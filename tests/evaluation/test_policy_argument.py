"""The ``--policy`` argument of eval: its interface is documented, a missing model path says so."""

import pytest

import orca_env.evaluation.suite as suite
from orca_env.cli import build_parser, main


def test_the_policy_interface_is_documented():
    eval_parser = build_parser()._subparsers._group_actions[0].choices["eval"]
    help_text = " ".join(eval_parser.format_help().split())
    for words in ("policy(observations, env) -> actions", "env.agents",
                  "instantiated with no arguments", "loader(path, env)"):
        assert words in help_text, words
    doc = " ".join(suite.__doc__.split())
    for words in ("policy(observations, env) -> actions", "exactly ``env.agents``",
                  "instantiated with no arguments", "loader(model_path: str, env) -> policy"):
        assert words in doc, words


@pytest.mark.parametrize("argv,match", [
    (["--policy", "runs/nope/model.zip"], "no such model file or run folder"),
    (["--policy", "nope.zip"], "no such model file or run folder"),
    (["--policy", "orca_env.policies:load_policy", "--model", "nope.zip"],
     "--model 'nope.zip': no such model file"),
])
def test_a_missing_model_path_says_so(argv, match, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["eval", "circle_dense", "--episodes", "1", *argv])
    assert exc.value.code == 2
    assert match in capsys.readouterr().err
