"""The docs run: every ```python block of every page of docs/ (and of the README).

Each page's blocks run in order in one namespace, in a temporary working folder, headless
(conftest sets SDL_VIDEODRIVER=dummy). A block preceded by the line ``<!-- no-test -->`` (blank
lines between allowed) is skipped: it needs training or minutes. Blocks nested in a longer
fence (```` ```markdown ```` showing a block) are part of that fence and never run.

Then the checks of what some pages claim: docs/extending.md's scenario, reward term and
observation feature do what the page says; docs/environment.md lists every config key;
docs/scenarios.md has a picture of every shipped config.
"""

import glob
import os
import re

import numpy as np
import pytest

from orca_env.behaviours import REGISTRY as BEHAVIOURS
from orca_env.scenarios import SCENARIOS, Scenario, register_scenario

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = os.path.join(ROOT, "docs")
PAGES = sorted(glob.glob(os.path.join(DOCS, "**", "*.md"), recursive=True))
NO_TEST = "<!-- no-test -->"
#: The registry as the package ships it: every page runs against it (and what a page registers
#: is gone after it).
BUILTIN_SCENARIOS = dict(SCENARIOS)
BUILTIN_BEHAVIOURS = dict(BEHAVIOURS)
_FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([\w+-]*)")


def code_blocks(text):
    """``[(language, code, skipped, line)]`` of the top-level fenced blocks of a markdown text.

    ``line`` is the 0-based index of the block's first line of code in the text.
    """
    blocks, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, lang = m.groups()
        before = [line.strip() for line in lines[:i] if line.strip()]
        skipped = bool(before) and before[-1] == NO_TEST
        body, i = [], i + 1
        start = i
        while i < len(lines):
            close = lines[i].strip()
            if close[:1] == fence[0] and set(close) == {fence[0]} and len(close) >= len(fence):
                break
            body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i])
            i += 1
        blocks.append((lang, "\n".join(body) + "\n", skipped, start))
        i += 1
    return blocks


def python_blocks(path):
    """``[(code, skipped)]`` of a page's Python blocks: compiled with the page's line numbers
    (tracebacks point into the page), or None where skipped."""
    with open(path, encoding="utf-8") as fh:
        blocks = code_blocks(fh.read())
    return [(None if skipped else compile("\n" * line + code, path, "exec"), skipped)
            for lang, code, skipped, line in blocks if lang == "python"]


def run_page(path, workdir):
    """Run the page's Python blocks (not the skipped ones) in one namespace, in ``workdir``."""
    namespace = {"__name__": "docs_" + re.sub(r"\W", "_", os.path.relpath(path, ROOT))}
    saved = dict(SCENARIOS)
    SCENARIOS.clear()
    SCENARIOS.update(BUILTIN_SCENARIOS)
    BEHAVIOURS.clear()
    BEHAVIOURS.update(BUILTIN_BEHAVIOURS)
    cwd = os.getcwd()
    os.chdir(workdir)
    try:
        for code, skipped in python_blocks(path):
            if not skipped:
                exec(code, namespace)  # noqa: S102  (our own docs)
    finally:
        os.chdir(cwd)
        SCENARIOS.clear()  # drop what the page registered
        SCENARIOS.update(saved)
        BEHAVIOURS.clear()
        BEHAVIOURS.update(BUILTIN_BEHAVIOURS)
    return namespace


def test_code_blocks_parser():
    text = ("intro\n```python\na = 1\n```\n<!-- no-test -->\n\n```python\nslow()\n```\n"
            "````markdown\n```python\nshown()\n```\n````\n```bash\nls\n```\n")
    assert code_blocks(text) == [("python", "a = 1\n", False, 2),
                                 ("python", "slow()\n", True, 7),
                                 ("markdown", "```python\nshown()\n```\n", False, 10),
                                 ("bash", "ls\n", False, 15)]


@pytest.mark.parametrize("path", PAGES + [os.path.join(ROOT, "README.md")],
                         ids=lambda p: os.path.relpath(p, ROOT))
def test_page_code_runs(path, tmp_path):
    run_page(path, tmp_path)


def test_pages_have_code_to_run():
    # The pages with examples keep them runnable (a page whose blocks are all skipped tests
    # nothing).
    for page in ("environment.md", "scenarios.md", "evaluation.md", "core-api.md",
                 "extending.md"):
        assert any(not skipped for _, skipped in python_blocks(os.path.join(DOCS, page))), page


def test_environment_page_lists_every_config_key():
    from orca_env.config import describe

    keys = {line.split(" = ", 1)[0] for line in describe().splitlines() if " = " in line}
    with open(os.path.join(DOCS, "environment.md"), encoding="utf-8") as fh:
        section = fh.read().split("\n## Config keys\n", 1)[1]
    documented = set(re.findall(r"^\| `([^`]+)` \|", section, flags=re.M))
    assert keys, "describe() lists no keys"
    assert documented >= keys, f"config keys missing on docs/environment.md: {keys - documented}"
    assert documented <= keys, f"docs/environment.md lists unknown keys: {documented - keys}"


