"""An episode log as one self-contained HTML file that plays in a browser, to share an episode.

``orca-env replay LOG --html episode.html`` (or :func:`write_html`) writes a single file: the
episode's data as JSON, and the player's script and style inline. It needs no server, no
network and no install: open it in a browser, or attach it to a message. The page's content
security policy forbids every request (scripts, styles, images, fonts, connections), so it
cannot load anything from anywhere.

The page plays the episode at its simulated time (``1x``: one simulated second a second) or at
0.25x .. 4x; it can be paused, stepped (the arrow keys, space plays and pauses) and scrubbed
with a slider that reads out the frame and the time. It draws what the pygame frames draw
(:mod:`orca_env.render`), with their colours (:data:`~orca_env.render.COLORS`) and proportions
(:data:`~orca_env.render.STYLE`): obstacles and the walkable boundary; agents as discs filled
by population with a ring by status; the white heading mark of robots (logs of episodes with
non-holonomic agents carry headings); agents that finished and left, faded where they stopped;
collided ones that left, as red crosses; trails, goals and velocity arrows; the counts by
status, a legend, and a scale bar.

The data is kept small: positions in millimetres and velocities in mm/s (integers), statuses
and active flags as one digit per agent, goals only where they change. A 20-agent,
600-step episode is about 0.3 MB; the player itself about 17 KB.

For tests and tools the page exposes a read-only ``window.orcaViewer``: ``frameCount``,
``frame``, ``playing``, ``speed``, ``setFrame(t)``, ``play()``, ``pause()``, ``setSpeed(s)``,
``view()`` (the world bounds and the transform to canvas pixels: ``x_px = ox + scale * x``,
``y_px = oy - scale * y``) and ``drawn()`` (each agent drawn in the current frame: slot, canvas
pixel position and radius, what was drawn and its fill colour).
"""

from __future__ import annotations

import json
import os

import numpy as np

from ..codes import STATUSES, Population, Status
from ..files import atomic_write_text
from ..render import (
    ARROW_SECONDS,
    COLORS,
    LABELS,
    STYLE,
    TRAIL_LENGTH,
    counted_statuses,
    fit_view,
    mix_colors,
    status_counts,
)
from .episode_log import EpisodeLog

__all__ = ["FORMAT", "SPEEDS", "viewer_data", "html_document", "write_html"]

#: Format tag of the data embedded in the page.
FORMAT = "orca-env-html-viewer/1"
#: Playback speeds the page offers (1: simulated time).
SPEEDS = (0.25, 0.5, 1, 2, 4)
#: Frame interval (s) the page plays a log at whose times do not advance.
_FALLBACK_DT = 0.25
#: Longest title the page shows (the log loader's limit too).
_MAX_TITLE = 1000
_POP_NAMES = tuple(p.name.lower() for p in Population)


def _hex(rgb: tuple) -> str:
    return "#{:02x}{:02x}{:02x}".format(*rgb)


def _mm(a: np.ndarray) -> np.ndarray:
    """Metres (or m/s) as integer millimetres (mm/s)."""
    return np.rint(np.asarray(a, dtype=np.float64) * 1000.0).astype(np.int64)


