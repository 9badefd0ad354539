"""Eval and replay without the video extra (pygame, imageio, matplotlib): one line saying what
to install, exit code 1, before any episode."""

import sys

import pytest
from eval_checks import CROWDNAV
from eval_checks import one_line_error as _one_line_error

from orca_env.cli import main

EXTRA = 'pip install "orca-env[video]"'


@pytest.mark.parametrize("argv, module, words", [
    (["--videos", "1"], "pygame", "pygame-ce, not pygame"),
    (["--videos", "1"], "imageio", "imageio"),
    (["--trajectories", "2"], "matplotlib", "matplotlib"),
])
def test_eval_without_an_extra_says_what_to_install_before_any_episode(
        tmp_path, capsys, monkeypatch, no_episodes, argv, module, words):
    monkeypatch.setitem(sys.modules, module, None)
    if module == "imageio":
        monkeypatch.setitem(sys.modules, "imageio.v2", None)
    with pytest.raises(SystemExit) as exc:
        main(["eval", CROWDNAV, "--episodes", "3", "--quiet", "--out", str(tmp_path), *argv])
    assert exc.value.code == 1
    err = _one_line_error(capsys, "eval")
    assert EXTRA in err and words in err


@pytest.mark.parametrize("module, video", [("pygame", False), ("pygame", True),
                                           ("imageio", True)])
def test_replay_without_an_extra_says_what_to_install(tmp_path, log_path, capsys, monkeypatch,
                                                      module, video):
    monkeypatch.setenv("DISPLAY", ":0")
    monkeypatch.setenv("SDL_VIDEODRIVER", "x11")  # not headless: get to the import
    monkeypatch.setitem(sys.modules, module, None)
    if module == "imageio":
        monkeypatch.setitem(sys.modules, "imageio.v2", None)
    argv = ["replay", log_path] + (["--video", str(tmp_path / "o.mp4")] if video else [])
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 1
    assert EXTRA in _one_line_error(capsys, "replay")
    assert not (tmp_path / "o.mp4").exists()
