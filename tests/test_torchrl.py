"""The native TorchRL env (orca_env.wrappers.torchrl) and the BenchMARL tasks (issue 26 item 3).

Outside CI these tests skip, saying why, when torchrl, tensordict or benchmarl is missing
(``pip install -e .[torchrl]``); in CI (``CI=true``, which installs ``.[dev]``) a missing
package is a failure, not a skip.
"""

import math
import os

import numpy as np
import pytest


def _require(module: str):
    if os.environ.get("CI") == "true":
        return __import__(module)  # CI installs the torchrl extra: missing is a failure
    return pytest.importorskip(module, reason=f"{module} is not installed "
                                              f"(pip install -e .[torchrl]); CI runs these tests")


torch = _require("torch")
_require("tensordict")
_require("torchrl")

from torchrl.envs.utils import check_env_specs  # noqa: E402

from orca_env.vector import OrcaVectorEnv  # noqa: E402
from orca_env.wrappers.torchrl import OrcaTorchRLEnv  # noqa: E402

CONFIG, B, MAX_STEPS = "circle_dense", 3, 20


def _actions(n_steps, rows, seed=0):
    """Goal-seeking actions with noise: agents finish at different steps."""
    rng = np.random.default_rng(seed)
    act = np.tile([1.0, 0.0], (n_steps, rows, 1)) + rng.normal(0, 0.3, (n_steps, rows, 2))
    return np.clip(act, -1, 1).astype(np.float32)


def test_missing_package_fails_in_ci_and_skips_elsewhere(monkeypatch):
    monkeypatch.setenv("CI", "true")
    with pytest.raises(ImportError):
        _require("orca_env_no_such_package")
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception, match=r"pip install -e \.\[torchrl\]"):
        _require("orca_env_no_such_package")


@pytest.mark.parametrize("finished_agents", ["leave", "absorb"])
@pytest.mark.parametrize("infos", ["numeric", False])
def test_check_env_specs(finished_agents, infos):
    env = OrcaTorchRLEnv(CONFIG, B, seed=0, max_steps=MAX_STEPS, infos=infos,
                         finished_agents=finished_agents)
    assert env.batch_size == torch.Size([B])
    L = env.num_agents
    assert env.full_observation_spec["agents", "observation"].shape[:2] == (B, L)
    assert env.full_done_spec["agents", "done"].shape == (B, L, 1)
    assert env.full_done_spec["done"].shape == (B, 1)
    has_infos = ("agents", "info", "status") in env.full_observation_spec.keys(True)
    assert has_infos == (infos == "numeric")
    check_env_specs(env, seed=0)
    env.close()


def test_bad_infos_argument():
    with pytest.raises(ValueError, match="infos must be 'numeric' or False, got True"):
        OrcaTorchRLEnv(CONFIG, 1, infos=True)


