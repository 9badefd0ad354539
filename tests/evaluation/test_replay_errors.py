"""Bad replay input: broken, garbage or missing episode logs, bad --fps and --size, no display:
a ValueError naming the file or option, exit code 2 from the command line, no video left."""

import json
import sys
import zipfile

import numpy as np
import pytest
from eval_checks import CROWDNAV
from eval_checks import one_line_error as _one_line_error

from orca_env.cli import main
from orca_env.evaluation import evaluate, load_log, replay
from orca_env.render import VideoWriter


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


def _poke(src, key, value):
    """``key``'s array of the log ``src`` with its first entry set to ``value``."""
    with np.load(src, allow_pickle=False) as z:
        a = z[key].astype(np.float64)
    a.reshape(-1)[0] = value
    return a


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
    # Values, not only shapes (issue 27, items 9 and 10): each of these loaded and then hung
    # or crashed the replay.
    "nan_position": (lambda src, dst: _rewrite(src, dst, positions=_poke(src, "positions",
                                                                       np.nan)),
                     "'positions' must hold finite values"),
    "inf_velocity": (lambda src, dst: _rewrite(src, dst, velocities=_poke(src, "velocities",
                                                                        np.inf)),
                     "'velocities' must hold finite values"),
    "nan_radius": (lambda src, dst: _rewrite(src, dst, radii=_poke(src, "radii", np.nan)),
                   "'radii' must be finite"),
    "nan_max_speed": (lambda src, dst: _rewrite(src, dst, max_speeds=_poke(src, "max_speeds",
                                                                         np.nan)),
                      "'max_speeds' must hold finite values"),
    "one_vertex_boundary": (lambda src, dst: _rewrite(src, dst, boundary=np.zeros((1, 2))),
                            "'boundary' must have 0 or at least 3 vertices"),
    "tiny_fps": (lambda src, dst: _rewrite(src, dst, meta=_meta(src, render_fps=1e-9)),
                 "'render_fps' must be a finite number > 0, within"),
    "nul_title": (lambda src, dst: _rewrite(src, dst, meta=_meta(src, title="a\x00b")),
                  "'title' must be at most"),
    "huge_title": (lambda src, dst: _rewrite(src, dst, meta=_meta(src, title="x" * 10**6)),
                   "'title' must be at most"),
    "deep_meta": (lambda src, dst: _rewrite(src, dst, meta=np.array(
        '{"format": 1, "x": ' + "[" * 100_000 + "]" * 100_000 + "}")),
        "'meta' is not valid JSON (RecursionError"),
    # A pickled object array: never unpickled (allow_pickle=False), refused with a message.
    "pickle": (lambda src, dst: _rewrite(src, dst, meta=np.array([{"format": 1}], dtype=object)),
               "holds Python objects"),
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
    from numpy.lib import format as npy

    seen = []
    real = npy.read_array
    monkeypatch.setattr(npy, "read_array", lambda *a, **k: (seen.append(k), real(*a, **k))[1])
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


def test_zip_of_the_right_members_but_garbage_data(tmp_path, log_path):
    """A zip whose members are not .npy arrays."""
    bad = tmp_path / "garbage.npz"
    with zipfile.ZipFile(bad, "w") as z, np.load(log_path) as src:
        for name in src.files:
            z.writestr(f"{name}.npy", b"not an array")
    with pytest.raises(ValueError, match="unreadable"):
        load_log(bad)
