"""Hardening of evaluation, replay and the command line: atomic outputs, folders checked before
the work, broken episode logs, bad replay options, missing extras, ``--set`` list items."""

import json
import os
import sys
import zipfile

import numpy as np
import pytest

import orca_env.evaluation.suite as suite
from orca_env.cli import _parse_set, build_parser, main
from orca_env.evaluation import evaluate, load_log, replay
from orca_env.render import VideoWriter

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CROWDNAV = os.path.join(ROOT, "configs", "crowdnav_circle.yaml")
BOTTLENECK = os.path.join(ROOT, "configs", "bottleneck.yaml")
SHORT = {"max_steps": 8}


@pytest.fixture(scope="module")
def log_path(tmp_path_factory):
    out = tmp_path_factory.mktemp("eval")
    evaluate(CROWDNAV, "orca", episodes=1, out_dir=str(out), logs=1, overrides=SHORT)
    return str(out / "logs" / "episode_10000.npz")


@pytest.fixture
def no_episodes(monkeypatch):
    """Fail the test if an episode runs: checks must come before the work."""
    def run_episode(*args, **kwargs):
        raise AssertionError("an episode ran before the failing check")
    monkeypatch.setattr(suite, "run_episode", run_episode)


def _one_line_error(capsys, command):
    err = capsys.readouterr().err
    assert err.startswith(f"orca-env {command}: error: ") and err.count("\n") == 1, err
    return err


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


# -- 3. replay input errors ---------------------------------------------------------------------
def _rewrite(src, dst, drop=(), **replace):
    with np.load(src, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files if k not in drop}
    arrays.update(replace)
    np.savez(dst, **arrays)


def _meta(src, **changes):
    with np.load(src, allow_pickle=False) as z:
        meta = json.loads(str(z["meta"]))
    meta.update(changes)
    return np.array(json.dumps(meta))