def test_scenarios_page_has_a_picture_of_every_shipped_config():
    with open(os.path.join(DOCS, "scenarios.md"), encoding="utf-8") as fh:
        page = fh.read()
    for cfg in sorted(glob.glob(os.path.join(ROOT, "configs", "*.yaml"))):
        name = os.path.splitext(os.path.basename(cfg))[0]
        image = os.path.join(DOCS, "images", "scenarios", f"{name}.png")
        assert os.path.isfile(image), f"no picture of {name}: run docs/scenario_images.py"
        assert f"(images/scenarios/{name}.png)" in page, f"docs/scenarios.md shows no {name}"
        assert os.path.getsize(image) < 60_000, f"{image} is large; keep pictures small"


# -- docs/extending.md: the blocks do what the page says ------------------------------------

EXTENDING = os.path.join(DOCS, "extending.md")


@pytest.fixture(scope="module")
def ns():
    """The namespace of docs/extending.md's blocks, its scenarios registered meanwhile."""
    saved = dict(SCENARIOS)
    BEHAVIOURS.clear()
    BEHAVIOURS.update(BUILTIN_BEHAVIOURS)
    try:
        namespace = {"__name__": "extending_doc"}
        for code, skipped in python_blocks(EXTENDING):
            if not skipped:
                exec(code, namespace)  # noqa: S102
        for name in ("TwoLines", "plain", "clock", "heading", "time_left", "SpawnError"):
            assert name in namespace, f"docs/extending.md no longer defines {name}"
        yield namespace
    finally:
        SCENARIOS.clear()
        SCENARIOS.update(saved)
        BEHAVIOURS.clear()
        BEHAVIOURS.update(BUILTIN_BEHAVIOURS)


def test_scenario_is_registered_and_solved_by_pure_orca(ns):
    assert SCENARIOS["two_lines_v0"] is ns["TwoLines"]
    env = ns["orca_env"].parallel_env(scenario="two_lines_v0")
    env.reset(seed=0)
    assert np.allclose(env.goals[:, 0], -np.sign(env.starts[:, 0]) * 4.0)
    final = {}
    while env.agents:
        *_, infos = env.step(env.heuristic_actions())
        final.update({a: info["status"] for a, info in infos.items()})
    assert len(final) == 4 and set(final.values()) == {"at_goal"}


def test_scenario_params_are_validated(ns):
    make = ns["orca_env"].parallel_env
    with pytest.raises(ValueError, match="gapp"):
        make(scenario="two_lines_v0", scenario_kwargs={"gapp": 3.0})
    with pytest.raises(ns["SpawnError"], match="spacing"):
        make(scenario="two_lines_v0", scenario_kwargs={"spacing": 0.2}).reset(seed=0)


def test_register_refuses_bad_names_and_duplicates(ns):
    class Unversioned(Scenario):
        name = "two_lines"

    with pytest.raises(ValueError, match="versioned"):
        register_scenario(Unversioned)

    class Clash(Scenario):
        name = "two_lines_v0"

    with pytest.raises(ValueError, match="already registered"):
        register_scenario(Clash)
    with pytest.raises(TypeError):
        register_scenario(object)
    assert SCENARIOS["two_lines_v0"] is ns["TwoLines"]


def test_reward_term_is_weighted_reported_and_summed(ns):
    env = ns["orca_env"].parallel_env(scenario="two_lines_heading_v0",
                                      rewards={"extra": {"heading": 0.02}})
    assert env.reward_term_names[-1] == "heading"
    env.reset(seed=1)
    for _ in range(3):
        _, rewards, _, _, infos = env.step(env.heuristic_actions())
    for a, info in infos.items():
        terms = info["reward_terms"]
        assert sum(terms.values()) == pytest.approx(rewards[a], abs=1e-12)
        assert 0.0 < terms["heading"] <= 0.02 + 1e-12  # heading for the goal under ORCA
    assert ns["heading"] == pytest.approx(0.02, rel=0.05)
    # Default weight from EXTRA_REWARDS; unknown names and bad weights are refused.
    env = ns["orca_env"].parallel_env(scenario="two_lines_heading_v0")
    env.reset(seed=1)
    _, _, _, _, infos = env.step(env.heuristic_actions())
    assert 0.0 < infos["agent_0"]["reward_terms"]["heading"] <= 0.01 + 1e-12
    with pytest.raises(ValueError, match="rewards.extra.headng"):
        ns["orca_env"].parallel_env(scenario="two_lines_heading_v0",
                                    rewards={"extra": {"headng": 1.0}})
    with pytest.raises(ValueError, match="rewards.extra.heading"):
        ns["orca_env"].parallel_env(scenario="two_lines_heading_v0",
                                    rewards={"extra": {"heading": float("nan")}})


