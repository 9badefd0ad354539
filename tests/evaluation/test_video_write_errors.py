"""A video that cannot be written completely (issue 27 item 1): a full disk, a file size limit,
ffmpeg failing at close or exiting 0 with a truncated file, a GIF writer whose close fails.
Each is one ``OSError`` (:class:`orca_env.files.WriteError`) naming the file and the cause;
nothing is renamed into place, an earlier file at the destination is kept, no temporary file
is left, and the command line prints one line with exit status 1 instead of ``wrote ...``.

No tmpfs is needed: the file size limit (``RLIMIT_FSIZE``) runs in a subprocess, and a full
disk is a fake ffmpeg that prints what the real one does on ENOSPC and exits 1.
"""

import errno
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from eval_checks import one_line_error

from orca_env.cli import main
from orca_env.files import WriteError
from orca_env.render import VideoWriter, write_video

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _frames(n=4, shape=(240, 320)):
    return [np.full((*shape, 3), 40 * t % 256, dtype=np.uint8) for t in range(n)]


def _only(folder, *names):
    """``folder`` holds exactly ``names`` (no temporary file left behind; ``bin`` aside)."""
    assert sorted(set(os.listdir(folder)) - {"bin"}) == sorted(names)


def _fake_ffmpeg(tmp_path, monkeypatch, body):
    """Make VideoWriter run a shell script as ffmpeg (its last argument is the output file)."""
    import imageio_ffmpeg

    (tmp_path / "bin").mkdir(exist_ok=True)
    exe = tmp_path / "bin" / "ffmpeg"
    exe.write_text("#!/bin/sh\nfor last; do :; done\n" + textwrap.dedent(body))
    exe.chmod(0o755)
    monkeypatch.setattr(imageio_ffmpeg, "get_ffmpeg_exe", lambda: str(exe))
    return exe


# A full disk as ffmpeg reports it: part of the file written, the error on stderr, status 1.
NO_SPACE = """\
    cat > /dev/null
    printf 'partial' > "$last"
    echo "[out#0/mp4 @ 0x1] Error closing file $last: No space left on device" >&2
    exit 1
"""


def test_a_full_disk_at_close_is_one_error_naming_the_file_and_keeps_the_earlier_video(
        tmp_path, monkeypatch):
    _fake_ffmpeg(tmp_path, monkeypatch, NO_SPACE)
    out = tmp_path / "v.mp4"
    out.write_bytes(b"the earlier video")
    with pytest.raises(WriteError) as info:
        write_video(_frames(), out)
    msg = str(info.value)
    assert msg == f"could not write {out}: no space left on device; the earlier file there is kept"
    assert info.value.errno == errno.ENOSPC and info.value.filename == str(out)
    assert isinstance(info.value, OSError) and "\n" not in msg
    assert out.read_bytes() == b"the earlier video"
    _only(tmp_path, "v.mp4")


def test_no_earlier_file_says_nothing_was_written_and_no_gif_fallback(tmp_path, monkeypatch):
    _fake_ffmpeg(tmp_path, monkeypatch, NO_SPACE)
    w = VideoWriter(tmp_path / "v.mp4")
    for f in _frames():
        w.append(f)
    with pytest.raises(WriteError, match=r"v\.mp4: no space left on device; nothing was "
                                         r"written there$"):
        w.close()
    _only(tmp_path)


def test_ffmpeg_dying_mid_stream_is_an_error_at_append(tmp_path, monkeypatch):
    """ffmpeg stops reading (its disk filled up while encoding): the next frame raises."""
    _fake_ffmpeg(tmp_path, monkeypatch, """\
        head -c 300000 > /dev/null
        printf 'partial' > "$last"
        echo "av_interleaved_write_frame(): No space left on device" >&2
        exit 1
    """)
    w = VideoWriter(tmp_path / "v.mp4")
    with pytest.raises(WriteError, match="no space left on device"):
        for f in _frames(40):
            w.append(f)
    w.abort()  # what a with block does; nothing left to remove
    _only(tmp_path)


def test_ffmpeg_exiting_0_with_a_truncated_mp4_is_refused(tmp_path, monkeypatch):
    """A file without its moov box ("moov atom not found") is never renamed into place."""
    real = write_video(_frames(), tmp_path / "real.mp4")
    cut = tmp_path / "cut.mp4"
    cut.write_bytes(open(real, "rb").read()[:1500])
    _fake_ffmpeg(tmp_path, monkeypatch, f"""\
        cat > /dev/null
        cp '{cut}' "$last"
        exit 0
    """)
    folder = tmp_path / "out"
    folder.mkdir()
    with pytest.raises(WriteError, match=r"out/v\.mp4: the mp4 (is cut short|has no moov)"):
        write_video(_frames(), folder / "v.mp4")
    _only(folder)


