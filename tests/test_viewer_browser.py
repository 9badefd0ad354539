"""The HTML viewer in a real headless browser (issue 25 item 8): Chromium (Debian's chromium and
chromium-driver) driven by Selenium. The page loads with no console error and requests
nothing; at a given frame the canvas shows the agents at the logged positions, in the frames'
colours (read back from the canvas pixels); play, pause, speed and the slider change the frame.

Without Chromium, its driver or Selenium these tests skip, except under CI (``CI=true``),
where they fail: CI installs them (.ci/run).
"""

import os
import shutil
import time

import numpy as np
import pytest
from viewer_logs import AT_GOAL_RING, COLLIDED_LEFT, FADED, LEFT, ROBOTS, synthetic_log

from orca_env.evaluation import evaluate, load_log
from orca_env.evaluation.html_viewer import write_html
from orca_env.render import COLORS, STYLE, fit_view, mix_colors

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: Where the last screenshot goes (to look at; tests/ never keeps it).
SCREENSHOT = os.environ.get("ORCA_VIEWER_SCREENSHOT")
WINDOW = (1280, 1000)


def _missing():
    """Why the browser cannot run here, or None."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[test]')"
    for exe, pkg in (("chromium", "chromium"), ("chromedriver", "chromium-driver")):
        if shutil.which(exe) is None:
            return f"{exe} is not on PATH (apt-get install {pkg})"
    return None


@pytest.fixture(scope="module")
def browser():
    reason = _missing()
    if reason is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"the HTML viewer's browser test needs Chromium under CI: {reason}")
        pytest.skip(f"no headless browser: {reason}")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = shutil.which("chromium")
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-extensions", "--force-device-scale-factor=1",
                f"--window-size={WINDOW[0]},{WINDOW[1]}"):
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # The driver from the system packages: Selenium never looks for (or downloads) one.
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=opts)
    # Every error and console.error of every page, from before its own scripts run.
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": """
        window.__errors = [];
        window.addEventListener('error', e => window.__errors.push('error: ' + e.message));
        window.addEventListener('unhandledrejection',
                                e => window.__errors.push('rejection: ' + e.reason));
        const ce = console.error.bind(console);
        console.error = (...a) => { window.__errors.push('console: ' + a.join(' ')); ce(...a); };
        window.addEventListener('securitypolicyviolation',
                                e => window.__errors.push('csp: ' + e.blockedURI));
    """})
    yield driver
    driver.quit()


def _open(driver, path):
    driver.get_log("browser")  # drop earlier pages' lines
    driver.get("file://" + os.path.abspath(path))
    ready = driver.execute_script("return typeof window.orcaViewer === 'object'")
    assert ready, "the player did not start"
    return driver


def _errors(driver):
    # Chromium's notice that this test's own getImageData reads would be faster with
    # willReadFrequently is no error of the page.
    logged = [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "WARNING")
              and "willReadFrequently" not in e["message"]]
    return logged + driver.execute_script("return window.__errors")


def _pixels(driver, points):
    """RGB of the canvas at canvas-pixel ``points`` [(x, y), ...] (getImageData)."""
    return driver.execute_script("""
        const g = document.getElementById('scene').getContext('2d');
        return arguments[0].map(p => Array.from(
            g.getImageData(Math.round(p[0]), Math.round(p[1]), 1, 1).data.slice(0, 3)));
    """, [list(map(float, p)) for p in points])


def _to_segment(p, a, b):
    """Distance (pixels) from ``p`` to the segment ``a``-``b``."""
    d = b - a
    u = 0.0 if not d.any() else float(np.clip(np.dot(p - a, d) / np.dot(d, d), 0.0, 1.0))
    return float(np.hypot(*(a + u * d - p)))


def _screenshot(driver, name):
    if SCREENSHOT:
        driver.save_screenshot(os.path.join(SCREENSHOT, name))


@pytest.fixture(scope="module")
def bottleneck(tmp_path_factory):
    """A logged ORCA episode of the bottleneck (walls, doorway, crowd) and its page."""
    out = tmp_path_factory.mktemp("eval")
    evaluate(os.path.join(ROOT, "configs", "bottleneck.yaml"), "orca", episodes=1,
             out_dir=str(out), logs=1)
    log_path = out / "logs" / "episode_10000.npz"
    return load_log(log_path), write_html(log_path, out / "bottleneck.html")


@pytest.fixture(scope="module")
def still(tmp_path_factory):
    """The synthetic log with still agents apart from each other, and its page."""
    log = synthetic_log(frames=21, still=True)
    return log, write_html(log, tmp_path_factory.mktemp("still") / "still.html")


def test_the_page_loads_with_no_error_and_requests_nothing(browser, bottleneck):
    log, page = bottleneck
    v = _open(browser, page)
    assert _errors(v) == []
    assert v.execute_script("return performance.getEntriesByType('resource').length") == 0
    assert v.execute_script("return window.orcaViewer.frameCount") == log.num_steps + 1
    assert v.execute_script("return window.orcaViewer.frame") == 0
    assert v.title == "policy orca \u00b7 scenario bottleneck_v0 \u00b7 seed 10000 - orca-env"
    assert v.find_element("id", "title").text == "policy orca scenario bottleneck_v0 seed 10000"
    # The API is read-only.
    v.execute_script("try { window.orcaViewer.frameCount = 3; } catch (e) {}")
    assert v.execute_script("return window.orcaViewer.frameCount") == log.num_steps + 1
    _screenshot(v, "viewer_bottleneck_0.png")


def test_at_a_frame_the_canvas_shows_the_agents_at_the_logged_positions(browser, bottleneck):
    log, page = bottleneck
    v = _open(browser, page)
    t = log.num_steps // 2
    v.execute_script("window.orcaViewer.setFrame(arguments[0])", t)
    assert v.execute_script("return window.orcaViewer.frame") == t
    view = v.execute_script("return window.orcaViewer.view()")
    # The view is the frames' (fit_view of the first state), at one scale, y up.
    np.testing.assert_allclose([view[k] for k in ("x0", "y0", "x1", "y1")],
                               fit_view(log.frame_data(0)), atol=1e-9)
    data = log.frame_data(t)
    pos, live = data["positions"], np.flatnonzero(data["active"])
    expect = np.stack([view["ox"] + view["scale"] * pos[:, 0],
                       view["oy"] - view["scale"] * pos[:, 1]], axis=1)
    marks = v.execute_script("return window.orcaViewer.drawn()")
    drawn = {d["slot"]: d for d in marks if d["kind"] == "agent"}
    crosses = [np.array([d["x"], d["y"]]) for d in marks if d["kind"] == "collided"]
    assert sorted(drawn) == live.tolist()
    got = np.array([[drawn[i]["x"], drawn[i]["y"]] for i in live])
    # Positions travel in millimetres: within half a millimetre of the log, in pixels.
    np.testing.assert_allclose(got, expect[live], atol=0.5e-3 * view["scale"] + 1e-6)
    np.testing.assert_allclose([drawn[i]["r"] for i in live],
                               np.maximum(data["radii"][live] * view["scale"], 1.5), rtol=2e-3)
    # The canvas really holds each agent's colour inside its disc: half a radius behind its
    # centre (its velocity arrow starts at the centre), for agents no other disc covers.
    names = {0: "learned", 1: "orca"}
    checked = 0
    for i in live:
        r = drawn[i]["r"]
        vel = data["velocities"][i] * np.array([1.0, -1.0])
        back = -vel / np.hypot(*vel) if np.hypot(*vel) > 1e-9 else np.array([1.0, 0.0])
        p = got[list(live).index(i)] + 0.5 * r * back
        others = [j for j in live if j != i]
        if any(np.hypot(*(expect[j] - p)) < drawn[j]["r"] + 3 for j in others) or any(
                _to_segment(p, expect[j], expect[j] + view["scale"] * data["velocities"][j]
                            * np.array([1.0, -1.0])) < 4 for j in others):
            continue  # another disc or another's velocity arrow (1 s long) is drawn there
        if any(np.hypot(*(c - p)) < r + 4 for c in crosses):
            continue  # the red cross of an agent that collided and left
        assert _pixels(v, [p])[0] == list(COLORS[names[int(data["populations"][i])]]), i
        checked += 1
    assert checked >= 3, "no agent to check"
    assert _errors(v) == []
    _screenshot(v, "viewer_bottleneck_mid.png")


def test_marks_and_headings_in_the_frames_colours(browser, still):
    log, page = still
    v = _open(browser, page)
    t = LEFT + 2
    v.execute_script("window.orcaViewer.setFrame(arguments[0])", t)
    view = v.execute_script("return window.orcaViewer.view()")
    drawn = {d["slot"]: d for d in v.execute_script("return window.orcaViewer.drawn()")}
    data = log.frame_data(t)
    bg = COLORS["background"]

    def at(i, forward=0.0, side=0.0, angle=0.0):
        d = drawn[i]
        f = np.array([np.cos(angle), -np.sin(angle)])
        return np.array([d["x"], d["y"]]) + d["r"] * (forward * f + side * np.array([-f[1], f[0]]))

    learned, crowd = ROBOTS[0], 10
    hd = data["headings"][learned]
    assert drawn[learned]["heading"] == pytest.approx(hd, abs=1e-3)
    # Along a ray from the centre: the white mark ahead of a robot's centre (the heading), the
    # status ring's colour inside the disc's edge (both thin: some pixel has the exact colour).
    def ray(i, r0, r1, angle):
        return _pixels(v, [at(i, f, angle=angle) for f in np.linspace(r0, r1, 12)])

    assert list(COLORS["heading"]) in ray(learned, 0.25, 0.85, hd)
    assert list(COLORS["learned"]) in ray(learned, -0.2, -0.8, hd)  # behind: the fill
    assert list(COLORS["heading"]) not in ray(crowd, 0.25, 0.85, 0.0)  # no heading
    assert list(COLORS["at_goal"]) in ray(AT_GOAL_RING, 0.5, 1.0, 0.0)
    assert list(COLORS["at_goal"]) not in ray(crowd, 0.5, 1.0, 0.0)  # active: no ring
    pts = {
        "learned fill": (at(learned, -0.5, angle=hd), COLORS["learned"]),
        "crowd fill": (at(crowd), COLORS["orca"]),
        "faded": (at(FADED), mix_colors(COLORS["learned"], bg, STYLE["fade_agent"])),
        "collided, left": (at(COLLIDED_LEFT), COLORS["collided"]),
        "walkable area": (np.array([view["ox"] + view["scale"] * 0.0,
                                    view["oy"] - view["scale"] * 3.0]), COLORS["boundary_fill"]),
        "obstacle": (np.array([view["ox"], view["oy"]]), COLORS["obstacle"]),
    }
    assert drawn[FADED]["kind"] == "faded" and drawn[COLLIDED_LEFT]["kind"] == "collided"
    got = _pixels(v, [p for p, _ in pts.values()])
    for (name, (_, colour)), rgb in zip(pts.items(), got, strict=True):
        assert rgb == list(colour), name
    # The legend names what is drawn; the scale bar is a round length of 40 to 110 pixels.
    legend = v.execute_script("return Array.from(document.querySelectorAll('#legend li'))"
                              ".map(li => li.textContent)")
    for label in ("learned", "ORCA crowd", "at goal", "collided", "stalled", "timed out",
                  "heading", "left, finished", "left, collided", "goal", "obstacle, wall"):
        assert label in legend, label
    assert 40 <= view["scaleBarPixels"] <= 110
    assert view["scaleBarPixels"] == pytest.approx(view["scaleBarMetres"] * view["scale"])
    assert view["scaleBarMetres"] in (0.5, 1, 2, 5, 10)
    assert _errors(v) == []
    _screenshot(v, "viewer_still.png")


def test_play_pause_and_speed_change_the_frame(browser, bottleneck):
    from selenium.webdriver.support.ui import Select, WebDriverWait

    log, page = bottleneck
    v = _open(browser, page)
    frame = lambda: v.execute_script("return window.orcaViewer.frame")  # noqa: E731
    button = v.find_element("id", "play")
    button.click()
    WebDriverWait(v, 10, poll_frequency=0.05).until(lambda _: frame() > 0)
    assert v.execute_script("return window.orcaViewer.playing")
    button.click()  # pause
    assert not v.execute_script("return window.orcaViewer.playing")
    paused = frame()
    time.sleep(0.4)
    assert frame() == paused
    # Speed: the episode plays at speed x its simulated time (steps of 0.25 s), timed by the
    # page's own clock between play and pause (a loaded machine only stretches both).
    dt = float(log.arrays["times"][1] - log.arrays["times"][0])
    for speed in ("4", "1", "0.25"):
        Select(v.find_element("id", "speed")).select_by_value(speed)
        assert v.execute_script("return window.orcaViewer.speed") == float(speed)
        t0 = v.execute_script("window.orcaViewer.setFrame(0); window.orcaViewer.play();"
                              "return performance.now()")
        time.sleep(0.8)
        t1, got = v.execute_script("window.orcaViewer.pause();"
                                   "return [performance.now(), window.orcaViewer.frame]")
        expect = min((t1 - t0) / 1000 * float(speed) / dt, log.num_steps)
        # The first animation frame only starts the clock: a little wall time is lost (0.25 s
        # allowed, for a loaded machine).
        assert expect - 0.25 * float(speed) / dt - 1 <= got <= expect + 1, (speed, got, expect)
    # Played to the end, it stops there; playing again starts over.
    v.execute_script("window.orcaViewer.setSpeed(4); window.orcaViewer.setFrame(arguments[0]);"
                     "window.orcaViewer.play()", log.num_steps - 2)
    WebDriverWait(v, 10, poll_frequency=0.05).until(
        lambda _: not v.execute_script("return window.orcaViewer.playing"))
    assert frame() == log.num_steps
    assert v.execute_script("try { window.orcaViewer.setSpeed(3); return 'taken'; } "
                            "catch (e) { return e.name; }") == "RangeError"
    assert _errors(v) == []


def test_the_slider_scrubs_and_the_readout_follows(browser, bottleneck):
    from selenium.webdriver.common.keys import Keys

    log, page = bottleneck
    v = _open(browser, page)
    slider = v.find_element("id", "scrub")
    readout = lambda: v.find_element("id", "readout").text  # noqa: E731
    frame = lambda: v.execute_script("return window.orcaViewer.frame")  # noqa: E731
    end = log.num_steps
    assert slider.get_attribute("max") == str(end)
    slider.send_keys(Keys.END)
    assert frame() == end and slider.get_attribute("value") == str(end)
    total = f"{log.arrays['times'][-1] - log.arrays['times'][0]:.2f} s"
    assert readout() == f"frame {end} / {end}  \u00b7  t {total} / {total}"
    slider.send_keys(Keys.HOME)
    slider.send_keys(Keys.ARROW_RIGHT)
    assert frame() == 1
    assert readout().startswith(f"frame 1 / {end}  \u00b7  t 0.25 s")
    # Dragging: a click on the slider's middle lands near the middle frame.
    from selenium.webdriver import ActionChains

    ActionChains(v).move_to_element(slider).click().perform()
    assert abs(frame() - end / 2) <= 0.1 * end
    # The counts follow the frame: at the end every learned agent has its final status.
    counts = v.find_element("id", "counts").text
    assert counts.startswith("learned (4): active ")
    assert _errors(v) == []
