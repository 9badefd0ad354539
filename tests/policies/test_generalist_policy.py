"""The shipped generalists act on every entry of the standard suite.

``policies/trained/generalist`` was trained by ``python train.py --config
configs/train/generalist.yaml --ship`` on a mixture of the suite's scenarios with the universal
observation layout (plus the time feature) and the ORCA safety layer; ``generalist_residual``
likewise from ``generalist_residual.yaml``, the first release's generalist config with residual
actions (a correction to pure ORCA's velocity); ``generalist_sarl`` attends over the crowd
(``generalist_sarl.yaml``) and ``generalist_sarl2`` is it fine-tuned (``generalist_sarl2.yaml``,
``init``). Here
it runs one short episode on every suite entry (the large RVO2 entries cut to a few steps, the
others to at most 60), with the observation settings bench brings to a universal-layout model,
and it must beat pure ORCA where that is cheap to check: the dense crossing on the suite's own
seeds, and the noise-free symmetric crossing where pure ORCA deadlocks.
"""

import dataclasses
import os

import pytest

pytest.importorskip("stable_baselines3")

from orca_env.policies import TRAINED_DIR, env_settings, observation_settings  # noqa: E402

from orca_env.evaluation.bench import BenchPolicy, load_suite, run_bench  # noqa: E402
from orca_env.evaluation.suite import is_eval_seed  # noqa: E402
from orca_env.training.config import REPO_ROOT, load_train_config  # noqa: E402

#: Shipped name -> its action mode.
SHIPPED = {"generalist": "velocity", "generalist_residual": "residual",
           "generalist_sarl": "velocity", "generalist_sarl2": "velocity"}
both = pytest.mark.parametrize("name", sorted(SHIPPED))
#: Shipped name -> the safety margin of its deploy section (chosen after training, on the
#: validation suites; the residual generalist has none).
DEPLOY = {"generalist": 0.1, "generalist_residual": 0.1, "generalist_sarl": 0.1,
          "generalist_sarl2": 0.1}
SETTINGS = {"layout": "universal", "frame": "goal", "num_agents": 6, "num_obstacles": 4}
#: Shipped name -> the observation settings it carries (the generalist observes the time).
OBSERVATION = {"generalist": dict(SETTINGS, time=True), "generalist_residual": SETTINGS,
               "generalist_sarl": dict(SETTINGS, num_agents=16, num_obstacles=8, time=True,
                                       stall=True)}
OBSERVATION["generalist_sarl2"] = OBSERVATION["generalist_sarl"]  # fine-tuned from it (init)


def _short(entry):
    """The entry with one episode; long episodes are cut (they only have to run)."""
    cap = 20 if entry.name.startswith("rvo2_") else 60
    over = dict(entry.overrides, max_steps=cap)
    return dataclasses.replace(entry, episodes=1, overrides=over,
                               set=dict(entry.set, max_steps=cap))


def _rates(report, entry, label):
    agg = report["results"][entry][label]
    return {k: agg[k]["mean"] for k in ("success_rate", "collision_rate", "deadlock_rate")}


@both
def test_the_shipped_generalist_has_the_universal_settings(name):
    path = os.path.join(TRAINED_DIR, name)
    assert os.path.isfile(os.path.join(path, "model.zip"))
    assert observation_settings(path) == OBSERVATION[name]
    margin = {} if DEPLOY[name] is None else {"learned_orca_padding": DEPLOY[name]}
    assert env_settings(path) == {"observation": OBSERVATION[name], "action": SHIPPED[name],
                                  **margin}


@both
def test_the_shipped_generalist_matches_its_training_config_and_its_seeds(name):
    shipped = load_train_config(os.path.join(TRAINED_DIR, name, "config.yaml"))
    repo = load_train_config(os.path.join(REPO_ROOT, "configs", "train", f"{name}.yaml"))
    for key in ("env", "algo", "n_envs", "n_timesteps", "seed", "hyperparams", "policy_kwargs",
                "normalize", "bootstrap"):
        assert shipped[key] == repo[key], key
    assert shipped.get("deploy") == repo.get("deploy")
    # Trained on the training seeds only, never on a suite's evaluation seeds.
    assert not any(is_eval_seed(s) for s in range(shipped["seed"],
                                                  shipped["seed"] + shipped["n_envs"]))


def test_the_two_configs_differ_where_their_headers_say():
    gen, res = (load_train_config(os.path.join(REPO_ROOT, "configs", "train", f"{n}.yaml"))
                for n in ("generalist", "generalist_residual"))
    # The generalist: velocity actions, time-aware, trained on the shipped (closed) corridors.
    assert gen["env"].get("action", "velocity") == "velocity"
    assert gen["env"]["observation"]["time"] is True
    assert gen["hyperparams"]["gamma"] == 0.995 and gen["env"]["rewards"]["collision"] == -2.0
    corridors = [e for e in gen["env"]["mixture"] if e["config"].startswith("corridor")]
    assert len(corridors) == 2 and all("scenario" not in e["set"] for e in corridors)
    # The residual one is the first release's generalist with residual actions: no time, and
    # corridor_v0 pinned (what it was trained on), so that retraining gives its weights.
    assert res["env"]["action"] == "residual" and not res["env"]["observation"].get("time")
    corridors = [e for e in res["env"]["mixture"] if e["config"].startswith("corridor")]
    assert len(corridors) == 2 and all(e["set"]["scenario"] == "corridor_v0" for e in corridors)
    crossings = [e for e in res["env"]["mixture"] if e["config"].startswith("intersection")]
    assert len(crossings) == 2 and all(e["set"]["scenario"] == "intersection_v0"
                                       for e in crossings)
    # The same scenarios and ranges, the same budget.
    assert [(e["config"], e.get("ranges")) for e in gen["env"]["mixture"]] == \
        [(e["config"], e.get("ranges")) for e in res["env"]["mixture"]]
    assert gen["n_timesteps"] == res["n_timesteps"]