def test_observation_feature_is_appended_bounded_and_filled(ns):
    plain, clock = ns["plain"], ns["clock"]
    n_plain = plain.observation_space("agent_0").shape[0]
    space = clock.observation_space("agent_0")
    assert space.shape == (n_plain + 1,)
    assert space.low[-1] == 0.0 and space.high[-1] == 1.0
    assert ns["time_left"] == pytest.approx(0.9)
    obs, _ = clock.reset(seed=0)
    assert all(o[-1] == 1.0 and space.contains(o) for o in obs.values())
    # The rest of the observation is the plain scenario's, unchanged.
    obs_plain, _ = plain.reset(seed=0)
    assert np.array_equal(obs["agent_0"][:-1], obs_plain["agent_0"])


def test_hook_with_a_wrong_shape_is_a_clear_error(ns):
    class Broken(ns["TwoLines"]):
        name = "two_lines_broken_v0"
        EXTRA_OBSERVATIONS = (("a", 0.0, 1.0), ("b", 0.0, 1.0))

        def observation_features(self, env, slots):
            return np.zeros((len(slots), 1))

    register_scenario(Broken)
    try:
        env = ns["orca_env"].parallel_env(scenario="two_lines_broken_v0")
        with pytest.raises(RuntimeError, match="observation_features must return"):
            env.reset(seed=0)
    finally:
        SCENARIOS.pop("two_lines_broken_v0")


def test_hooks_run_on_the_vector_env(ns):
    assert np.allclose(ns["vector_time_left"], 0.9)


def test_a_registered_behaviour_steers_its_agents(ns):
    speeds = ns["stroller_speeds"]
    # Half the preferred speed (1 m/s in two_lines' defaults unless set), never the full one.
    pref = ns["strollers"].pref_speeds[4:]
    assert np.allclose(speeds, 0.5 * pref)
    assert ns["strollers"].groups[1].population == "stroller"
    # The same behaviour in the vector env, bit-identical to the single env.
    from orca_env.vector import OrcaVectorEnv

    groups = [{"population": "learned", "count": 4},
              {"population": "stroller", "count": 4, "on_goal": "stay"}]
    v = OrcaVectorEnv(None, 2, seed=3, scenario="two_lines_v0", groups=groups)
    vobs, _ = v.reset()
    single = ns["orca_env"].parallel_env(scenario="two_lines_v0", groups=groups)
    obs, _ = single.reset(seed=4)
    for _ in range(5):
        act = single.heuristic_actions()
        obs, rew, *_ = single.step(act)
        vact = np.zeros((v.num_envs, 2))
        vact[4:] = np.stack([act[a] for a in single.possible_agents])
        vobs, vrew, *_ = v.step(vact)
    assert np.array_equal(vobs[4:], np.stack([obs[a] for a in single.possible_agents]))
    with pytest.raises(ValueError, match="already registered"):
        from orca_env.behaviours import Behaviour, register_behaviour
        register_behaviour(Behaviour(name="stroller", doc="again"))


def test_a_behaviour_places_its_agents_with_pre_step(ns):
    # Out of the simulation for 7 steps of 0.25 s; at t = 2 s (after step 8) at their goals.
    assert ns["late_counts"] == [0] * 7 + [4] * 3
    late = ns["late"]
    assert np.allclose(late.sim.positions[4:], late.goals[4:])


# -- docs/training.md: the SB3 snippet (skipped above: 100,000 steps) runs with one rollout --

def test_training_sb3_snippet_runs_with_progress_on_one_thread(tmp_path, capsys):
    pytest.importorskip("stable_baselines3")
    import torch

    with open(os.path.join(DOCS, "training.md"), encoding="utf-8") as fh:
        blocks = [code for lang, code, skipped, _ in code_blocks(fh.read())
                  if lang == "python" and skipped and "model.learn(" in code]
    assert len(blocks) == 1, "docs/training.md has no (or several) SB3 snippets"
    code = blocks[0]
    assert code.count("model.learn(100_000, progress_bar=True)") == 1
    before = torch.get_num_threads()
    torch.set_num_threads(2)  # what torch picks on 2 cores; the snippet must end up on 1
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        ns = {"__name__": "docs_training_sb3"}
        exec(code.replace("model.learn(100_000", "model.learn(8192"), ns)  # noqa: S102
        assert torch.get_num_threads() == 1
    finally:
        os.chdir(cwd)
        torch.set_num_threads(before)
    assert ns["model"].num_timesteps == 64 * ns["base"].num_envs  # one rollout
    # SB3's progress bar (rich), counting entry-steps of the one rollout
    assert "8,192/8,192" in capsys.readouterr().out