def viewer_data(log: EpisodeLog, title: str | None = None) -> dict:
    """The data the page plays: plain JSON values (see the module docstring for the encoding).

    Args:
        log: A loaded episode log (:func:`orca_env.evaluation.load_log`: its values are
            checked, finite and bounded).
        title: The page's title; default the log's title, else ``orca-env episode``.

    Raises:
        TypeError: If ``log`` is not an :class:`~orca_env.evaluation.episode_log.EpisodeLog`.
        ValueError: On a ``title`` that is not a string of at most 1000 characters.
    """
    if not isinstance(log, EpisodeLog):
        raise TypeError(f"log must be an EpisodeLog (orca_env.evaluation.load_log), got "
                        f"{type(log).__name__}")
    if title is None:
        title = log.meta.get("title") or "orca-env episode"
    if not isinstance(title, str) or len(title) > _MAX_TITLE:
        raise ValueError(f"title must be a string of at most {_MAX_TITLE} characters, got "
                         f"{title!r:.80}")
    a, s = log.arrays, log.static
    frames = a["positions"].shape[0]
    pops = np.asarray(s["populations"], dtype=np.int64)
    statuses = np.asarray(a["statuses"], dtype=np.int64)
    active = np.asarray(a["active"], dtype=bool)
    times = np.asarray(a["times"], dtype=np.float64)
    if frames > 1 and not times[-1] > times[0]:
        times = np.arange(frames) * _FALLBACK_DT
    times = times - times[0]

    goals = _mm(a["goals"]).reshape(frames, -1)
    changes = np.flatnonzero((goals[1:] != goals[:-1]).any(axis=1)) + 1
    goal_events = [[0, goals[0].tolist()]] + [[int(t), goals[t].tolist()] for t in changes]

    headings = None
    if "headings" in a:
        hd = np.asarray(a["headings"], dtype=np.float64)
        slots = np.flatnonzero(np.isfinite(hd).any(axis=0))
        if slots.size:
            mrad = np.where(np.isfinite(hd[:, slots]), np.rint(np.nan_to_num(hd[:, slots])
                                                                * 1000.0), np.nan)
            headings = {"slots": slots.tolist(),
                        "mrad": [[None if np.isnan(v) else int(v) for v in row]
                                 for row in mrad]}

    order = {who: counted_statuses(who == "learned") for who in ("learned", "crowd")}
    counts = []
    for t in range(frames):
        c = status_counts(pops, statuses[t], active[t])
        counts.append([[c[who][label] for _, label in order[who]] for who in order])

    bg = COLORS["background"]
    return {
        "format": FORMAT,
        "title": title,
        "seed": log.seed,
        "policy": log.meta.get("policy"),
        "n": int(pops.size),
        "times": np.round(times, 3).tolist(),
        "bounds": list(fit_view(log.frame_data(0))),
        "radii": _mm(s["radii"]).tolist(),
        "populations": pops.tolist(),
        "obstacles": [_mm(p).reshape(-1).tolist() for p in s["obstacles"]],
        "boundary": None if s["boundary"] is None else _mm(s["boundary"]).reshape(-1).tolist(),
        "positions": _mm(a["positions"]).reshape(frames, -1).tolist(),
        "velocities": _mm(a["velocities"]).reshape(frames, -1).tolist(),
        "statuses": ["".join(map(str, row)) for row in statuses.tolist()],
        "active": ["".join("1" if x else "0" for x in row) for row in active.tolist()],
        "goals": goal_events,
        "headings": headings,
        "counts": counts,
        "count_labels": {who: [label for _, label in order[who]] for who in order},
        "colors": {k: _hex(v) for k, v in COLORS.items()},
        "faded": {
            "agent": [_hex(mix_colors(COLORS[p], bg, STYLE["fade_agent"])) for p in _POP_NAMES],
            "trail": [_hex(mix_colors(COLORS[p], bg, STYLE["fade_trail"])) for p in _POP_NAMES],
            "ring": [_hex(mix_colors(COLORS[st], bg, STYLE["fade_ring"])) if st in COLORS
                     else None for st in STATUSES],  # active: no ring
        },
        "pop_names": list(_POP_NAMES),
        "status_names": list(STATUSES),
        "labels": dict(LABELS),
        "finished": [int(Status.AT_GOAL), int(Status.DEADLOCKED), int(Status.TIMED_OUT)],
        "codes": {"learned": int(Population.LEARNED), "replay": int(Population.REPLAY),
                  "active": int(Status.ACTIVE), "collided": int(Status.COLLIDED)},
        "style": {**STYLE, "trail": TRAIL_LENGTH, "arrow_seconds": ARROW_SECONDS},
        "speeds": list(SPEEDS),
    }