@both
def test_it_runs_on_every_entry_of_the_standard_suite(name):
    suite = load_suite("standard")
    small = dataclasses.replace(suite, entries=tuple(_short(e) for e in suite.entries))
    rep = run_bench(small, [BenchPolicy(os.path.join(TRAINED_DIR, name))])
    assert set(rep["results"]) == {e.name for e in suite.entries}
    for entry, res in rep["results"].items():
        (agg,) = res.values()
        assert agg["success_rate"]["n"] == 1, entry
        assert 0.0 <= agg["success_rate"]["mean"] <= 1.0


@both
def test_it_beats_pure_orca_on_the_dense_crossings(name):
    suite = load_suite("standard")
    picked = tuple(dataclasses.replace(e, episodes=2) for e in suite.entries
                   if e.name in ("circle_dense", "circle_nojitter"))
    rep = run_bench(dataclasses.replace(suite, entries=picked),
                    [BenchPolicy(os.path.join(TRAINED_DIR, name)), BenchPolicy("orca")])
    label = rep["policies"][0]["label"]
    dense, dense_orca = (_rates(rep, "circle_dense", p) for p in (label, "orca"))
    assert dense["success_rate"] >= dense_orca["success_rate"] + 0.1, (dense, dense_orca)
    assert dense["collision_rate"] <= dense_orca["collision_rate"], (dense, dense_orca)
    sym, sym_orca = (_rates(rep, "circle_nojitter", p) for p in (label, "orca"))
    assert sym_orca["deadlock_rate"] == 1.0  # pure ORCA's symmetric deadlock
    assert sym["success_rate"] >= 0.9 and sym["collision_rate"] == 0.0, sym


def test_the_crowd_generalist_is_the_generalist_mixture_seen_as_a_set():
    gen, sarl = (load_train_config(os.path.join(REPO_ROOT, "configs", "train", f"{n}.yaml"))
                 for n in ("generalist", "generalist_sarl"))
    assert sarl["policy_kwargs"]["extractor"] == "sarl" and sarl["normalize"] is False
    obs = sarl["env"]["observation"]
    assert (obs["num_agents"], obs["num_obstacles"], obs["time"], obs["stall"]) == (16, 8, True,
                                                                                   True)
    # The generalist's entries, in its order, with the social-force scenes added.
    names = [e["config"] for e in sarl["env"]["mixture"]]
    added = {"crowdnav_circle_sf", "crowdnav_square_sf", "bottleneck_sf", "doorway_sf"}
    assert [n for n in names if n not in added] == [e["config"] for e in gen["env"]["mixture"]]
    assert added <= set(names)
    assert sarl["env"]["rewards"] == gen["env"]["rewards"]


def test_the_second_crowd_generalist_is_the_first_fine_tuned_where_its_header_says():
    sarl, sarl2 = (load_train_config(os.path.join(REPO_ROOT, "configs", "train", f"{n}.yaml"))
                   for n in ("generalist_sarl", "generalist_sarl2"))
    assert sarl2["init"] == "generalist_sarl" and "init" not in sarl
    for key in ("algo", "n_envs", "normalize", "policy_kwargs", "deploy"):
        assert sarl2[key] == sarl[key], key
    assert sarl2["env"]["observation"] == sarl["env"]["observation"]
    assert sarl2["hyperparams"] == dict(sarl["hyperparams"], learning_rate=1e-4)
    assert sarl2["env"]["rewards"] == dict(sarl["env"]["rewards"], time=-0.02)
    first, second = ({e["config"]: e for e in c["env"]["mixture"]} for c in (sarl, sarl2))
    assert list(first) == list(second)  # the same entries in the same order
    changed = {name for name in first if first[name] != second[name]}
    assert changed == {"doorway", "intersection", "intersection_dense", "blocks_roadmap"}
    assert second["doorway"]["weight"] == 4
    assert second["blocks_roadmap"]["weight"] == 1
    assert second["blocks_roadmap"]["ranges"]["groups.1.count"] == [16, 96]
    # Both intersections on the suites' closed arms (no pinned v0); the dense crowd range kept,
    # so that the held-out 40-agent variant stays outside training.
    for name in ("intersection", "intersection_dense"):
        assert "scenario" not in second[name].get("set", {}), name
        assert second[name]["ranges"] == first[name]["ranges"], name
    assert second["intersection_dense"]["weight"] == 4
