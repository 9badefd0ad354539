"""Robots' headings in episode logs: recorded, replayed (the frames draw the heading mark), and
optional (older logs and holonomic episodes have none); bad values are refused on load."""

import numpy as np
import pytest

from orca_env import OrcaEnv
from orca_env.evaluation import EpisodeRecorder, load_log, snapshot
from orca_env.render import COLORS, Renderer


def _log(name, tmp_path, steps=6):
    env = OrcaEnv(name)
    env.reset(seed=3)
    rec = EpisodeRecorder(env.config.to_dict(), 3, "orca")
    truth = []
    for t in range(steps + 1):
        data = snapshot(env, t)
        truth.append(data.get("headings"))
        rec.add(data)
        env.step(env.heuristic_actions())
    return load_log(rec.save(tmp_path / f"{name}.npz")), truth


def test_robot_headings_are_logged_and_replayed(tmp_path):
    log, truth = _log("crowdnav_circle_unicycle_invisible", tmp_path)
    hd = log.arrays["headings"]
    assert hd.shape == (7, 6) and hd.dtype == np.float32
    # The robot (slot 0) has a heading, the holonomic humans NaN.
    np.testing.assert_allclose(hd[:, 0], [h[0] for h in truth], atol=1e-6)
    assert np.isnan(hd[:, 1:]).all()
    data = log.frame_data(3)
    np.testing.assert_array_equal(data["headings"], hd[3])
    # The replayed frame draws the white heading mark inside the robot's disc, ahead of its
    # centre, and the legend lists it (the arrows, drawn over it from the centre, left out).
    r = Renderer("rgb_array", size=720)
    frame = r.draw({k: v for k, v in data.items() if k not in ("velocities", "pref_velocities")})
    p = r._to_px(data["positions"][0])
    rad = data["radii"][0] * r._scale
    nose = p + 0.6 * rad * np.array([np.cos(hd[3, 0]), -np.sin(hd[3, 0])])
    assert tuple(frame[int(round(nose[1])), int(round(nose[0]))]) == COLORS["heading"]
    assert "heading" in {item[2] for _, row in r._rows for _, item in row}


def test_holonomic_logs_have_no_headings(tmp_path):
    log, truth = _log("bottleneck", tmp_path, steps=2)
    assert truth[0] is None and "headings" not in log.arrays
    assert "headings" not in log.frame_data(1)


@pytest.mark.parametrize("bad,match", [
    (lambda h: h[:, :1], "shape"),
    (lambda h: np.where(np.isnan(h), np.inf, h), "finite"),
    (lambda h: np.zeros(h.shape, dtype=np.int32), "float"),
])
def test_bad_headings_are_refused_naming_the_array(tmp_path, bad, match):
    log, _ = _log("crowdnav_circle_unicycle_invisible", tmp_path, steps=2)
    path = tmp_path / "crowdnav_circle_unicycle_invisible.npz"
    with np.load(path, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    arrays["headings"] = bad(arrays["headings"])
    np.savez(tmp_path / "bad.npz", **arrays)
    with pytest.raises(ValueError, match=f"'headings'.*{match}|{match}.*'headings'"):
        load_log(tmp_path / "bad.npz")
