"""Headless rendering: frames, the lazy pygame import, the debug layer, video files."""

import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

from orca_env import OrcaEnv
from orca_env.codes import STATUSES
from orca_env.evaluation import snapshot
from orca_env.render import Renderer, VideoWriter, fit_view, frame_size, write_video

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CROWDNAV = os.path.join(ROOT, "configs", "crowdnav_circle.yaml")
BOTTLENECK = os.path.join(ROOT, "configs", "bottleneck.yaml")


@pytest.mark.parametrize("config", [CROWDNAV, BOTTLENECK])
def test_rgb_array_frames_have_shape_dtype_and_change(config):
    env = OrcaEnv(config, render_mode="rgb_array")
    env.reset(seed=3)
    f0 = env.render()
    assert f0.dtype == np.uint8 and f0.ndim == 3 and f0.shape[2] == 3
    assert f0.shape[0] % 16 == 0 and f0.shape[1] % 16 == 0
    assert max(f0.shape[:2]) == 720
    frames = [f0]
    for _ in range(6):
        env.step(env.heuristic_actions())
        frames.append(env.render())
    assert all(f.shape == f0.shape and f.dtype == np.uint8 for f in frames)
    # Agents move, so consecutive frames differ, and by more than the overlay text.
    for a, b in zip(frames, frames[1:], strict=False):
        assert (a != b).any()
    assert (frames[0] != frames[-1]).any(axis=2).mean() > 0.002
    env.close()