def _script_json(data: dict) -> str:
    """JSON safe inside ``<script>``: no ``<``, ``>`` or ``&`` that could end the element."""
    text = json.dumps(data, separators=(",", ":"), allow_nan=False, ensure_ascii=False)
    return (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def html_document(log: EpisodeLog, title: str | None = None) -> str:
    """The whole page for ``log`` (:func:`viewer_data`'s errors)."""
    data = viewer_data(log, title)
    return (_PAGE.replace("/*STYLE*/", _CSS).replace("/*SCRIPT*/", _JS)
            .replace("/*DATA*/", _script_json(data)))


def write_html(log: EpisodeLog | str | os.PathLike, path: str | os.PathLike,
               title: str | None = None) -> str:
    """Write the page for ``log`` to ``path`` (atomically: a temporary name, then a rename).

    Args:
        log: An :class:`~orca_env.evaluation.episode_log.EpisodeLog` or the path of one.
        path: The HTML file; ``.html`` is appended when it has no extension. Its folder is
            created if missing.
        title: The page's title (default: the log's).

    Returns:
        The path written.

    Raises:
        ValueError: If ``path`` is a folder, ``title`` is bad, or the log is unreadable
            (:meth:`EpisodeLog.load`).
        FileNotFoundError: If the log file does not exist.
        orca_env.files.WriteError: When the file could not be written completely (a full disk).
    """
    path = os.fspath(path)
    if not os.path.splitext(path)[1]:
        path += ".html"
    if os.path.isdir(path):
        raise ValueError(f"html file {path!r} is a folder")
    if not isinstance(log, EpisodeLog):
        log = EpisodeLog.load(log)
    text = html_document(log, title)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    atomic_write_text(path, text)
    return path


_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy"
 content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="orca-env replay --html">
<link rel="icon" href="data:,">
<title>orca-env episode</title>
<style>/*STYLE*/</style>
</head>
<body>
<header><h1 id="title"></h1><div id="counts"></div></header>
<main id="stage"><canvas id="scene" aria-label="the episode"></canvas></main>
<div id="controls">
<button id="play" type="button" title="play or pause (space)">&#9654; Play</button>
<input id="scrub" type="range" min="0" max="0" step="1" value="0" aria-label="frame">
<span id="readout"></span>
<label>speed <select id="speed"></select></label>
</div>
<ul id="legend"></ul>
<script type="application/json" id="orca-data">/*DATA*/</script>
<script>/*SCRIPT*/</script>
</body>
</html>
"""

_CSS = """
body { margin: 0; padding: 8px 16px; background: #f4f4f0; color: #141414;
  font: 14px/1.35 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; }
h1 { font-size: 16px; margin: 0 0 2px; font-weight: 600; }
h1 span + span { margin-left: 0.9em; }
#counts { font-size: 13px; min-height: 1.35em; white-space: pre-wrap; }
#counts b { font-weight: 600; }
#stage { margin: 6px 0; }
#scene { display: block; border: 1px solid #6e6e76; background: #fafaf7; }
#controls { display: flex; align-items: center; gap: 12px; flex-wrap: wrap; }
#play { min-width: 6.5em; font: inherit; padding: 2px 8px; }
#scrub { flex: 1 1 240px; min-width: 160px; }
#readout { font-variant-numeric: tabular-nums; min-width: 18em; white-space: pre; }
select { font: inherit; }
#legend { list-style: none; margin: 8px 0 0; padding: 0; display: flex; flex-wrap: wrap;
  gap: 4px 16px; font-size: 13px; }
