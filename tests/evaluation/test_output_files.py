"""Evaluation outputs: every file is written under a temporary name and renamed (an interrupted
write leaves nothing or the previous file), and output folders are checked before any episode."""

import os

import numpy as np
import pytest
from eval_checks import CROWDNAV, SHORT
from eval_checks import one_line_error as _one_line_error

from orca_env.cli import main
from orca_env.evaluation import evaluate, load_log, replay
from orca_env.render import VideoWriter


# -- 1. atomic writes ---------------------------------------------------------------------------
def test_every_output_is_written_to_a_temporary_name_and_renamed(tmp_path, monkeypatch):
    renames = []
    real = os.replace
    monkeypatch.setattr(os, "replace", lambda a, b: (renames.append((a, b)), real(a, b))[1])
    out = tmp_path / "run"
    evaluate(CROWDNAV, "orca", episodes=2, out_dir=str(out), videos=1, trajectories=2, logs=1,
             video_size=240, overrides=SHORT)
    targets = {os.path.relpath(b, out): a for a, b in renames}
    for name in ("metrics.json", "episodes.csv", "trajectories.png",
                 os.path.join("logs", "episode_10000.npz"),
                 os.path.join("videos", "episode_10000.mp4")):
        tmp = targets[name]
        assert os.path.dirname(tmp) == os.path.dirname(os.path.join(out, name))
        assert os.path.basename(tmp).startswith(".")
    # Nothing temporary is left behind.
    for folder, _, files in os.walk(out):
        assert not [f for f in files if f.startswith(".")], folder


def test_an_interrupted_video_or_log_leaves_nothing_or_the_previous_file(tmp_path, log_path,
                                                                       monkeypatch):
    frame = np.zeros((240, 320, 3), dtype=np.uint8)
    with pytest.raises(KeyboardInterrupt), VideoWriter(tmp_path / "v.mp4", fps=4) as w:
        w.append(frame)
        w.append(frame)
        raise KeyboardInterrupt
    assert os.listdir(tmp_path) == []
    # A replay that fails mid-way leaves no video either.
    calls = []

    def fail(t, data, frame):
        calls.append(t)
        if t == 2:
            raise RuntimeError("stop")
    with pytest.raises(RuntimeError, match="stop"):
        replay(log_path, video=tmp_path / "r.mp4", size=240, on_frame=fail)
    assert calls == [0, 1, 2] and os.listdir(tmp_path) == []
    # A log save that fails keeps the previous file, bit for bit.
    log = load_log(log_path)
    dest = tmp_path / "ep.npz"
    log.save(dest)
    before = dest.read_bytes()

    def broken(path, **arrays):
        with open(path, "wb") as fh:
            fh.write(b"PK partial")
        raise OSError("disk full")
    monkeypatch.setattr(np, "savez_compressed", broken)
    with pytest.raises(OSError, match="disk full"):
        log.save(dest)
    assert dest.read_bytes() == before and os.listdir(tmp_path) == ["ep.npz"]


# -- 2. output folders are checked before the work -------------------------------------------
def test_eval_out_under_a_regular_file_fails_before_any_episode(tmp_path, capsys, no_episodes):
    (tmp_path / "somefile").write_text("x")
    bad = str(tmp_path / "somefile" / "sub")
    with pytest.raises(SystemExit) as exc:
        main(["eval", CROWDNAV, "--episodes", "3", "--quiet", "--out", bad])
    assert exc.value.code == 2
    err = _one_line_error(capsys, "eval")
    assert f"--out {bad!r}" in err
    with pytest.raises(ValueError, match=r"out_dir .*somefile"):
        evaluate(CROWDNAV, "orca", episodes=3, out_dir=bad)


def test_a_file_where_a_subfolder_goes_fails_before_any_episode(tmp_path, no_episodes):
    (tmp_path / "logs").write_text("x")
    with pytest.raises(ValueError, match=r"out_dir .*'.*logs' exists and is not a folder"):
        evaluate(CROWDNAV, "orca", episodes=2, out_dir=str(tmp_path), logs=1)


def test_a_rejected_command_leaves_no_new_out_folder(tmp_path, capsys):
    out = tmp_path / "new"
    with pytest.raises(SystemExit):
        main(["eval", CROWDNAV, "--quiet", "--set", "max_steps=-1", "--out", str(out)])
    assert "max_steps" in _one_line_error(capsys, "eval") and not out.exists()
    with pytest.raises(SystemExit):
        main(["bench", "--quiet", "--policy", "nosuch", "--out", str(out)])
    assert "nosuch" in _one_line_error(capsys, "bench") and not out.exists()
    # A folder that was there before stays, empty or not.
    out.mkdir()
    with pytest.raises(SystemExit):
        main(["eval", CROWDNAV, "--quiet", "--set", "max_steps=-1", "--out", str(out)])
    assert out.is_dir()


def test_extras_without_an_out_folder_name_out(capsys, no_episodes):
    with pytest.raises(ValueError, match=r"--logs 2: .*need an output folder: pass --out DIR "
                                         r"\(out_dir=DIR\)"):
        evaluate(CROWDNAV, "orca", episodes=2, logs=2)
    with pytest.raises(SystemExit) as exc:
        main(["eval", CROWDNAV, "--episodes", "2", "--videos", "1", "--trajectories", "1"])
    assert exc.value.code == 2
    assert "--videos 1, --trajectories 1: videos, trajectories and logs need an output " \
           "folder: pass --out DIR" in _one_line_error(capsys, "eval")