def test_render_mode_none_never_starts_pygame():
    code = (
        "import sys, warnings\n"
        "import orca_env.render, orca_env.evaluation.episode_log, orca_env.evaluation\n"
        "from orca_env import OrcaEnv\n"
        "from orca_env.evaluation import evaluate\n"
        f"env = OrcaEnv({CROWDNAV!r})\n"
        "env.reset(seed=1)\n"
        "env.step(env.heuristic_actions())\n"
        "with warnings.catch_warnings(record=True):\n"
        "    warnings.simplefilter('always')\n"
        "    assert env.render() is None\n"
        f"evaluate({CROWDNAV!r}, 'orca', episodes=1)\n"
        "assert 'pygame' not in sys.modules, 'pygame was imported'\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300, env={**os.environ, "SDL_VIDEODRIVER": "dummy"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_snapshot_statuses_and_debug_layer():
    env = OrcaEnv(CROWDNAV)
    env.reset(seed=5)
    for _ in range(4):
        env.step(env.heuristic_actions())
    data = snapshot(env, 4, debug_agent=0)
    n = data["positions"].shape[0]
    assert data["statuses"].shape == (n,) and data["step"] == 4
    assert data["orca_lines"].ndim == 2 and data["orca_lines"].shape[1] == 4
    assert data["orca_lines"].shape[0] >= 1  # five humans around the robot
    plain = dict(data)
    del plain["orca_lines"], plain["selected"]
    f_dbg = Renderer("rgb_array", size=320).draw(data)
    f_plain = Renderer("rgb_array", size=320).draw(plain)
    assert f_dbg.shape == f_plain.shape
    assert max(f_dbg.shape[:2]) == 320 and f_dbg.shape[2] == 3
    # The inset sits in the bottom-right corner.
    h, w = f_dbg.shape[:2]
    corner = (f_dbg[h // 2:, w // 2:] != f_plain[h // 2:, w // 2:]).any(axis=2).mean()
    assert corner > 0.05
    # Statuses change the agents' rings: a collided robot is drawn differently.
    hit = dict(plain)
    hit["statuses"] = plain["statuses"].copy()
    hit["statuses"][0] = STATUSES.index("collided")
    f_hit = Renderer("rgb_array", size=320).draw(hit)
    assert (f_hit != f_plain).any()


def test_human_mode_headless():
    env = OrcaEnv(CROWDNAV, render_mode="human")
    env.reset(seed=2)
    env.metadata = dict(env.metadata, render_fps=1000)  # do not sleep in the test
    assert env.render() is None
    env.step(env.heuristic_actions())
    assert env.render() is None
    env.close()
    env.close()


def test_fit_view_and_frame_size():
    data = {"positions": np.array([[0.0, 0.0], [10.0, 2.0]]), "radii": np.array([0.5, 0.5]),
            "populations": np.array([0, 1]), "active": np.array([True, True]),
            "obstacles": [np.array([[0.0, -3.0], [1.0, -3.0], [1.0, -2.0]])], "extent": 50.0}
    x0, y0, x1, y1 = fit_view(data)
    assert x0 < -0.5 and x1 > 10.5 and y0 < -3.0 and y1 > 2.5
    assert x1 - x0 < 20  # fitted to the content, not to the extent
    w, h = frame_size((x0, y0, x1, y1), 720)
    assert w == 720 and h % 16 == 0 and 240 <= h < 720
    frame = Renderer("rgb_array", size=400).draw(data)
    assert frame.shape[1] == 400
    with pytest.raises(ValueError, match="render_mode"):
        Renderer("window")


def _frames(k=8, shape=(240, 320)):
    out = []
    for t in range(k):
        f = np.zeros((*shape, 3), dtype=np.uint8)
        f[:, : 20 + 30 * t] = (200, 50, 50)
        out.append(f)
    return out


def test_mp4_is_written_with_the_packaged_ffmpeg_and_readable(tmp_path):
    import imageio.v2 as iio
    import imageio_ffmpeg

    exe = imageio_ffmpeg.get_ffmpeg_exe()
    if "IMAGEIO_FFMPEG_EXE" not in os.environ:
        assert os.path.dirname(imageio_ffmpeg.__file__) in exe  # the wheel's binary
    path = write_video(_frames(), tmp_path / "v.mp4", fps=4)
    assert path.endswith(".mp4") and os.path.getsize(path) > 0
    reader = iio.get_reader(path)
    frames = [f for f in reader.iter_data()]  # list(reader) trips on nframes = inf
    reader.close()
    assert len(frames) == 8
    assert frames[0].shape == (240, 320, 3) and frames[0].dtype == np.uint8
    # Lossy, but the moving edge is where it should be.
    assert frames[-1][:, :200].mean() > frames[0][:, :200].mean() + 50


def test_gif_fallback_without_ffmpeg(tmp_path, monkeypatch):
    import imageio.v2 as iio

    monkeypatch.setitem(sys.modules, "imageio_ffmpeg", None)  # import fails
    w = VideoWriter(tmp_path / "v.mp4", fps=4)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        for f in _frames(3):
            w.append(f)
    path = w.close()
    assert path.endswith(".gif") and w.format == "gif"
    assert any("GIF" in str(r.message) for r in rec)
    frames = iio.mimread(path)
    assert len(frames) == 3 and frames[0].shape[:2] == (240, 320)


@pytest.mark.parametrize("exe", ["/nonexistent/ffmpeg", "{tmp}/not_ffmpeg"])
def test_gif_fallback_when_the_ffmpeg_binary_is_missing_or_broken(tmp_path, monkeypatch, exe):
    """imageio starts ffmpeg only at the first frame: a bad binary must still fall back."""
    import imageio.v2 as iio

    bad = tmp_path / "not_ffmpeg"
    bad.write_text("this is not an executable")  # exists, but cannot run
    monkeypatch.setenv("IMAGEIO_FFMPEG_EXE", exe.format(tmp=tmp_path))
    w = VideoWriter(tmp_path / "v.mp4", fps=4)
    with pytest.warns(UserWarning, match="mp4 writing failed .*writing a GIF instead"):
        w.append(_frames(1)[0])
    for f in _frames(3)[1:]:
        w.append(f)
    path = w.close()
    assert path == str(tmp_path / "v.gif") and w.format == "gif" and w.frames_written == 3
    assert not (tmp_path / "v.mp4").exists()
    frames = iio.mimread(path)
    assert len(frames) == 3 and frames[0].shape[:2] == (240, 320)


def test_renderer_after_close_raises():
    r = Renderer("rgb_array", size=240)
    r.close()
    with pytest.raises(RuntimeError, match="close"):
        r.draw({"positions": np.zeros((1, 2)), "radii": np.ones(1), "populations": [0],
                "active": [True]})


def test_renderer_reused_across_resets_draws_the_new_scene():
    """env.render() after reset shows the new episode's obstacles, not the first episode's."""
    env = OrcaEnv("configs/random_obstacles.yaml", render_mode="rgb_array")
    env.reset(seed=1)
    env.render()
    env.reset(seed=2)
    reused = env.render()
    fresh_env = OrcaEnv("configs/random_obstacles.yaml", render_mode="rgb_array")
    fresh_env.reset(seed=2)
    np.testing.assert_array_equal(reused, fresh_env.render())
    env.close()
    fresh_env.close()


def test_scan_and_cone_are_drawn_for_the_sensing_agent():
    """With a LiDAR and a cone the frame shows the rays and hits; without them it is unchanged."""
    from orca_env.render import COLORS

    ob = {"lidar": {"beams": 48, "range": 4.0}, "fov": 120.0}
    env = OrcaEnv("configs/random_obstacles.yaml", render_mode="rgb_array", observation=ob)
    env.reset(seed=3)
    data = env.render_data()
    slot = int(env.live_slots[0])
    assert data["scan_agent"] == slot and data["scan_points"].shape == (48, 2)
    reach = np.hypot(*(data["scan_points"] - data["positions"][slot]).T)
    assert np.all(reach <= 4.0 + 1e-9) and np.any(reach < 4.0)
    frame = env.render()
    for key in ("scan", "scan_hit", "sensor_cone"):
        assert np.all(frame == COLORS[key], axis=-1).any(), key
    plain = OrcaEnv("configs/random_obstacles.yaml", render_mode="rgb_array")
    plain.reset(seed=3)
    assert "scan_points" not in plain.render_data()
    assert not np.all(plain.render() == COLORS["scan"], axis=-1).any()
    env.close()
    plain.close()
