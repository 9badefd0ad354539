"""The HTML viewer's file (issue 25 item 8): one self-contained page that embeds the episode,
written by ``orca-env replay LOG --html``; what it holds, its size, bad input. What the page
shows in a browser: tests/test_viewer_browser.py."""

import os
import re
import subprocess
import sys

import numpy as np
import pytest
from viewer_logs import FADED, ROBOTS, page_data, synthetic_log

from orca_env.cli import main
from orca_env.evaluation import evaluate, load_log
from orca_env.evaluation.html_viewer import FORMAT, SPEEDS, html_document, write_html
from orca_env.render import COLORS, STYLE, fit_view

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def bottleneck_log(tmp_path_factory):
    out = tmp_path_factory.mktemp("eval")
    evaluate(os.path.join(ROOT, "configs", "bottleneck.yaml"), "orca", episodes=1,
             out_dir=str(out), logs=1)
    return str(out / "logs" / "episode_10000.npz")


def test_replay_html_writes_one_page_without_a_display_or_a_window(bottleneck_log, tmp_path,
                                                                   capsys, monkeypatch):
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")  # no display: a window would be refused
    out = tmp_path / "share" / "episode.html"
    assert main(["replay", bottleneck_log, "--html", str(out)]) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith(f"wrote {out} (") and "MB; open it in a browser" in line
    assert sorted(os.listdir(out.parent)) == ["episode.html"]  # no temporary file left
    html = out.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and html.rstrip().endswith("</html>")
    # .html is appended to a name without an extension.
    assert main(["replay", bottleneck_log, "--html", str(tmp_path / "bare")]) == 0
    assert (tmp_path / "bare.html").is_file()


def test_the_page_is_self_contained(bottleneck_log):
    html = html_document(load_log(bottleneck_log))
    # Nothing to fetch: no external scripts, styles, images, fonts or links.
    assert not re.search(r"https?://|//[a-z0-9.-]+\.[a-z]{2,}/", html, flags=re.I)
    assert not re.search(r"<script[^>]+src=|<link(?![^>]*href=\"data:)[^>]*href=|<img|"
                         r"@import|url\(", html, flags=re.I)
    # ... and the page's content security policy forbids every request.
    assert "default-src 'none'" in html and "connect-src" not in html
    assert html.count("<script") == 2  # the data and the player, inline


def test_the_page_embeds_the_logged_episode_in_millimetres(bottleneck_log):
    log = load_log(bottleneck_log)
    d = page_data(html_document(log))
    t1, n = log.positions.shape[:2]
    assert d["format"] == FORMAT and d["n"] == n and len(d["times"]) == t1
    assert d["title"] == log.meta["title"]
    pos = np.array(d["positions"]).reshape(t1, n, 2) / 1000
    np.testing.assert_allclose(pos, log.positions, atol=5e-4 + 1e-9)
    np.testing.assert_allclose(np.array(d["radii"]) / 1000, log.static["radii"], atol=5e-4)
    assert d["statuses"] == ["".join(map(str, r)) for r in log.arrays["statuses"].tolist()]
    assert d["active"] == ["".join(str(int(x)) for x in r) for r in log.arrays["active"]]
    np.testing.assert_allclose(d["times"], log.arrays["times"] - log.arrays["times"][0],
                               atol=1e-3)
    np.testing.assert_allclose(d["bounds"], fit_view(log.frame_data(0)))
    # Goals only where they change; the page's goals at each frame are the log's.
    frames = [e[0] for e in d["goals"]]
    assert frames[0] == 0 and frames == sorted(frames)
    for t in range(t1):
        g = next(e[1] for e in reversed(d["goals"]) if e[0] <= t)
        np.testing.assert_allclose(np.array(g).reshape(n, 2) / 1000, log.arrays["goals"][t],
                                   atol=5e-4)
    assert len(d["obstacles"]) == len(log.static["obstacles"])
    assert d["headings"] is None  # no robots: no heading marks
    # The frames' palette and proportions, from orca_env.render.
    assert d["colors"] == {k: "#{:02x}{:02x}{:02x}".format(*v) for k, v in COLORS.items()}
    assert {k: d["style"][k] for k in STYLE} == {k: (list(v) if isinstance(v, tuple) else v)
                                                 for k, v in STYLE.items()}
    assert d["speeds"] == list(SPEEDS) == [0.25, 0.5, 1, 2, 4]