BROKEN = {
    "empty": (lambda src, dst: open(dst, "wb").close(), "not a valid .npz file"),
    "truncated": (lambda src, dst: open(dst, "wb").write(open(src, "rb").read()[:3000]),
                  "truncated or corrupted"),
    "text": (lambda src, dst: open(dst, "w").write("hello"), "not a valid .npz file"),
    "missing_key": (lambda src, dst: _rewrite(src, dst, drop=("positions",)),
                    "array 'positions' is missing"),
    "meta_not_json": (lambda src, dst: _rewrite(src, dst, meta=np.array("{oops")),
                      "'meta' is not valid JSON"),
    "meta_not_object": (lambda src, dst: _rewrite(src, dst, meta=np.array("[1, 2]")),
                        "'meta' must be a JSON object"),
    "meta_number_array": (lambda src, dst: _rewrite(src, dst, meta=np.arange(3)),
                          "'meta' must be a JSON string"),
    "meta_wrong_format": (lambda src, dst: _rewrite(src, dst, meta=_meta(src, format="x/2")),
                          "not an episode log of format"),
    "meta_bad_seed": (lambda src, dst: _rewrite(src, dst, meta=_meta(src, seed="ten")),
                      "meta 'seed' has the wrong type"),
    "meta_bad_fps": (lambda src, dst: _rewrite(src, dst, meta=_meta(src, render_fps=0)),
                     "'render_fps' must be a finite number > 0"),
    "wrong_shape": (lambda src, dst: _rewrite(src, dst, velocities=np.zeros((2, 2, 2))),
                    "'velocities' has shape (2, 2, 2)"),
    "bad_status_code": (lambda src, dst: _rewrite(
        src, dst, statuses=np.full(np.load(src)["statuses"].shape, 99, dtype=np.int8)),
        "'statuses' holds codes outside"),
    "bad_offsets": (lambda src, dst: _rewrite(src, dst, obstacle_offsets=np.array([0, 5])),
                    "'obstacle_offsets' must rise from 0 to"),
    # A pickled object array: never unpickled (allow_pickle=False), refused with a message.
    "pickle": (lambda src, dst: _rewrite(src, dst, meta=np.array([{"format": 1}], dtype=object)),
               "not a valid .npz file"),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_a_broken_log_is_a_value_error_naming_the_file_and_the_cli_exits_2(tmp_path, log_path,
                                                                          capsys, case):
    make, what = BROKEN[case]
    bad = str(tmp_path / f"{case}.npz")
    make(log_path, bad)
    with pytest.raises(ValueError) as exc:
        load_log(bad)
    msg = str(exc.value)
    assert repr(bad) in msg and what in msg, msg
    for argv in (["replay", bad], ["replay", bad, "--video", str(tmp_path / "o.mp4")]):
        with pytest.raises(SystemExit) as ex:
            main(argv)
        assert ex.value.code == 2
        assert what in _one_line_error(capsys, "replay")
    assert not (tmp_path / "o.mp4").exists()


def test_bit_flips_anywhere_give_a_value_error_or_a_replayable_log(tmp_path, log_path):
    data = bytearray(open(log_path, "rb").read())
    refused = 0
    for k, offset in enumerate(np.linspace(0, len(data) - 1, 60).astype(int)):
        flipped = bytearray(data)
        flipped[offset] ^= 0x10
        path = tmp_path / f"flip{k}.npz"
        path.write_bytes(bytes(flipped))
        try:
            log = load_log(path)
        except ValueError as exc:
            assert str(path) in str(exc)
            refused += 1
            continue
        replay(log, render_mode="rgb_array", size=240)  # what loads, replays
    assert refused >= 30  # the CRCs catch flips in the data


def test_missing_log_and_folder(tmp_path, capsys):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_log(tmp_path / "nope.npz")
    with pytest.raises(ValueError, match="is a folder"):
        load_log(tmp_path)
    with pytest.raises(SystemExit) as exc:
        main(["replay", str(tmp_path / "nope.npz")])
    assert exc.value.code == 2 and "does not exist" in _one_line_error(capsys, "replay")


def test_logs_are_loaded_without_pickles(log_path, monkeypatch):
    seen = []
    real = np.load
    monkeypatch.setattr(np, "load", lambda *a, **k: (seen.append(k), real(*a, **k))[1])
    load_log(log_path)
    assert seen and all(k.get("allow_pickle") is False for k in seen)


@pytest.mark.parametrize("option, value", [
    ("--fps", "0"), ("--fps", "-2"), ("--fps", "nan"), ("--fps", "inf"), ("--fps", "fast"),
    ("--size", "0"), ("--size", "-720"), ("--size", "100000"), ("--size", "12.5"),
])
def test_bad_replay_fps_and_size_are_refused_by_name(tmp_path, log_path, capsys, option, value):
    with pytest.raises(SystemExit) as exc:
        main(["replay", log_path, "--video", str(tmp_path / "o.mp4"), option, value])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert f"argument {option}: " in err and f"got {value!r}" in err
    assert not (tmp_path / "o.mp4").exists()


def test_bad_fps_and_size_in_the_library(log_path, tmp_path):
    for fps in (0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match=r"fps must be a finite number > 0, got"):
            replay(log_path, video=tmp_path / "o.mp4", fps=fps)
        with pytest.raises(ValueError, match=r"fps must be a finite number > 0"):
            VideoWriter(tmp_path / "o.mp4", fps=fps)
    for size in (0, 10, 100_000, 720.0, True):
        with pytest.raises(ValueError, match=r"size must be an integer number of pixels in "
                                             r"240 \.\. 8192, got"):
            replay(log_path, video=tmp_path / "o.mp4", size=size)
    with pytest.raises(ValueError, match="video_size must be an integer"):
        evaluate(CROWDNAV, "orca", episodes=1, out_dir=str(tmp_path), videos=1, video_size=5)
    assert not (tmp_path / "o.mp4").exists()


def test_replay_fps_option_reaches_the_video(tmp_path, log_path):
    import imageio.v2 as iio

    assert main(["replay", log_path, "--video", str(tmp_path / "o.mp4"), "--fps", "2",
                 "--size", "240"]) == 0
    reader = iio.get_reader(tmp_path / "o.mp4")
    assert reader.get_meta_data()["fps"] == 2
    reader.close()


@pytest.mark.parametrize("env", [{"SDL_VIDEODRIVER": "dummy"},
                                 {"SDL_VIDEODRIVER": None, "DISPLAY": None,
                                  "WAYLAND_DISPLAY": None}])
def test_replay_without_a_display_suggests_a_video(log_path, capsys, monkeypatch, env):
    for key, value in env.items():
        if value is None:
            monkeypatch.delenv(key, raising=False)
        else:
            monkeypatch.setenv(key, value)
    monkeypatch.setattr(sys, "platform", "linux")
    import orca_env.evaluation as ev

    monkeypatch.setattr(ev, "replay", lambda *a, **k: pytest.fail("replay started"))
    with pytest.raises(SystemExit) as exc:
        main(["replay", log_path])
    assert exc.value.code == 2
    assert "pass --video out.mp4" in _one_line_error(capsys, "replay")


def test_replay_video_under_a_regular_file(tmp_path, log_path, capsys):
    (tmp_path / "f").write_text("x")
    with pytest.raises(SystemExit) as exc:
        main(["replay", log_path, "--video", str(tmp_path / "f" / "o.mp4")])
    assert exc.value.code == 2
    assert "--video " in _one_line_error(capsys, "replay")


# -- 4. missing extras --------------------------------------------------------------------------
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


# -- 5. --set list items, policy documentation ------------------------------------------------
def test_set_overrides_list_items(tmp_path, capsys):
    rep = evaluate(BOTTLENECK, "orca", episodes=1, overrides=_parse_set(
        ["groups.0.count=2", "groups.1.count=3"],
        {"groups": [{"population": "learned", "count": 4, "on_goal": "stop"},
                    {"population": "orca", "count": 12, "on_goal": "stop"}]}))
    assert rep["env"]["num_learned"] == 2 and rep["env"]["num_agents"] == 5
    # Through the command line: the file's list, one item changed, the rest kept.
    assert main(["eval", BOTTLENECK, "--episodes", "1", "--quiet", "--print-hash",
                 "--set", "groups.0.count=2", "--set", "max_steps=5"]) == 0
    ref = evaluate(BOTTLENECK, "orca", episodes=1, overrides={"max_steps": 5, "groups": [
        {"name": "learners", "population": "learned", "count": 2, "on_goal": "stop"},
        {"name": "crowd", "population": "orca", "count": 12, "on_goal": "stop"}]})
    from orca_env.evaluation import report_hash

    assert capsys.readouterr().out.strip() == report_hash(ref)
    # A config without groups: the scenario's default groups are the list.
    cfg = tmp_path / "c.yaml"
    cfg.write_text("scenario: bottleneck_v0\nmax_steps: 5\n")
    assert main(["eval", str(cfg), "--episodes", "1", "--quiet", "--out", str(tmp_path / "o"),
                 "--set", "groups.0.count=1"]) == 0
    with open(tmp_path / "o" / "metrics.json", encoding="utf-8") as fh:
        assert json.load(fh)["env"]["num_learned"] == 1


@pytest.mark.parametrize("items, match", [
    (["groups.5.count=2"], "'groups' is a list of 2 items: expected an index 0 .. 1, got '5'"),
    (["groups.x.count=2"], "'groups' is a list of 2 items: expected an index 0 .. 1, got 'x'"),
    (["groups.-1.count=2"], "'groups' is a list of 2 items: expected an index 0 .. 1, got '-1'"),
    (["max_steps.x=1"], "'max_steps' was set to 100 in the config, so it has no key 'x'"),
    (["groups.0.count.x=1"], "'groups.0.count' was set to 4 in the config"),
    (["a=1", "a.b=2"], "'a' was set to 1 by an earlier --set, so it has no key 'b'"),
])
def test_set_errors_name_the_key(items, match):
    base = {"max_steps": 100, "groups": [{"count": 4}, {"count": 12}]}
    with pytest.raises(ValueError, match="--set '.*': " + match.replace(".", r"\.")
                       .replace("(", r"\(").replace(")", r"\)")):
        _parse_set(items, base)


def test_set_without_list_items_is_unchanged():
    assert _parse_set(["observation.range=6", "max_steps=5", "rewards.goal=2"]) == {
        "observation": {"range": 6}, "max_steps": 5, "rewards": {"goal": 2}}


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


def test_zip_of_the_right_members_but_garbage_data(tmp_path, log_path):
    """A zip whose members are not .npy arrays."""
    bad = tmp_path / "garbage.npz"
    with zipfile.ZipFile(bad, "w") as z, np.load(log_path) as src:
        for name in src.files:
            z.writestr(f"{name}.npy", b"not an array")
    with pytest.raises(ValueError, match="unreadable"):
        load_log(bad)


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


def test_set_list_items_with_a_shipped_config_name():
    from orca_env.cli import _config_overrides
    out = _config_overrides("crowdnav_circle", ["groups.1.count=2", "max_steps=1e2"])
    assert out["groups"][1]["count"] == 2 and out["groups"][0]["population"] == "learned"
    assert out["max_steps"] == 100.0  # 1e2 is a number, as in config files
