"""Pictures people read: the HUD band and legend, finished and timed-out agents, trajectory
plots (legend, units, titles, no empty panels), and the missing-extra errors of rendering."""

import os
import sys

import numpy as np
import pytest

from orca_env import OrcaEnv
from orca_env.codes import Population, Status
from orca_env.evaluation import evaluate, load_log, snapshot
from orca_env.evaluation.plots import trajectory_figure
from orca_env.render import COLORS, Renderer, VideoWriter, fit_view, status_counts

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONFIGS = {name: os.path.join(ROOT, "configs", f"{name}.yaml")
           for name in ("crowdnav_circle", "bottleneck", "corridor")}
EXTRA = 'pip install "orca-env[video]"'


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    """Four logged ORCA episodes of the crowdnav circle."""
    out = tmp_path_factory.mktemp("eval")
    evaluate(CONFIGS["crowdnav_circle"], "orca", episodes=4, out_dir=str(out), logs=4)
    return [load_log(out / "logs" / f"episode_{10_000 + k}.npz") for k in range(4)]


def _draw_all(log, size=480):
    r = Renderer("rgb_array", size=size)
    frames = [r.draw(d) for d in log.frames()]
    return r, frames


@pytest.mark.parametrize("name", ["bottleneck", "corridor", "crowdnav_circle"])
def test_the_hud_band_is_above_the_scene_and_holds_a_legend(name):
    env = OrcaEnv(CONFIGS[name])
    env.reset(seed=10_000)
    data = snapshot(env, 0, title="policy orca   scenario x   seed 10000")
    r = Renderer("rgb_array", size=720)
    frame = r.draw(data)
    assert frame.dtype == np.uint8 and frame.shape[2] == 3 and max(frame.shape[:2]) == 720
    assert frame.shape[0] % 16 == 0 and frame.shape[1] % 16 == 0
    # Every wall, obstacle and agent of the view lies below the band.
    x0, y0, x1, y1 = fit_view(data)
    top = r._to_px(np.array([x0, y1]))[1]
    assert r._band > 40 and top >= r._band - 0.5
    # The band's background is its own colour, untouched by the scene.
    band = frame[: r._band - 2]
    assert (band == COLORS["band"]).all(axis=2).mean() > 0.6
    kinds = {item[0] for _, row in r._rows for _, item in row}
    assert {"title", "clock", "count", "pop", "ring", "arrow", "goal", "scale"} <= kinds
    labels = {item[2] for _, row in r._rows for _, item in row if item[0] in ("pop", "ring")}
    assert {"learned", "ORCA crowd", "at goal", "collided", "stalled", "timed out"} <= labels
    if name == "bottleneck":  # guidance: waypoints are drawn, so they are in the legend
        assert "waypoint" in kinds


def test_the_last_frame_shows_the_agents_that_reached_their_goal(logs):
    for log in logs:
        r, frames = _draw_all(log)
        last = frames[-1]
        pops = log.static["populations"]
        st = log.arrays["statuses"][-1]
        done = np.flatnonzero(~log.arrays["active"][-1] & (st == Status.AT_GOAL)
                              & (pops == Population.LEARNED))
        assert done.size  # the robot reaches its goal in these episodes
        for i in done:
            x, y = np.round(r._to_px(log.positions[-1, i])).astype(int)
            pixel = last[y, x].astype(int)
            assert not (pixel == COLORS["background"]).all()
            # A faded learned blue: bluish, lighter than the live fill.
            assert pixel[2] > pixel[0] and pixel.sum() > sum(COLORS["learned"])