def test_an_unknown_ffmpeg_failure_names_the_status_and_its_last_line(tmp_path, monkeypatch):
    _fake_ffmpeg(tmp_path, monkeypatch, """\
        cat > /dev/null
        echo "Conversion failed!" >&2
        exit 187
    """)
    with pytest.raises(WriteError, match=r"v\.mp4: ffmpeg failed \(when finishing the file, "
                                         r"exit status 187\): Conversion failed!; nothing"):
        write_video(_frames(), tmp_path / "v.mp4")
    _only(tmp_path)


def test_a_gif_writer_whose_close_fails_for_lack_of_space(tmp_path, monkeypatch):
    import imageio.v2 as iio

    real_get_writer = iio.get_writer

    class Full:
        def __init__(self, *a, **k):
            self.inner = real_get_writer(*a, **k)

        def append_data(self, frame):
            self.inner.append_data(frame)

        def close(self):
            self.inner.close()
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(iio, "get_writer", Full)
    out = tmp_path / "v.gif"
    out.write_bytes(b"old")
    with pytest.raises(WriteError, match=r"v\.gif: no space left on device; the earlier file "
                                         r"there is kept$"):
        write_video(_frames(), out)
    assert out.read_bytes() == b"old"
    _only(tmp_path, "v.gif")


def test_a_file_size_limit_in_a_subprocess(tmp_path):
    """RLIMIT_FSIZE: the real ffmpeg is stopped by SIGXFSZ (or gets EFBIG) part way."""
    pytest.importorskip("resource")
    out = tmp_path / "v.mp4"
    out.write_bytes(b"old")
    code = textwrap.dedent(f"""
        import resource, sys
        import numpy as np
        from orca_env.files import WriteError
        from orca_env.render import write_video
        rng = np.random.default_rng(0)
        frames = [rng.integers(0, 256, (240, 320, 3), dtype=np.uint8) for _ in range(12)]
        resource.setrlimit(resource.RLIMIT_FSIZE, (60_000, 60_000))
        try:
            write_video(frames, {str(out)!r})
        except WriteError as exc:
            print(exc)
            sys.exit(3)
    """)
    env = dict(os.environ, PYTHONPATH=ROOT)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=300)
    assert proc.returncode == 3, proc.stderr
    assert proc.stdout == (f"could not write {out}: file too large (the file size limit); "
                           f"the earlier file there is kept\n")
    assert out.read_bytes() == b"old"
    _only(tmp_path, "v.mp4")


def test_replay_video_on_a_full_disk_is_one_line_and_exit_1(tmp_path, monkeypatch, capsys,
                                                           log_path):
    _fake_ffmpeg(tmp_path, monkeypatch, NO_SPACE)
    out = tmp_path / "full" / "v.mp4"
    with pytest.raises(SystemExit) as info:
        main(["replay", log_path, "--video", str(out), "--size", "240"])
    assert info.value.code == 1
    err = one_line_error(capsys, "replay")
    assert f"could not write {out}: no space left on device; nothing was written there" in err
    assert "wrote" not in capsys.readouterr().out
    _only(tmp_path / "full")


def test_eval_videos_on_a_full_disk_is_one_line_and_exit_1(tmp_path, monkeypatch, capsys):
    from eval_checks import CROWDNAV

    _fake_ffmpeg(tmp_path, monkeypatch, NO_SPACE)
    out = tmp_path / "ev"
    with pytest.raises(SystemExit) as info:
        main(["eval", CROWDNAV, "--policy", "orca", "--episodes", "1", "--out", str(out),
              "--videos", "1", "--video-size", "240", "--quiet", "--set", "max_steps=8"])
    assert info.value.code == 1
    err = one_line_error(capsys, "eval")
    assert f"could not write {out / 'videos' / 'episode_10000.mp4'}: no space left" in err
    _only(out / "videos")


def test_comparison_video_failure_is_raised_after_the_numbers(tmp_path, monkeypatch, capsys):
    """train.py's comparison: the table is saved, then the video's error ends the command."""
    import orca_env.training.comparison as comparison

    def fail(*args, **kwargs):
        raise WriteError(errno.ENOSPC, "could not write x.mp4: no space left on device; "
                                       "nothing was written there", "x.mp4")

    monkeypatch.setattr(comparison.episode_log, "replay", fail)
    with pytest.raises(WriteError):
        comparison._video_from_log(str(tmp_path), 10000)
    monkeypatch.setattr(comparison.episode_log, "replay",
                        lambda *a, **k: (_ for _ in ()).throw(ImportError("no pygame")))
    assert comparison._video_from_log(str(tmp_path), 10000) is None
    assert "No video (ImportError: no pygame)" in capsys.readouterr().out