def test_headings_and_new_goals_are_embedded(tmp_path):
    log = synthetic_log(frames=41, headings=True)
    d = page_data(html_document(log))
    assert d["headings"]["slots"] == list(ROBOTS)
    mrad = np.array(d["headings"]["mrad"], dtype=float) / 1000
    np.testing.assert_allclose(mrad, log.arrays["headings"][:, list(ROBOTS)], atol=5e-4)
    assert [e[0] for e in d["goals"]] == [0, 20]
    assert d["statuses"][-1][FADED] == "1" and d["active"][-1][FADED] == "0"


def test_a_600_step_20_agent_episode_is_well_under_a_megabyte(tmp_path):
    log = synthetic_log(frames=601, n=20, headings=True)
    path = write_html(log, tmp_path / "big.html")
    size = os.path.getsize(path)
    assert size < 500_000, size  # 0.32 MB measured


def test_the_title_cannot_break_out_of_the_page(bottleneck_log, tmp_path):
    evil = "</script><script>alert(1)</script><!-- & \u2028"
    html = html_document(load_log(bottleneck_log), title=evil)
    assert "</script><script>alert" not in html and "<!--" not in html.split("<body>")[1]
    assert page_data(html)["title"] == evil


def test_bad_input_is_one_line_naming_it(bottleneck_log, tmp_path, capsys):
    with pytest.raises(ValueError, match="title must be a string"):
        write_html(bottleneck_log, tmp_path / "a.html", title="x" * 1001)
    with pytest.raises(TypeError, match="log must be an EpisodeLog"):
        html_document({"positions": []})
    folder = tmp_path / "folder.html"
    folder.mkdir()
    with pytest.raises(ValueError, match="is a folder"):
        write_html(bottleneck_log, folder)
    with pytest.raises(SystemExit) as exc:
        main(["replay", bottleneck_log, "--html", str(folder)])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err == f"orca-env replay: error: --html {str(folder)!r} is a folder: give a file name"
    broken = tmp_path / "broken.npz"
    broken.write_bytes(b"not a zip")
    with pytest.raises(SystemExit) as exc:
        main(["replay", str(broken), "--html", str(tmp_path / "b.html")])
    assert exc.value.code == 2 and not (tmp_path / "b.html").exists()
    assert "is unreadable" in capsys.readouterr().err


def test_an_earlier_page_is_replaced_whole(bottleneck_log, tmp_path):
    out = tmp_path / "e.html"
    out.write_text("old")
    write_html(bottleneck_log, out)
    assert out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert sorted(os.listdir(tmp_path)) == ["e.html"]


def test_html_and_video_together(bottleneck_log, tmp_path, capsys):
    assert main(["replay", bottleneck_log, "--html", str(tmp_path / "e.html"), "--video",
                 str(tmp_path / "e.gif"), "--size", "240"]) == 0
    out = capsys.readouterr().out
    assert f"wrote {tmp_path / 'e.html'}" in out and f"wrote {tmp_path / 'e.gif'}" in out


def test_the_page_needs_no_video_extra(bottleneck_log, tmp_path):
    # pygame, imageio and matplotlib unimportable: the page is written all the same.
    code = ("import sys\n"
            "for m in ('pygame', 'imageio', 'matplotlib'): sys.modules[m] = None\n"
            "from orca_env.cli import main\n"
            f"raise SystemExit(main(['replay', {bottleneck_log!r}, '--html', "
            f"{str(tmp_path / 'p.html')!r}]))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "SDL_VIDEODRIVER": "dummy"})
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "p.html").is_file()