#legend li { display: flex; align-items: center; gap: 5px; }
#legend canvas { width: 18px; height: 18px; }
"""

_JS = r"""
(function () {
  "use strict";
  const D = JSON.parse(document.getElementById("orca-data").textContent);
  const F = D.times.length, N = D.n, S = D.style, C = D.colors, K = D.codes;
  const canvas = document.getElementById("scene");
  const ctx = canvas.getContext("2d");
  const scrub = document.getElementById("scrub"), playBtn = document.getElementById("play");
  const readout = document.getElementById("readout"), speedSel = document.getElementById("speed");
  const few = N <= S.few;
  const headingOf = new Map();
  if (D.headings) D.headings.slots.forEach(function (slot, k) { headingOf.set(slot, k); });
  const finished = new Set(D.finished);
  let view = null, cur = 0, playing = false, speed = 1, simT = 0, last = null, drawn = [];

  function goalsAt(t) {
    let g = D.goals[0][1];
    for (const ev of D.goals) { if (ev[0] <= t) g = ev[1]; else break; }
    return g;
  }
  function layout() {
    const b = D.bounds, w = b[2] - b[0], h = b[3] - b[1];
    const dpr = window.devicePixelRatio || 1;
    // The page around the canvas (title, counts, controls, legend, margins and borders).
    const used = document.body.scrollHeight - canvas.offsetHeight;
    const availW = Math.max(240, Math.min(document.documentElement.clientWidth - 34, 1400));
    const availH = Math.max(240, window.innerHeight - Math.max(used, 150) - 24);
    const css = Math.min(availW / w, availH / h);
    const cw = Math.max(1, Math.round(css * w)), ch = Math.max(1, Math.round(css * h));
    canvas.style.width = cw + "px"; canvas.style.height = ch + "px";
    canvas.width = Math.round(cw * dpr); canvas.height = Math.round(ch * dpr);
    const scale = Math.min(canvas.width / w, canvas.height / h);
    view = { x0: b[0], y0: b[1], x1: b[2], y1: b[3], scale: scale, dpr: dpr,
      ox: 0.5 * (canvas.width - scale * w) - scale * b[0],
      oy: 0.5 * (canvas.height - scale * h) + scale * b[3],
      width: canvas.width, height: canvas.height };
  }
  function sx(xmm) { return view.ox + view.scale * xmm / 1000; }
  function sy(ymm) { return view.oy - view.scale * ymm / 1000; }

  // Marks, on any 2D context (the scene and the legend's symbols).
  function disc(g, x, y, r, fill) {
    g.beginPath(); g.arc(x, y, r, 0, 2 * Math.PI); g.fillStyle = fill; g.fill();
  }
  function ring(g, x, y, r, w, color) {
    g.beginPath(); g.arc(x, y, Math.max(r - w / 2, 0.5), 0, 2 * Math.PI);
    g.lineWidth = w; g.strokeStyle = color; g.stroke();
  }
  function cross(g, x, y, r, color, lw) {
    g.beginPath(); g.moveTo(x - r, y - r); g.lineTo(x + r, y + r);
    g.moveTo(x - r, y + r); g.lineTo(x + r, y - r);
    g.lineWidth = lw; g.strokeStyle = color; g.stroke();
  }
  function arrow(g, ax, ay, bx, by, color, lw, u) {
    const dx = bx - ax, dy = by - ay, len = Math.hypot(dx, dy);
    if (len < 2 * u) return;
    g.beginPath(); g.moveTo(ax, ay); g.lineTo(bx, by);
    g.lineWidth = lw; g.strokeStyle = color; g.stroke();
    const ux = dx / len, uy = dy / len, h = Math.min(8 * u, 0.4 * len);
    g.beginPath(); g.moveTo(bx, by);
    g.lineTo(bx - h * ux - 0.5 * h * uy, by - h * uy + 0.5 * h * ux);
    g.lineTo(bx - h * ux + 0.5 * h * uy, by - h * uy - 0.5 * h * ux);
    g.closePath(); g.fillStyle = color; g.fill();
  }
  function nose(g, x, y, r, heading) {
    const fx = Math.cos(heading), fy = -Math.sin(heading), qx = -fy, qy = fx;
    const tip = S.nose[0], base = S.nose[1], half = S.nose[2];
    g.beginPath(); g.moveTo(x + tip * r * fx, y + tip * r * fy);
    g.lineTo(x + base * r * fx + half * r * qx, y + base * r * fy + half * r * qy);
    g.lineTo(x + base * r * fx - half * r * qx, y + base * r * fy - half * r * qy);
    g.closePath(); g.fillStyle = C.heading; g.fill();
  }
  function polygon(g, flat) {
    g.beginPath(); g.moveTo(sx(flat[0]), sy(flat[1]));
    for (let k = 2; k < flat.length; k += 2) g.lineTo(sx(flat[k]), sy(flat[k + 1]));
    g.closePath();
  }
  function ringWidth(r) { return Math.max(2 * view.dpr, Math.floor(r * S.ring)); }

  function drawScene(t) {
    const g = ctx, u = view.dpr, P = D.positions[t], V = D.velocities[t];
    const st = D.statuses[t], act = D.active[t], goals = goalsAt(t);
    g.setTransform(1, 0, 0, 1, 0, 0);
    if (D.boundary) {
      g.fillStyle = C.outside; g.fillRect(0, 0, canvas.width, canvas.height);
      polygon(g, D.boundary); g.fillStyle = C.boundary_fill; g.fill();
      g.lineWidth = 2 * u; g.strokeStyle = C.obstacle; g.stroke();
    } else {
      g.fillStyle = C.background; g.fillRect(0, 0, canvas.width, canvas.height);
    }
    for (const ob of D.obstacles) {
      if (ob.length >= 6) { polygon(g, ob); g.fillStyle = C.obstacle; g.fill(); }
      else if (ob.length === 4) {
        g.beginPath(); g.moveTo(sx(ob[0]), sy(ob[1])); g.lineTo(sx(ob[2]), sy(ob[3]));
        g.lineWidth = 3 * u; g.strokeStyle = C.obstacle; g.stroke();
      }
    }
    drawn = [];
    const rpx = new Array(N), live = [];
    for (let i = 0; i < N; i++) {
      rpx[i] = Math.max(D.radii[i] / 1000 * view.scale, 1.5 * u);
      if (act[i] === "1") live.push(i);
    }
    // Agents that finished and left: faded where they stopped, under everything else.
    for (let i = 0; i < N; i++) {
      const s = +st[i];
      if (act[i] === "0" && finished.has(s)) {
        const x = sx(P[2 * i]), y = sy(P[2 * i + 1]), pop = D.populations[i];
        disc(g, x, y, rpx[i], D.faded.agent[pop]);
        ring(g, x, y, rpx[i], ringWidth(rpx[i]), D.faded.ring[s]);
        drawn.push({ slot: i, x: x, y: y, r: rpx[i], kind: "faded", fill: D.faded.agent[pop] });
      }
    }
    // Trails (the last steps), goals under the agents.
    const t0 = Math.max(0, t - S.trail + 1);
    if (t > t0) {
      g.lineWidth = u;
      for (const i of live) {
        g.beginPath(); g.moveTo(sx(D.positions[t0][2 * i]), sy(D.positions[t0][2 * i + 1]));
        for (let k = t0 + 1; k <= t; k++) {
          g.lineTo(sx(D.positions[k][2 * i]), sy(D.positions[k][2 * i + 1]));
        }
        g.strokeStyle = D.faded.trail[D.populations[i]]; g.stroke();
      }
    }
    for (const i of live) {
      const pop = D.populations[i];
      if (pop === K.learned || (few && pop !== K.replay)) {
        cross(g, sx(goals[2 * i]), sy(goals[2 * i + 1]), Math.max(3 * u, S.goal * rpx[i]),
              C[D.pop_names[pop]], 2 * u);
      }
    }
    // Agents: fill = population, ring = status; robots' headings.
    for (const i of live) {
      const x = sx(P[2 * i]), y = sy(P[2 * i + 1]), s = +st[i];
      const fill = C[D.pop_names[D.populations[i]]];
      disc(g, x, y, rpx[i], fill);
      if (s !== K.active) ring(g, x, y, rpx[i], ringWidth(rpx[i]), C[D.status_names[s]]);
      let hd = null;
      if (headingOf.has(i)) {
        const m = D.headings.mrad[t][headingOf.get(i)];
        if (m !== null) { hd = m / 1000; nose(g, x, y, rpx[i], hd); }
      }
      drawn.push({ slot: i, x: x, y: y, r: rpx[i], kind: "agent", fill: fill,
                   status: D.status_names[s], heading: hd });
    }
    // Collided agents that left: a red cross where they hit.
    for (let i = 0; i < N; i++) {
      if (act[i] === "0" && +st[i] === K.collided) {
        const x = sx(P[2 * i]), y = sy(P[2 * i + 1]);
        cross(g, x, y, Math.max(4 * u, rpx[i]), C.collided, 2 * u);
        drawn.push({ slot: i, x: x, y: y, r: rpx[i], kind: "collided", fill: C.collided });
      }
    }
    // Velocity arrows (the learned agents', everyone's in small scenes).
    const k = S.arrow_seconds * view.scale / 1000;
    for (const i of live) {
      if (D.populations[i] !== K.learned && !few) continue;
      const x = sx(P[2 * i]), y = sy(P[2 * i + 1]);
      arrow(g, x, y, x + k * V[2 * i], y - k * V[2 * i + 1], C.velocity, 2 * u, u);
    }
    scaleBar(g);
  }

  function scaleBar(g) {
    const u = view.dpr, target = 110 * u;
    let metres = 1;
    const p = Math.pow(10, Math.floor(Math.log10(target / view.scale)));
    for (const m of [1, 2, 5, 10]) if (m * p * view.scale <= target) metres = m * p;
    const len = metres * view.scale, x = 10 * u, y = canvas.height - 12 * u;
    const label = String(+metres.toPrecision(3)) + " m";
    g.font = (12 * u) + "px system-ui, sans-serif";
    const tw = g.measureText(label).width;
    g.fillStyle = "rgba(255,255,255,0.85)";
    g.fillRect(x - 6 * u, y - 16 * u, len + tw + 20 * u, 24 * u);
    g.strokeStyle = C.text; g.fillStyle = C.text; g.lineWidth = 2 * u;
    g.beginPath(); g.moveTo(x, y); g.lineTo(x + len, y);
    g.moveTo(x, y - 4 * u); g.lineTo(x, y + 4 * u);
    g.moveTo(x + len, y - 4 * u); g.lineTo(x + len, y + 4 * u); g.stroke();
    g.textBaseline = "middle"; g.fillText(label, x + len + 6 * u, y - 1 * u);
    scaleBarMetres = metres; scaleBarPixels = len;
  }
  let scaleBarMetres = null, scaleBarPixels = null;

  function fmt(s) { return s.toFixed(2) + " s"; }
  function showCounts(t) {
    const el = document.getElementById("counts"), c = D.counts[t];
    let nl = 0;
    for (const p of D.populations) if (p === K.learned) nl++;
    const parts = [];
    [["learned", nl, 0], ["crowd", N - nl, 1]].forEach(function (w) {
      if (!w[1]) return;
      const labels = D.count_labels[w[0]];
      parts.push(w[0] + " (" + w[1] + "): " +
                 labels.map(function (l, j) { return l + " " + c[w[2]][j]; }).join("   "));
    });
    el.textContent = parts.join("\n");
  }
  function render() {
    drawScene(cur);
    scrub.value = String(cur);
    readout.textContent = "frame " + cur + " / " + (F - 1) + "  \u00b7  t " + fmt(D.times[cur]) +
      " / " + fmt(D.times[F - 1]);
    showCounts(cur);
  }
  function frameAt(s) {
    let lo = 0, hi = F - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (D.times[mid] <= s + 1e-9) lo = mid; else hi = mid - 1;
    }
    return lo;
  }
  function setFrame(t) {
    t = Math.max(0, Math.min(F - 1, Math.round(Number(t)) || 0));
    cur = t; simT = D.times[t]; render();
  }
  function tick(now) {
    if (!playing) return;
    if (last !== null) simT += (now - last) / 1000 * speed;
    last = now;
    const t = frameAt(simT);
    if (t !== cur) { cur = t; render(); }
    if (cur >= F - 1) { pause(); return; }
    window.requestAnimationFrame(tick);
  }
  function play() {
    if (playing) return;
    if (cur >= F - 1) setFrame(0);
    playing = true; last = null; playBtn.innerHTML = "&#10074;&#10074; Pause";
    window.requestAnimationFrame(tick);
  }
  function pause() { playing = false; last = null; playBtn.innerHTML = "&#9654; Play"; }
  function setSpeed(s) {
    s = Number(s);
    if (D.speeds.indexOf(s) < 0) {
      throw new RangeError("speed must be one of " + D.speeds.join(", ") + ", got " + s);
    }
    speed = s; speedSel.value = String(s);
  }

  function legend() {
    const ul = document.getElementById("legend"), u = window.devicePixelRatio || 1;
    const items = [];
    const pops = Array.from(new Set(D.populations)).sort(function (a, b) { return a - b; });
    const L = C.learned;
    function ringed(color) {
      return function (g, c, r) {
        disc(g, c, c, r, L);
        ring(g, c, c, r, Math.max(2 * u, r * 0.45), color);
      };
    }
    for (const p of pops) {
      const fill = C[D.pop_names[p]];
      items.push([D.labels[D.pop_names[p]], function (g, c, r) { disc(g, c, c, r, fill); }]);
    }
    for (const s of ["at_goal", "collided", "deadlocked", "timed_out"]) {
      items.push([D.labels[s], ringed(C[s])]);
    }
    if (D.headings) {
      items.push(["heading", function (g, c, r) { disc(g, c, c, r, L); nose(g, c, c, r, 0); }]);
    }
    items.push(["left, finished", function (g, c, r) {
      disc(g, c, c, r, D.faded.agent[K.learned]);
      ring(g, c, c, r, Math.max(2 * u, r * 0.45), D.faded.ring[1]);
    }]);
    items.push(["left, collided", function (g, c, r) {
      cross(g, c, c, 0.7 * r, C.collided, 2 * u);
    }]);
    items.push(["velocity (" + S.arrow_seconds + " s)", function (g, c, r) {
      arrow(g, c - r - 2 * u, c + r / 2, c + r + 2 * u, c - r / 2, C.velocity, 2 * u, u);
    }]);
    items.push(["trail", function (g, c, r) {
      g.beginPath(); g.moveTo(c - r - 2 * u, c + r / 2);
      g.quadraticCurveTo(c, c - r, c + r + 2 * u, c);
      g.lineWidth = u; g.strokeStyle = D.faded.trail[K.learned]; g.stroke();
    }]);
    items.push(["goal", function (g, c, r) { cross(g, c, c, 0.7 * r, L, 2 * u); }]);
    if (D.obstacles.length || D.boundary) {
      items.push(["obstacle, wall", function (g, c, r) {
        g.fillStyle = C.obstacle; g.fillRect(c - r, c - r, 2 * r, 2 * r);
      }]);
    }
    for (const it of items) {
      const li = document.createElement("li"), cv = document.createElement("canvas");
      cv.width = cv.height = Math.round(18 * u);
      it[1](cv.getContext("2d"), cv.width / 2, 0.4 * cv.width);
      const span = document.createElement("span"); span.textContent = it[0];
      li.appendChild(cv); li.appendChild(span); ul.appendChild(li);
    }
  }

  const titleEl = document.getElementById("title");
  for (const part of D.title.split("   ")) {
    if (!part.trim()) continue;
    const span = document.createElement("span");
    span.textContent = part.trim();
    if (titleEl.childNodes.length) titleEl.appendChild(document.createTextNode(" "));
    titleEl.appendChild(span);
  }
  document.title = D.title.split("   ").map(function (x) { return x.trim(); })
    .filter(Boolean).join(" \u00b7 ") + " - orca-env";
  for (const s of D.speeds) {
    const o = document.createElement("option"); o.value = String(s); o.textContent = s + "x";
    speedSel.appendChild(o);
  }
  speedSel.value = "1";
  scrub.max = String(F - 1);
  legend();
  scrub.addEventListener("input", function () { setFrame(scrub.value); });
  playBtn.addEventListener("click", function () { if (playing) pause(); else play(); });
  speedSel.addEventListener("change", function () { setSpeed(speedSel.value); });
  document.addEventListener("keydown", function (e) {
    const tag = e.target && e.target.tagName;
    if (e.key === " " && tag !== "BUTTON" && tag !== "SELECT") {
      e.preventDefault();
      if (playing) pause(); else play();
    } else if (tag !== "INPUT" && tag !== "SELECT") {
      if (e.key === "ArrowRight") { pause(); setFrame(cur + 1); }
      else if (e.key === "ArrowLeft") { pause(); setFrame(cur - 1); }
      else if (e.key === "Home") { pause(); setFrame(0); }
      else if (e.key === "End") { pause(); setFrame(F - 1); }
    }
  });
  window.addEventListener("resize", function () { layout(); render(); });
  layout();
  render();

  window.orcaViewer = Object.freeze({
    format: D.format,
    frameCount: F,
    get frame() { return cur; },
    get playing() { return playing; },
    get speed() { return speed; },
    setFrame: function (t) { pause(); setFrame(t); },
    play: play,
    pause: pause,
    setSpeed: setSpeed,
    view: function () {
      return Object.assign({ scaleBarMetres: scaleBarMetres, scaleBarPixels: scaleBarPixels },
                           view);
    },
    drawn: function () { return drawn.map(function (d) { return Object.assign({}, d); }); },
  });
})();
"""