def test_rollout_matches_the_vector_env_bit_for_bit():
    """Same seed, same actions: the TorchRL env's tensors are the raw (SAME_STEP) env's arrays.

    Also: masks and per-agent dones after agents finish, and the partial reset of the worlds
    that ended (and only those).
    """
    n_steps = 45
    raw = OrcaVectorEnv(CONFIG, B, seed=3, max_steps=MAX_STEPS, infos="numeric")
    env = OrcaTorchRLEnv(CONFIG, B, seed=3, max_steps=MAX_STEPS)
    L = env.num_agents
    acts = _actions(n_steps, B * L)
    obs, info = raw.reset()
    td = env.reset()
    np.testing.assert_array_equal(td["agents", "observation"].reshape(B * L, -1).numpy(), obs)
    resets, early = 0, 0
    for t in range(n_steps):
        td["agents", "action"] = torch.from_numpy(acts[t].reshape(B, L, 2))
        td, td_next = env.step_and_maybe_reset(td)
        obs, rew, term, trunc, info = raw.step(acts[t])
        nxt = td["next"]
        fin = info.get("_final_obs", np.zeros(B * L, dtype=bool))
        reset_rows = np.repeat(info["world_reset"], L)
        expected = np.where(fin[:, None], info.get("final_obs", obs),
                            np.where(reset_rows[:, None], 0.0, obs))
        got = nxt["agents", "observation"].reshape(B * L, -1).numpy()
        np.testing.assert_array_equal(got, expected.astype(np.float32))
        np.testing.assert_array_equal(nxt["agents", "reward"].reshape(-1).numpy(),
                                      rew.astype(np.float32))
        for k in ("status", "reward_progress", "distance_to_goal", "active"):
            np.testing.assert_array_equal(nxt["agents", "info", k].reshape(-1).numpy(), info[k])
        # Per agent: done once finished (sticky), mask = the agents that act next.
        done = nxt["agents", "done"].reshape(B, L).numpy()
        mask = nxt["agents", "mask"].numpy()
        assert not (done & mask).any() and (done | mask).all()
        np.testing.assert_array_equal(nxt["done"].reshape(B).numpy(), info["world_reset"])
        np.testing.assert_array_equal(nxt["done"].reshape(B).numpy(), done.all(1))
        early += int((done.any(1) & ~done.all(1)).sum())
        # The worlds that ended are reset, and only those: their first observations are the
        # raw env's (which reset them on the same step); the others carry on.
        resets += int(info["world_reset"].sum())
        np.testing.assert_array_equal(td_next["agents", "observation"].reshape(B * L, -1)
                                      .numpy(), np.where(reset_rows[:, None], obs, got))
        assert not td_next["done"].any()
        np.testing.assert_array_equal(td_next["agents", "mask"].reshape(-1).numpy(),
                                      info["alive"])
        td = td_next
    assert resets >= B  # every world ended at least once
    assert early > 0  # some agents finished before their world did
    env.close()
    raw.close()


def test_absorb_keeps_agents_until_the_world_ends():
    env = OrcaTorchRLEnv(CONFIG, 2, seed=1, max_steps=MAX_STEPS, finished_agents="absorb")
    acts = iter(torch.from_numpy(_actions(MAX_STEPS, 2 * env.num_agents))
                .reshape(MAX_STEPS, 2, env.num_agents, 2))

    def policy(td):
        return td.set(("agents", "action"), next(acts))

    td = env.rollout(MAX_STEPS, policy=policy, break_when_any_done=False)
    nxt = td["next"]
    done = nxt["agents", "done"][..., 0]  # [B, T, L]
    world_done = nxt["done"][..., 0]  # [B, T]
    # No agent is done before its world: all of a world's agents end on its last step.
    assert (done == world_done[..., None]).all()
    assert world_done[:, -1].all()
    # Agents that finished early are absorbed: they did not act, are masked out (from the
    # step they finished on), with zero reward and observation.
    absorbed = ~nxt["agents", "info", "active"] & ~world_done[..., None]
    assert absorbed.any()
    assert not nxt["agents", "mask"][absorbed].any()
    assert (nxt["agents", "reward"][..., 0][absorbed] == 0).all()
    assert (nxt["agents", "observation"][absorbed] == 0).all()
    finishing = ~nxt["agents", "mask"] & nxt["agents", "info", "active"] & ~world_done[..., None]
    assert finishing.any() and not done[finishing].any()
    env.close()


def test_reset_of_chosen_worlds_only():
    """A ``_reset`` naming a world that is not done resets it (and only it)."""
    env = OrcaTorchRLEnv(CONFIG, 3, seed=0, max_steps=MAX_STEPS)
    td0 = env.reset()
    td = env.rand_step(td0.clone())
    from torchrl.envs.utils import step_mdp

    td = step_mdp(td)
    stepped = td["agents", "observation"].clone()
    td["_reset"] = torch.tensor([[False], [True], [False]])
    out = env.reset(td)
    obs = out["agents", "observation"]
    assert torch.equal(obs[0], stepped[0]) and torch.equal(obs[2], stepped[2])
    assert not torch.equal(obs[1], stepped[1])
    assert out["agents", "mask"][1].all() and not out["done"].any()
    # World 1 started its next episode (from its generator), not the seed's first one again.
    assert not torch.equal(obs[1], td0["agents", "observation"][1])
    env.close()