def test_timed_out_agents_are_not_counted_as_active():
    pops = np.array([Population.LEARNED] * 4 + [Population.ORCA] * 2)
    active = np.ones(6, dtype=bool)
    statuses = np.array([Status.TIMED_OUT] * 3 + [Status.AT_GOAL, Status.ACTIVE,
                                                  Status.DEADLOCKED])
    c = status_counts(pops, statuses, active)
    assert c["learned"] == {"active": 0, "at goal": 1, "collided": 0, "stalled": 0,
                            "timed out": 3}
    assert c["crowd"]["active"] == 1 and c["crowd"]["stalled"] == 1
    # Drawn: the band differs between 'all active' and 'timed out'.
    data = {"positions": np.array([[0, 0], [2, 0], [4, 0], [6, 0], [0, 3], [3, 3]], float),
            "radii": np.full(6, 0.3), "populations": pops, "active": active,
            "statuses": statuses}
    a = Renderer("rgb_array", size=320).draw(data)
    b = Renderer("rgb_array", size=320).draw({**data, "statuses": np.zeros(6, int)})
    r = Renderer("rgb_array", size=320)
    r.draw(data)
    assert (a[: r._band] != b[: r._band]).any()


def test_a_timed_out_episode_ends_with_timed_out_counts():
    env = OrcaEnv(CONFIGS["bottleneck"], max_steps=3)
    env.reset(seed=10_000)
    while env.agents:
        env.step(env.heuristic_actions())
    d = env.render_data()
    c = status_counts(d["populations"], d["statuses"], d["active"])
    assert c["learned"]["active"] == 0 and c["learned"]["timed out"] == 4


def test_trajectory_figure_has_a_legend_units_a_title_and_no_empty_panels(logs):
    for k in (1, 3, 4):
        fig = trajectory_figure(logs[:k])
        visible = [ax for ax in fig.axes if ax.get_visible()]
        assert len(visible) == k
        for ax in visible:
            assert ax.lines and "(m)" in ax.get_xlabel() and "(m)" in ax.get_ylabel()
            assert ax.get_title().startswith("seed ")
        assert fig.legends and fig.legends[0].get_texts()
        labels = {t.get_text() for t in fig.legends[0].get_texts()}
        assert {"learned path", "ORCA crowd path", "start", "goal (learned)"} <= labels
        assert "crowdnav_circle_v0" in fig._suptitle.get_text()
        assert "orca" in fig._suptitle.get_text()
    # Five episodes in a 2 x 3 grid: the sixth panel is hidden, not left empty.
    fig = trajectory_figure(logs + logs[:1])
    assert len(fig.axes) == 6 and sum(ax.get_visible() for ax in fig.axes) == 5
    with pytest.raises(ValueError, match="at least one"):
        trajectory_figure([])


def test_trajectory_figure_title_and_legend_fit_inside_the_picture(logs, tmp_path):
    # One narrow panel with a long title and many legend entries: nothing may be cut off.
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fig = trajectory_figure(logs[:1], title="policy orca_env.policies:load_policy(generalist) "
                                            "on intersection_v0")
    renderer = FigureCanvasAgg(fig).get_renderer()
    fig.draw(renderer)
    box = fig.bbox
    for artist in (fig._suptitle, fig.legends[0]):
        ext = artist.get_window_extent(renderer)
        assert box.x0 - 1 <= ext.x0 and ext.x1 <= box.x1 + 1, (artist, ext, box)


def test_rendering_without_pygame_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "pygame", None)
    with pytest.raises(ImportError) as exc:
        Renderer("rgb_array")
    assert EXTRA in str(exc.value) and "pygame-ce, not pygame" in str(exc.value)
    env = OrcaEnv(CONFIGS["crowdnav_circle"], render_mode="rgb_array")
    env.reset(seed=1)
    with pytest.raises(ImportError, match=r'pip install "orca-env\[video\]"'):
        env.render()


def test_video_and_plots_without_their_packages_say_what_to_install(monkeypatch, tmp_path, logs):
    monkeypatch.setitem(sys.modules, "imageio", None)
    monkeypatch.setitem(sys.modules, "imageio.v2", None)
    with pytest.raises(ImportError, match=r'imageio.*pip install "orca-env\[video\]"'):
        VideoWriter(tmp_path / "v.mp4")
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    with pytest.raises(ImportError, match=r'matplotlib.*pip install "orca-env\[video\]"'):
        trajectory_figure(logs[:1])
    assert os.listdir(tmp_path) == []
