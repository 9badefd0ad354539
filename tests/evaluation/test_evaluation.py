"""Evaluation: metrics on the ORCA baseline, seeds, policies, outputs, bit-reproducibility."""

import csv
import hashlib
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from orca_env.evaluation import (
    ARRIVAL_TIMES,
    EVAL_SEED_BASE,
    METRICS,
    SOCIAL_METRICS,
    aggregate,
    eval_seeds,
    evaluate,
    format_table,
    is_eval_seed,
    report_hash,
    report_json,
    resolve_policy,
    t95,
    wilson95,
)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CROWDNAV = os.path.join(ROOT, "configs", "crowdnav_circle.yaml")
BOTTLENECK = os.path.join(ROOT, "configs", "bottleneck.yaml")
RATES = ("success_rate", "collision_rate", "agent_collision_rate", "obstacle_collision_rate",
         "timeout_rate", "deadlock_rate", "all_success", "lp3_rate")


def test_seeds_are_frozen_and_reserved():
    assert eval_seeds(3) == [10_000, 10_001, 10_002] and EVAL_SEED_BASE == 10_000
    assert eval_seeds(2, start=5) == [10_005, 10_006]
    assert is_eval_seed(10_000) and is_eval_seed(19_999)
    assert not is_eval_seed(0) and not is_eval_seed(9_999) and not is_eval_seed(20_000)
    with pytest.raises(ValueError):
        eval_seeds(10_001)
    with pytest.raises(ValueError, match="not an evaluation seed"):
        evaluate(CROWDNAV, "orca", seeds=[42])


def test_t_quantiles():
    assert t95(1) == pytest.approx(12.706, abs=1e-3)
    assert t95(30) == pytest.approx(2.042, abs=1e-3)
    assert t95(31) == pytest.approx(2.0395, abs=1e-4)
    assert t95(100) == pytest.approx(1.9840, abs=1e-4)
    assert t95(10**6) == pytest.approx(1.95996, abs=1e-4)


def test_aggregate_mean_and_ci():
    eps = [dict.fromkeys(METRICS, None) for _ in range(4)]
    for e, v in zip(eps, (1.0, 0.5, 1.0, 1.0), strict=True):
        e["success_rate"] = v
    agg = aggregate(eps)
    a = agg["success_rate"]
    assert a["mean"] == 0.875 and a["n"] == 4 and a["ci_method"] == "t_clipped"
    half = t95(3) * np.std([1, 0.5, 1, 1], ddof=1) / 2
    # The t interval would reach above 1: clipped to [0, 1]; ci95 is half the clipped width.
    assert 0.875 + half > 1.0 and 0.875 - half > 0.0
    assert a["ci95_low"] == pytest.approx(0.875 - half) and a["ci95_high"] == 1.0
    assert a["ci95"] == pytest.approx((1.0 - (0.875 - half)) / 2)
    assert agg["makespan"] == {"mean": None, "ci95_low": None, "ci95_high": None, "ci95": None,
                               "ci_method": "t", "n": 0}