def _losses_callback():
    """A BenchMARL callback keeping every loss value (a module-level class: BenchMARL pickles
    its callbacks into the experiment folder)."""
    from benchmarl.experiment.callback import Callback

    global _Losses

    class _Losses(Callback):
        def __init__(self):
            super().__init__()
            self.values = []

        def on_train_end(self, training_td, group):
            self.values += [float(v.mean()) for k, v in training_td.items()
                            if k.startswith("loss")]

    _Losses.__qualname__ = "_Losses"
    return _Losses()


def test_benchmarl_tiny_mappo_run(tmp_path):
    _require("benchmarl")
    from benchmarl.algorithms import MappoConfig
    from benchmarl.experiment import Experiment, ExperimentConfig
    from benchmarl.models.mlp import MlpConfig

    from orca_env.wrappers.benchmarl import OrcaClass, OrcaTask

    cfg = ExperimentConfig.get_from_yaml()
    cfg.max_n_frames = 192
    cfg.on_policy_collected_frames_per_batch = 96
    cfg.on_policy_n_envs_per_worker = 2
    cfg.on_policy_n_minibatch_iters = 1
    cfg.on_policy_minibatch_size = 48
    cfg.evaluation = cfg.render = cfg.create_json = cfg.checkpoint_at_end = False
    cfg.loggers = []
    cfg.save_folder = str(tmp_path)
    model = MlpConfig(num_cells=[16], layer_class=torch.nn.Linear,
                      activation_class=torch.nn.Tanh)
    task = OrcaTask.BOTTLENECK.get_task({"max_steps": 20})
    assert isinstance(task, OrcaClass) and task.scenario == "bottleneck"
    losses = _losses_callback()
    exp = Experiment(task=task, algorithm_config=MappoConfig.get_from_yaml(), model_config=model,
                     critic_model_config=model, seed=0, config=cfg, callbacks=[losses])
    exp.run()
    assert exp.total_frames == 192
    assert len(losses.values) >= 2 * 3  # two iterations, three losses each
    assert all(math.isfinite(v) for v in losses.values)


def test_benchmarl_task_names_are_shipped_configs():
    _require("benchmarl")
    from importlib.resources import files

    from orca_env.wrappers.benchmarl import OrcaTask

    configs = files("orca_env.configs")
    assert [t.name for t in OrcaTask if not (configs / f"{t.name.lower()}.yaml").is_file()] == []
    with pytest.raises(ValueError, match="continuous actions only"):
        OrcaTask.CIRCLE.get_task().get_env_fun(2, False, 0, "cpu")


def _doc_blocks(marker):
    """The docs page's (skipped: they need this extra) Python blocks that use ``marker``."""
    from test_docs import code_blocks  # pytest puts tests/ on sys.path

    path = os.path.join(os.path.dirname(__file__), os.pardir, "docs", "libraries.md")
    with open(path, encoding="utf-8") as fh:
        blocks = code_blocks(fh.read())
    found = [(code, line) for lang, code, skipped, line in blocks
             if lang == "python" and marker in code]
    assert found, f"no block with {marker!r} in docs/libraries.md"
    return path, found


@pytest.mark.parametrize("marker", ["orca_env.wrappers.torchrl import",
                                    "orca_env.wrappers.benchmarl import"])
def test_docs_snippets_run(marker, tmp_path, monkeypatch):
    if "benchmarl" in marker:
        _require("benchmarl")
    path, found = _doc_blocks(marker)
    monkeypatch.chdir(tmp_path)  # BenchMARL writes its experiment folder here
    for code, line in found:
        exec(compile("\n" * line + code, path, "exec"), {"__name__": "docs_libraries"})