def test_ci_of_rates_stays_in_the_unit_interval_and_is_wilson_for_all_success():
    eps = [dict.fromkeys(METRICS, None) for _ in range(20)]
    for k, e in enumerate(eps):
        e["all_success"] = 1.0
        e["collision_rate"] = 0.0 if k else 0.25
        e["time_to_goal"] = 10.0 + k
    agg = aggregate(eps)
    w = agg["all_success"]
    # All 20 episodes succeed: Wilson gives [20 / (20 + z^2), 1], not a zero-width interval.
    z2 = 1.959963984540054 ** 2
    assert w["ci_method"] == "wilson" and w["mean"] == 1.0
    assert w["ci95_low"] == pytest.approx(20 / (20 + z2)) and w["ci95_high"] == pytest.approx(1)
    assert 0.8 < w["ci95_low"] < 0.85 and w["ci95"] > 0.07
    assert wilson95(0, 20) == pytest.approx((0.0, z2 / (20 + z2)))
    lo, hi = wilson95(10, 20)
    assert lo == pytest.approx(0.2993, abs=1e-4) and hi == pytest.approx(0.7007, abs=1e-4)
    # One episode: Wilson is defined, Student-t is not.
    one = aggregate(eps[:1])
    assert one["all_success"]["ci95_low"] is not None and one["time_to_goal"]["ci95"] is None
    c = agg["collision_rate"]
    assert c["ci_method"] == "t_clipped" and c["ci95_low"] == 0.0 and 0 < c["ci95_high"] < 1
    t = agg["time_to_goal"]
    half = t95(19) * np.std(10.0 + np.arange(20), ddof=1) / np.sqrt(20)
    assert t["ci_method"] == "t" and t["ci95"] == pytest.approx(half)
    assert t["ci95_low"] == pytest.approx(19.5 - half) and t["ci95_high"] == pytest.approx(
        19.5 + half)
    for a in agg.values():
        if a["ci95_low"] is not None:
            assert a["ci95"] == pytest.approx((a["ci95_high"] - a["ci95_low"]) / 2)
    # The table shows [low, high] for the rates and +- half-width for the rest.
    rep = {"policy": "p", "config": {"scenario": "s"}, "num_episodes": 20,
           "seeds": list(range(10_000, 10_020)), "aggregate": agg}
    table = format_table(rep)
    row = {ln.split()[0]: ln for ln in table.splitlines()[3:] if ln.split()}
    assert "[0.839, 1]" in row["all_success"] and "+-" not in row["all_success"]
    assert "[0, " in row["collision_rate"]
    assert f"+-{half:.3g}" in row["time_to_goal"]
    assert "Wilson" in table


def test_survivor_bias_is_documented():
    for key in ("time_to_goal", "path_ratio"):
        assert "survivor-biased" in METRICS[key][1]


@pytest.mark.parametrize("config,episodes,min_success", [(CROWDNAV, 4, 0.75),
                                                         (BOTTLENECK, 2, 0.25)])
def test_orca_baseline_metrics_are_complete_and_sane(config, episodes, min_success):
    rep = evaluate(config, "orca", episodes=episodes)
    assert rep["seeds"] == eval_seeds(episodes) and rep["num_episodes"] == episodes
    assert set(rep["aggregate"]) == {*METRICS, *SOCIAL_METRICS} == set(rep["metrics"])
    max_steps = rep["config"]["max_steps"] or 10**9
    for ep in rep["episodes"]:
        assert set(ep) == {"seed", *METRICS, *SOCIAL_METRICS, ARRIVAL_TIMES}
        for k in RATES:
            assert 0.0 <= ep[k] <= 1.0, (k, ep[k])
        # Final outcomes are exclusive (with on_collision: terminate, a collision ends it).
        assert ep["success_rate"] + ep["timeout_rate"] + ep["deadlock_rate"] \
            + ep["collision_rate"] <= 1.0 + 1e-12
        assert ep["collision_rate"] <= ep["agent_collision_rate"] + ep["obstacle_collision_rate"]
        assert 1 <= ep["episode_steps"] <= max_steps
        if ep["success_rate"] > 0:
            assert 0.0 < ep["time_to_goal"] <= ep["episode_steps"] * 0.25
            assert 0.8 < ep["path_ratio"] < 3.0
        if ep["all_success"]:
            assert ep["makespan"] >= ep["time_to_goal"]
        else:
            assert ep["makespan"] is None
        assert ep["intervention"] >= 0.0
        assert ep["min_separation"] is None or ep["min_separation"] > -0.5
    agg = rep["aggregate"]
    assert agg["success_rate"]["mean"] >= min_success
    assert agg["success_rate"]["ci95"] is not None and agg["success_rate"]["ci95"] >= 0
    # The baseline moves towards the goal at the preferred speed: it uses ORCA but not much.
    assert agg["intervention"]["mean"] < 1.0
    table = format_table(rep)
    assert "success_rate" in table and "95% CI" in table


def test_random_policy_is_worse_than_orca_and_seeded():
    orca = evaluate(CROWDNAV, "orca", episodes=3)
    rand = evaluate(CROWDNAV, "random", episodes=3)
    again = evaluate(CROWDNAV, "random", episodes=3)
    assert rand["aggregate"]["success_rate"]["mean"] < orca["aggregate"]["success_rate"]["mean"]
    assert report_json(rand) == report_json(again)


def test_identical_json_twice_in_process_and_in_a_subprocess(tmp_path):
    kw = dict(episodes=3, overrides={"max_steps": 60})
    h1 = report_hash(evaluate(BOTTLENECK, "orca", **kw))
    h2 = report_hash(evaluate(BOTTLENECK, "orca", out_dir=str(tmp_path / "a"), **kw))
    assert h1 == h2
    with open(tmp_path / "a" / "metrics.json", "rb") as fh:
        assert hashlib.sha256(fh.read()).hexdigest() == h1
    out = subprocess.run(
        [sys.executable, "-m", "orca_env", "eval", BOTTLENECK, "--episodes", "3",
         "--set", "max_steps=60", "--quiet", "--print-hash", "--out", str(tmp_path / "b")],
        capture_output=True, text=True, timeout=600, cwd=ROOT,
        env={**os.environ, "SDL_VIDEODRIVER": "dummy", "NUMBA_NUM_THREADS": "1"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == h1
    with open(tmp_path / "b" / "metrics.json", "rb") as fh:
        assert hashlib.sha256(fh.read()).hexdigest() == h1


def test_episodes_do_not_depend_on_the_run_length():
    short = evaluate(CROWDNAV, "random", episodes=2)
    longer = evaluate(CROWDNAV, "random", episodes=3)
    assert longer["episodes"][:2] == short["episodes"]


def test_policy_specs(tmp_path):
    from orca_env.evaluation import OrcaPolicy, RandomPolicy

    assert isinstance(resolve_policy("orca")[0], OrcaPolicy)
    assert isinstance(resolve_policy("random")[0], RandomPolicy)
    pol, name = resolve_policy("eval_policies:still")
    assert name == "eval_policies:still" and callable(pol)
    rep = evaluate(CROWDNAV, "eval_policies.still", episodes=1, overrides={"max_steps": 20})
    ep = rep["episodes"][0]
    assert ep["success_rate"] == 0.0 and ep["episode_steps"] <= 20
    model = tmp_path / "model.txt"
    model.write_text("1.0 0.0")
    rep = evaluate(CROWDNAV, "eval_policies:load", model=str(model), episodes=1,
                   overrides={"max_steps": 20})
    assert rep["policy"] == "eval_policies:load(model.txt)"
    rep = evaluate(CROWDNAV, lambda obs, env: env.heuristic_actions(), episodes=1)
    assert rep["policy"] == "<lambda>"
    # The built-in "orca" is the heuristic plus RVO2's 1e-4 noise; without noise it is the same.
    assert rep["episodes"] == evaluate(CROWDNAV, OrcaPolicy(noise=0.0), episodes=1)["episodes"]
    with pytest.raises(ValueError, match="cannot import"):
        resolve_policy("no_such_module_xyz:policy")
    with pytest.raises(ValueError, match="no attribute"):
        resolve_policy("eval_policies:nothing")


def test_outputs_csv_json_png_video_logs(tmp_path):
    import imageio.v2 as iio

    out = tmp_path / "run"
    rep = evaluate(CROWDNAV, "orca", episodes=3, out_dir=str(out), videos=1, trajectories=2,
                   logs=2, debug_agent=0, video_size=240)
    with open(out / "metrics.json", encoding="utf-8") as fh:
        assert json.load(fh) == json.loads(report_json(rep))
    with open(out / "episodes.csv", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert [int(r["seed"]) for r in rows] == eval_seeds(3)
    assert float(rows[0]["success_rate"]) == rep["episodes"][0]["success_rate"]
    assert sorted(os.listdir(out / "logs")) == ["episode_10000.npz", "episode_10001.npz"]
    assert os.listdir(out / "videos") == ["episode_10000.mp4"]
    reader = iio.get_reader(out / "videos" / "episode_10000.mp4")
    n_frames = sum(1 for _ in reader.iter_data())
    reader.close()
    assert n_frames == rep["episodes"][0]["episode_steps"] + 1
    png = iio.imread(out / "trajectories.png")
    assert png.ndim == 3 and png.shape[0] > 100


def test_builtin_names_win_over_folders_in_the_cwd(tmp_path, monkeypatch):
    from orca_env.evaluation import OrcaPolicy, RandomPolicy

    # train.py writes runs/<x>/eval/orca/: evaluating from there must still mean the built-in.
    (tmp_path / "orca").mkdir()
    (tmp_path / "random").mkdir()
    monkeypatch.chdir(tmp_path)
    pol, name = resolve_policy("orca")
    assert isinstance(pol, OrcaPolicy) and name == "orca"
    pol, name = resolve_policy("random")
    assert isinstance(pol, RandomPolicy) and name == "random"
    # The folder is still reachable by a path that is not a bare built-in name.
    with pytest.raises(FileNotFoundError, match="model.zip"):
        resolve_policy("./orca")


def test_plot_trajectories_leaves_the_matplotlib_backend_alone(tmp_path):
    import matplotlib

    from orca_env.evaluation import load_log, plot_trajectories

    evaluate(CROWDNAV, "orca", episodes=1, out_dir=str(tmp_path), logs=1,
             overrides={"max_steps": 10})
    log = load_log(tmp_path / "logs" / "episode_10000.npz")
    before = matplotlib.rcParams["backend"]
    try:
        matplotlib.use("svg")
        plot_trajectories([log], tmp_path / "t.png")
        assert matplotlib.get_backend().lower() == "svg"
    finally:
        matplotlib.use(before)
    assert (tmp_path / "t.png").stat().st_size > 1000


@pytest.mark.parametrize("kwargs, match", [
    ({"videos": -1}, r"videos must be an integer >= 0, got -1"),
    ({"trajectories": -2}, r"trajectories must be an integer >= 0, got -2"),
    ({"logs": -3}, r"logs must be an integer >= -1 \(-1: all\), got -3"),
    ({"debug_agent": 6}, r"debug_agent 6 is not a slot of the env: expected an integer in "
                         r"0 \.\. 5"),
    ({"debug_agent": -1}, r"debug_agent -1 is not a slot"),
    ({"video_format": "avi"}, r"video_format must be 'mp4' or 'gif', got 'avi'"),
])
def test_bad_evaluate_arguments_are_named(tmp_path, kwargs, match):
    with pytest.raises(ValueError, match=match):
        evaluate(CROWDNAV, "orca", episodes=1, out_dir=str(tmp_path), **kwargs)


@pytest.mark.parametrize("argv, match", [
    (["--videos", "-1"], "argument --videos: expected an integer >= 0, got '-1'"),
    (["--trajectories", "-1"], "argument --trajectories: expected an integer >= 0, got '-1'"),
    (["--logs", "-2"], "argument --logs: expected a count >= 0 or 'all', got '-2'"),
    (["--debug-agent", "-1"], "argument --debug-agent: expected an integer >= 0, got '-1'"),
    (["--debug-agent", "99"], "debug_agent 99 is not a slot of the env"),
    (["--set", "a=1", "--set", "a.b=2"],
     "--set 'a.b=2': 'a' was set to 1 by an earlier --set, so it has no key 'b'"),
    (["--set", "observation..range=2"], "empty part in the key"),
])
def test_bad_cli_arguments_exit_with_a_message(tmp_path, capsys, argv, match):
    from orca_env.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["eval", CROWDNAV, "--episodes", "1", "--quiet", "--out", str(tmp_path), *argv])
    assert exc.value.code == 2
    assert match in capsys.readouterr().err
