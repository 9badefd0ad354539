"""Train a shared navigation policy with stable-baselines3 and compare it with pure ORCA.

``python train.py`` trains the default config (``configs/train/circle_ppo.yaml``: a dense
symmetric circle crossing where pure ORCA jams) in about ten minutes on two CPU cores, then
evaluates on held-out seeds, side by side: the trained policy with the ORCA safety layer, pure
ORCA, and the trained policy without the safety layer. Everything lands in a run folder::

    runs/<config>_s<seed>_<time>/
        config.yaml        resolved config (the defaults filled in; what --resume reads)
        command.txt        the command line
        git.txt            commit and whether the tree was dirty
        name.txt           the config's name (what --resume and --ship call the run)
        model.zip          the final model (load with policies.sb3.load(run_folder))
        vecnormalize.pkl   observation normaliser statistics (when normalize is on)
        replay_buffer.pkl  SAC's replay buffer (what --resume continues from)
        checkpoints/       rl_model_<n>_steps.zip (+ its vecnormalize and replay buffer .pkl)
        tb/                TensorBoard logs (when tensorboard is installed)
        train_stats.json   timesteps, wall time, throughput
        eval/              comparison.txt, comparison.json; per policy (trained_safety, orca,
                           trained_no_safety) the suite's metrics.json, episodes.csv;
                           trained_safety/logs/episode_10000.npz and videos/episode_10000.mp4

Config (YAML, rl-baselines3-zoo style; unknown keys are errors):

    env:            env config (orca_env.config keys); ``config: <yaml>`` loads a base file
    algo:           ppo | sac
    n_envs:         env copies (VecEnv entries = n_envs * learned agents per copy)
    n_timesteps:    training budget in entry-steps
    seed:           the one seed of the run (torch, numpy, env copies seed + i)
    normalize:      false, true, or VecNormalize kwargs merged into the defaults
                    {norm_obs: true, norm_reward: false} (unknown keys are errors)
    hyperparams:    passed verbatim to the SB3 algorithm
    policy_kwargs:  plain map; activation_fn by name (tanh, relu, elu, leaky_relu, gelu, silu)
    torch_threads:  torch.set_num_threads
    checkpoint_freq: entry-steps between checkpoints
    eval:           {n_episodes, video}: the final comparison (on the evaluation suite's
                    frozen seeds 10_000.., which training never uses)

Examples::

    python train.py                                    # default config, ~10 min
    python train.py --config configs/train/circle_ppo.yaml --n-timesteps 20000 --seed 3
    python train.py --resume runs/circle_ppo_s0_20250101-120000   # continue to n_timesteps
"""

from __future__ import annotations

import argparse
import copy
import glob
import json
import os
import re
import shlex
import subprocess
import sys
import time
import warnings
from typing import Any

import yaml

ROOT = os.path.dirname(os.path.abspath(__file__))
DEFAULT_CONFIG = os.path.join(ROOT, "configs", "train", "circle_ppo.yaml")

#: Top-level keys of a training config and their defaults.
DEFAULTS: dict[str, Any] = {
    "env": {},
    "algo": "ppo",
    "n_envs": 8,
    "n_timesteps": 1_000_000,
    "seed": 0,
    "normalize": {"norm_obs": True, "norm_reward": False},
    "hyperparams": {},
    "policy_kwargs": {},
    "torch_threads": 1,
    "checkpoint_freq": 200_000,
    "eval": {"n_episodes": 20, "video": True},
}
EVAL_KEYS = {"n_episodes", "video"}
#: ``normalize: true`` means these VecNormalize arguments; a mapping is merged into them.
NORMALIZE_DEFAULTS = {"norm_obs": True, "norm_reward": False}
#: VecNormalize keyword arguments a ``normalize`` mapping may set.
NORMALIZE_KEYS = ("norm_obs", "norm_reward", "clip_obs", "clip_reward", "gamma", "epsilon")
#: A run folder's default name: ``<config name>_s<seed>_<YYYYmmdd-HHMMSS>[-<i>]``.
RUN_NAME = re.compile(r"^(?P<name>.+)_s-?\d+_\d{8}-\d{6}(?:-\d+)?$")
ACTIVATIONS = ("tanh", "relu", "elu", "leaky_relu", "gelu", "silu")


# -- config ------------------------------------------------------------------------------------
def load_train_config(path: str | None = None, **overrides: Any) -> dict:
    """Read a training config strictly and fill in the defaults.

    Args:
        path: YAML file (default: the default config).
        **overrides: Top-level keys replacing the file's values (``None`` values are ignored).

    Returns:
        The resolved config (a plain dict; ``env`` with a ``config`` base file merged in).

    Raises:
        ValueError: On an unknown key or a bad value (the message names the key).
    """
    path = path or DEFAULT_CONFIG
    with open(path, encoding="utf-8") as fh:
        data = yaml.safe_load(fh) or {}
    if not isinstance(data, dict):
        raise ValueError(f"training config {path!r} must be a mapping")
    unknown = sorted(set(data) - set(DEFAULTS))
    if unknown:
        raise ValueError(f"unknown training config key {unknown[0]!r} in {path!r}; valid keys: "
                         f"{sorted(DEFAULTS)}")
    cfg = copy.deepcopy(DEFAULTS)
    cfg.update(copy.deepcopy(data))
    cfg.update({k: v for k, v in overrides.items() if v is not None})
    ev = dict(DEFAULTS["eval"])
    if not isinstance(cfg["eval"], dict) or set(cfg["eval"]) - EVAL_KEYS:
        raise ValueError(f"training config key 'eval' must be a mapping with keys "
                         f"{sorted(EVAL_KEYS)}, got {cfg['eval']!r}")
    ev.update(cfg["eval"])
    cfg["eval"] = ev
    env = cfg["env"]
    if not isinstance(env, dict):
        raise ValueError(f"training config key 'env' must be a mapping, got {env!r}")
    if "config" in env:  # a base env YAML, relative to the repo root or the config file
        base_path = env["config"]
        for cand in (base_path, os.path.join(ROOT, base_path),
                     os.path.join(os.path.dirname(os.path.abspath(path)), base_path)):
            if os.path.isfile(cand):
                with open(cand, encoding="utf-8") as fh:
                    base = yaml.safe_load(fh) or {}
                break
        else:
            raise ValueError(f"training config key 'env.config': no file {base_path!r}")
        rest = {k: v for k, v in env.items() if k != "config"}
        cfg["env"] = _deep_merge(base, rest)
    from orca_env.config import load_config  # noqa: PLC0415  (validates the env section)

    load_config(cfg["env"])
    for key in ("n_envs", "n_timesteps", "torch_threads", "checkpoint_freq"):
        if isinstance(cfg[key], bool) or not isinstance(cfg[key], int) or cfg[key] < 1:
            raise ValueError(f"training config key {key!r} must be a positive integer, "
                             f"got {cfg[key]!r}")
    if isinstance(cfg["seed"], bool) or not isinstance(cfg["seed"], int):
        raise ValueError(f"training config key 'seed' must be an integer, got {cfg['seed']!r}")
    if cfg["algo"] not in ("ppo", "sac"):
        raise ValueError(f"training config key 'algo' must be ppo or sac, got {cfg['algo']!r}")
    for key in ("hyperparams", "policy_kwargs"):
        if not isinstance(cfg[key], dict):
            raise ValueError(f"training config key {key!r} must be a mapping")
    act = cfg["policy_kwargs"].get("activation_fn")
    if act is not None and act not in ACTIVATIONS:
        raise ValueError(f"policy_kwargs.activation_fn must be one of {list(ACTIVATIONS)}, "
                         f"got {act!r}")
    norm = cfg["normalize"]
    if not isinstance(norm, (bool, dict)):
        raise ValueError(f"training config key 'normalize' must be true, false or a mapping, "
                         f"got {norm!r}")
    if isinstance(norm, dict):
        unknown = sorted(set(norm) - set(NORMALIZE_KEYS))
        if unknown:
            raise ValueError(f"unknown key {unknown[0]!r} in training config key 'normalize'; "
                             f"valid keys: {list(NORMALIZE_KEYS)}")
        # Merged into the defaults: a partial mapping must not fall back to VecNormalize's own
        # defaults (norm_reward=True).
        cfg["normalize"] = {**NORMALIZE_DEFAULTS, **norm}
    elif norm:
        cfg["normalize"] = dict(NORMALIZE_DEFAULTS)
    ev = cfg["eval"]
    if isinstance(ev["n_episodes"], bool) or not isinstance(ev["n_episodes"], int) \
            or ev["n_episodes"] < 1:
        raise ValueError(f"training config key 'eval.n_episodes' must be a positive integer, "
                         f"got {ev['n_episodes']!r}")
    if not isinstance(ev["video"], bool):
        raise ValueError(f"training config key 'eval.video' must be true or false, "
                         f"got {ev['video']!r}")
    return cfg


def _deep_merge(base: dict, over: dict) -> dict:
    out = dict(base)
    for k, v in over.items():
        out[k] = _deep_merge(out[k], v) if isinstance(out.get(k), dict) and isinstance(v, dict) \
            else v
    return out


def policy_kwargs_from_config(pk: dict) -> dict:
    """SB3 ``policy_kwargs`` from the plain map: ``activation_fn`` by name, no ``eval``."""
    import torch.nn as nn  # noqa: PLC0415

    out = copy.deepcopy(pk)
    names = {"tanh": nn.Tanh, "relu": nn.ReLU, "elu": nn.ELU, "leaky_relu": nn.LeakyReLU,
             "gelu": nn.GELU, "silu": nn.SiLU}
    if "activation_fn" in out:
        out["activation_fn"] = names[out["activation_fn"]]
    return out


def without_safety_layer(env_cfg: dict) -> dict:
    """The env config with ``safety_layer: false`` for every learned group."""
    from orca_env import OrcaEnv  # noqa: PLC0415

    out = copy.deepcopy(env_cfg)
    groups = out.get("groups")
    if groups is None:  # the scenario's default groups
        groups = [dict(g) for g in OrcaEnv(out).scenario.DEFAULT_GROUPS]
    out["groups"] = [dict(g, safety_layer=False) if g.get("population", "learned") == "learned"
                     else dict(g) for g in groups]
    return out


# -- run folder --------------------------------------------------------------------------------
def git_info() -> dict:
    """Commit hash and dirty flag of the repository (``unknown`` outside git)."""
    def run(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True,
                              timeout=10).stdout.strip()
    try:
        commit = run("rev-parse", "HEAD") or "unknown"
        dirty = bool(run("status", "--porcelain", "--untracked-files=no"))
    except (OSError, subprocess.SubprocessError):
        commit, dirty = "unknown", False
    return {"commit": commit, "dirty": dirty}


def new_run_dir(cfg: dict, config_path: str, runs_root: str) -> str:
    """``<runs_root>/<config name>_s<seed>_<YYYYmmdd-HHMMSS>`` (suffixed if it exists)."""
    name = os.path.splitext(os.path.basename(config_path))[0]
    base = os.path.join(runs_root, f"{name}_s{cfg['seed']}_{time.strftime('%Y%m%d-%H%M%S')}")
    path, i = base, 1
    while os.path.exists(path):
        path, i = f"{base}-{i}", i + 1
    return path


def run_name(run_dir: str) -> str:
    """The config name of a run folder: ``name.txt`` if written, else parsed from the folder name.

    The default folder name is ``<name>_s<seed>_<YYYYmmdd-HHMMSS>[-<i>]``; the suffix is matched
    at the end, so names containing ``_s`` (``crowdnav_square_ppo``) survive. A folder named
    otherwise (``--run-dir``) without ``name.txt`` keeps its own name.
    """
    path = os.path.join(run_dir, "name.txt")
    if os.path.isfile(path):
        with open(path, encoding="utf-8") as fh:
            name = fh.read().strip()
        if name:
            return name
    base = os.path.basename(os.path.normpath(run_dir))
    m = RUN_NAME.match(base)
    return m.group("name") if m else base


def latest_checkpoint(run_dir: str) -> tuple[str, str, str] | None:
    """The newest checkpoint (or the final model, if newer) of a run, or ``None``.

    Returns:
        ``(model zip, vecnormalize pkl, replay buffer pkl)``: the two ``.pkl`` are where they
        belong to that model; they may not exist (the caller decides whether they must).
    """
    final = os.path.join(run_dir, "model.zip")
    final_extra = (os.path.join(run_dir, "vecnormalize.pkl"),
                   os.path.join(run_dir, "replay_buffer.pkl"))
    ckpts = glob.glob(os.path.join(run_dir, "checkpoints", "rl_model_*_steps.zip"))
    if ckpts:
        steps = {int(re.search(r"_(\d+)_steps\.zip$", c).group(1)): c for c in ckpts}
        n = max(steps)
        if os.path.isfile(final) and os.path.getmtime(final) > os.path.getmtime(steps[n]):
            return (final, *final_extra)
        ck = os.path.join(run_dir, "checkpoints")
        return (steps[n], os.path.join(ck, f"rl_model_vecnormalize_{n}_steps.pkl"),
                os.path.join(ck, f"rl_model_replay_buffer_{n}_steps.pkl"))
    if os.path.isfile(final):
        return (final, *final_extra)
    return None


# -- training ----------------------------------------------------------------------------------
def make_training_env(cfg: dict):
    """The training ``VecEnv``: adapter -> VecMonitor -> (VecNormalize)."""
    from stable_baselines3.common.vec_env import VecMonitor, VecNormalize  # noqa: PLC0415

    from orca_env.wrappers import make_vec_env  # noqa: PLC0415

    base = make_vec_env(cfg["env"], cfg["n_envs"])
    venv = VecMonitor(base)
    norm = cfg["normalize"]
    if norm:
        kwargs = dict(NORMALIZE_DEFAULTS) if norm is True else {**NORMALIZE_DEFAULTS, **norm}
        kwargs.setdefault("gamma", cfg["hyperparams"].get("gamma", 0.99))
        venv = VecNormalize(venv, **kwargs)
    return venv, base


def train(cfg: dict, run_dir: str, resume: tuple[str, ...] | None = None,
          progress_bar: bool = True) -> dict:
    """Train per ``cfg`` into ``run_dir``; returns the training statistics.

    Args:
        cfg: The resolved training config.
        run_dir: The run folder.
        resume: ``(model zip, vecnormalize pkl, replay buffer pkl)`` to continue from (see
            :func:`latest_checkpoint`); the replay buffer is optional.
        progress_bar: Show SB3's progress bar.

    Raises:
        ValueError: If the env copies would use evaluation seeds.
        FileNotFoundError: On resume, if ``cfg`` normalises and the normaliser is missing.
    """
    import torch  # noqa: PLC0415
    from stable_baselines3 import PPO, SAC  # noqa: PLC0415
    from stable_baselines3.common.callbacks import CheckpointCallback  # noqa: PLC0415
    from stable_baselines3.common.vec_env import VecNormalize  # noqa: PLC0415

    from orca_env.evaluation import is_eval_seed  # noqa: PLC0415

    train_seeds = range(cfg["seed"], cfg["seed"] + cfg["n_envs"])
    if any(is_eval_seed(s) for s in train_seeds):
        raise ValueError(f"seed {cfg['seed']}: training would reset env copies with seeds "
                         f"{train_seeds.start}..{train_seeds.stop - 1}, which overlap the "
                         f"evaluation seeds 10_000..19_999; pick another seed")
    torch.set_num_threads(cfg["torch_threads"])
    algo_cls = {"ppo": PPO, "sac": SAC}[cfg["algo"]]
    venv, base = make_training_env(cfg)
    try:
        import tensorboard  # noqa: F401, PLC0415

        tb = os.path.join(run_dir, "tb")
    except ImportError:
        tb = None
        print("tensorboard is not installed: no TensorBoard logs")
    if resume is not None:
        model_path, norm_path, buffer_path = (*resume, None, None)[:3]
        if isinstance(venv, VecNormalize):
            if norm_path is None or not os.path.isfile(norm_path):
                venv.close()
                raise FileNotFoundError(f"--resume: the config normalises (normalize: "
                                        f"{cfg['normalize']!r}) but the normaliser of "
                                        f"{model_path!r} is missing: expected {norm_path!r}")
            venv = VecNormalize.load(norm_path, venv.venv)
        model = algo_cls.load(model_path, env=venv, device="cpu", tensorboard_log=tb)
        if hasattr(model, "replay_buffer"):  # off-policy (SAC): continue with its buffer
            if buffer_path is not None and os.path.isfile(buffer_path):
                model.load_replay_buffer(buffer_path)
                print(f"Loaded the replay buffer {buffer_path} ({model.replay_buffer.size()} "
                      f"transitions)")
            else:
                warnings.warn(f"--resume: no replay buffer at {buffer_path!r}; {cfg['algo']} "
                              f"continues with an empty one", stacklevel=2)
        # Fresh env episodes on resume, still seeded (far from the evaluation seeds 10_000+).
        venv.seed(cfg["seed"] + 1_000_000 + model.num_timesteps)
        print(f"Resuming from {model_path} at {model.num_timesteps} timesteps")
    else:
        model = algo_cls("MlpPolicy", venv, seed=cfg["seed"], device="cpu", tensorboard_log=tb,
                         policy_kwargs=policy_kwargs_from_config(cfg["policy_kwargs"]),
                         verbose=0, **cfg["hyperparams"])
    remaining = cfg["n_timesteps"] - model.num_timesteps
    ckpt = CheckpointCallback(save_freq=max(cfg["checkpoint_freq"] // venv.num_envs, 1),
                              save_path=os.path.join(run_dir, "checkpoints"),
                              save_vecnormalize=True, save_replay_buffer=True)
    start_steps = model.num_timesteps
    t0 = time.perf_counter()
    if remaining > 0:
        model.learn(total_timesteps=remaining, callback=ckpt, progress_bar=progress_bar,
                    reset_num_timesteps=resume is None, tb_log_name="ppo" if cfg["algo"] ==
                    "ppo" else "sac")
    wall = time.perf_counter() - t0
    model.save(os.path.join(run_dir, "model.zip"))
    if getattr(model, "replay_buffer", None) is not None:
        model.save_replay_buffer(os.path.join(run_dir, "replay_buffer.pkl"))
    if isinstance(venv, VecNormalize):
        venv.save(os.path.join(run_dir, "vecnormalize.pkl"))
    done = model.num_timesteps - start_steps
    stats = {
        "timesteps": int(model.num_timesteps),
        "timesteps_this_run": int(done),
        "wall_seconds": round(wall, 2),
        "samples_per_second": round(done / wall, 1) if wall > 0 else None,
        "live_agent_samples_per_second": round(base.agent_steps / wall, 1) if wall > 0 else None,
        "live_fraction": round(base.live_fraction, 4),
        "env_seconds": round(base.step_seconds, 2),
        "env_share_of_wall": round(base.step_seconds / wall, 4) if wall > 0 else None,
        "env_only_samples_per_second": round(base.entry_steps / base.step_seconds, 1)
        if base.step_seconds > 0 else None,
    }
    venv.close()
    return stats


def print_throughput(stats: dict) -> None:
    """The training throughput lines printed at the end of every run."""
    if not stats.get("timesteps_this_run"):
        print("No training steps in this run.")
        return
    print(f"Training throughput: {stats['samples_per_second']:,.0f} env samples/s during "
          f"{stats['algo'].upper()} ({stats['timesteps_this_run']:,} samples in "
          f"{stats['wall_seconds']:.0f} s; live agents {stats['live_fraction']:.0%} of samples, "
          f"{stats['live_agent_samples_per_second']:,.0f}/s).")
    print(f"Env side: {stats['env_seconds']:.0f} s of {stats['wall_seconds']:.0f} s "
          f"({stats['env_share_of_wall']:.0%}); the env alone steps "
          f"{stats['env_only_samples_per_second']:,.0f} samples/s, so the "
          f"{'env' if stats['env_share_of_wall'] > 0.5 else 'learner'} is the bottleneck.")


# -- evaluation --------------------------------------------------------------------------------
def _row(report: dict) -> dict:
    """``{metric: "mean [low, high]" or "mean +-half"}`` strings of a report's aggregate.

    Rates show their 95% interval's bounds (Wilson or clipped Student-t), the rest the Student-t
    half-width (``orca_env.evaluation.format_ci``); ``-`` when undefined.
    """
    from orca_env.evaluation import format_ci  # noqa: PLC0415

    out = {}
    for key, a in report["aggregate"].items():
        if a["mean"] is None:
            out[key] = "-"
        else:
            ci = format_ci(a, digits=2)
            out[key] = f"{a['mean']:.3g}" + ("" if ci == "-" else f" {ci}")
    return out


def format_comparison(reports: dict[str, dict]) -> str:
    """Policies as columns, the evaluation suite's metrics as rows (mean and 95% CI)."""
    names = list(reports)
    rows = {n: _row(r) for n, r in reports.items()}
    keys = list(next(iter(reports.values()))["aggregate"])
    units = next(iter(reports.values()))["metrics"]
    w0 = max(len(k) for k in keys) + 2
    ws = [max([len(n)] + [len(rows[n][k]) for k in keys]) for n in names]
    cols = list(zip(names, ws, strict=True))
    lines = ["  ".join(["metric".ljust(w0)] + [n.rjust(w) for n, w in cols] + ["unit"])]
    lines.append("-" * len(lines[0]))
    for k in keys:
        lines.append("  ".join([k.ljust(w0)] + [rows[n][k].rjust(w) for n, w in cols]
                               + [units[k]["unit"]]))
    return "\n".join(lines)


def compare(cfg: dict, run_dir: str, video: bool = True) -> dict:
    """Evaluate the three policies on held-out seeds; print and save the table and a video.

    Uses :func:`orca_env.evaluation.evaluate` on its frozen evaluation seeds (``10_000 +``,
    never used by training) for: the trained policy with the ORCA safety layer, pure ORCA
    (``policies.orca``: goal-directed preferred velocity with seeded noise) and the trained
    policy without the safety layer (``safety_layer: false`` for the learned groups).
    """
    import policies.sb3  # noqa: PLC0415
    from orca_env.evaluation import eval_seeds, evaluate  # noqa: PLC0415
    from policies.orca import OrcaPolicy  # noqa: PLC0415

    out_dir = os.path.join(run_dir, "eval")
    seeds = eval_seeds(int(cfg["eval"]["n_episodes"]))
    trained = policies.sb3.load(run_dir)
    runs = [("trained+safety", "trained_safety", trained, cfg["env"]),
            ("pure ORCA", "orca", OrcaPolicy(), cfg["env"]),
            ("trained, no safety", "trained_no_safety", trained,
             without_safety_layer(cfg["env"]))]
    want_video = video and cfg["eval"].get("video", True)
    reports = {}
    for label, sub, pol, env_cfg in runs:
        t0 = time.perf_counter()
        # The video is drawn from the episode's log afterwards, so a missing video backend
        # costs the video only, never a second evaluation.
        logs = 1 if want_video and sub == "trained_safety" else 0
        reports[label] = evaluate(env_cfg, pol, seeds=seeds, out_dir=os.path.join(out_dir, sub),
                                  logs=logs)
        print(f"  evaluated {label!r} on {len(seeds)} seeds in {time.perf_counter() - t0:.1f} s")
        if logs:
            _video_from_log(os.path.join(out_dir, sub), seeds[0])
    header = (f"Held-out evaluation seeds {seeds[0]}..{seeds[-1]} ({len(seeds)} episodes), "
              f"scenario {reports['pure ORCA']['config']['scenario']}; mean and 95% CI "
              f"([low, high] for rates: Wilson for all_success, Student-t clipped to [0, 1] "
              f"for fractions; +- Student-t half-width otherwise):")
    table = format_comparison(reports)
    print(header)
    print(table)
    with open(os.path.join(out_dir, "comparison.txt"), "w", encoding="utf-8") as fh:
        fh.write(header + "\n" + table + "\n")
    with open(os.path.join(out_dir, "comparison.json"), "w", encoding="utf-8") as fh:
        json.dump({label: {"policy": r["policy"], "aggregate": r["aggregate"]}
                   for label, r in reports.items()}, fh, indent=1, sort_keys=True)
    vids = glob.glob(os.path.join(out_dir, "trained_safety", "videos", "*"))
    if vids:
        print(f"Video: {vids[0]}")
    return reports


def _video_from_log(eval_dir: str, seed: int) -> str | None:
    """Render ``<eval_dir>/logs/episode_<seed>.npz`` to ``videos/episode_<seed>.mp4``.

    Only a missing or failing video backend (pygame, imageio, ffmpeg: import, OS and pygame
    errors) is caught: the numbers stand without the video. Returns the path, or ``None``.
    """
    from orca_env.evaluation.episode_log import replay  # noqa: PLC0415

    try:
        return replay(os.path.join(eval_dir, "logs", f"episode_{seed}.npz"),
                      video=os.path.join(eval_dir, "videos", f"episode_{seed}.mp4"))
    except (ImportError, OSError, RuntimeError) as exc:  # pygame.error is a RuntimeError
        print(f"No video ({type(exc).__name__}: {exc}); the evaluation stands without it")
        return None


# -- CLI ---------------------------------------------------------------------------------------
def _positive(value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {value!r}")
    return n


def main(argv: list[str] | None = None) -> dict:
    """Command-line entry point; returns a summary dict (for tests)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", default=None, help="training YAML (default: %(default)s -> "
                   "configs/train/circle_ppo.yaml)")
    p.add_argument("--run-dir", default=None, help="run folder (default: runs/<name>_s<seed>_"
                   "<time>)")
    p.add_argument("--runs-root", default=os.path.join(ROOT, "runs"))
    p.add_argument("--resume", default=None, metavar="RUN_DIR",
                   help="continue the run in RUN_DIR from its newest checkpoint")
    p.add_argument("--n-timesteps", type=_positive, default=None, help="override n_timesteps")
    p.add_argument("--n-envs", type=_positive, default=None, help="override n_envs")
    p.add_argument("--seed", type=int, default=None, help="override seed")
    p.add_argument("--eval-episodes", type=_positive, default=None,
                   help="override eval.n_episodes (>= 1)")
    p.add_argument("--no-eval", action="store_true", help="skip the final comparison")
    p.add_argument("--no-video", action="store_true", help="skip the video")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--ship", action="store_true",
                   help="copy the result to policies/trained/<config name> (the shipped policy)")
    args = p.parse_args(argv)

    resume = None
    if args.resume:
        run_dir = args.resume
        cfg_path = os.path.join(run_dir, "config.yaml")
        cfg = load_train_config(cfg_path, n_timesteps=args.n_timesteps)
        resume = latest_checkpoint(run_dir)
        if resume is None:
            raise SystemExit(f"--resume: no checkpoint or model in {run_dir!r}")
        config_name = run_name(run_dir)
    else:
        cfg_path = args.config or DEFAULT_CONFIG
        cfg = load_train_config(cfg_path, n_timesteps=args.n_timesteps, n_envs=args.n_envs,
                                seed=args.seed)
        run_dir = args.run_dir or new_run_dir(cfg, cfg_path, args.runs_root)
        config_name = os.path.splitext(os.path.basename(cfg_path))[0]
    if args.eval_episodes is not None:
        cfg["eval"]["n_episodes"] = args.eval_episodes
    os.makedirs(run_dir, exist_ok=True)
    with open(os.path.join(run_dir, "name.txt"), "w", encoding="utf-8") as fh:
        fh.write(config_name + "\n")
    with open(os.path.join(run_dir, "config.yaml"), "w", encoding="utf-8") as fh:
        yaml.safe_dump(cfg, fh, sort_keys=False)
    with open(os.path.join(run_dir, "command.txt"), "a", encoding="utf-8") as fh:
        fh.write(shlex.join([sys.executable, *sys.argv]) + "\n")
    with open(os.path.join(run_dir, "git.txt"), "w", encoding="utf-8") as fh:
        gi = git_info()
        fh.write(f"commit: {gi['commit']}\ndirty: {str(gi['dirty']).lower()}\n")
    print(f"Run folder: {run_dir}")

    t_all = time.perf_counter()
    stats = train(cfg, run_dir, resume=resume, progress_bar=not args.no_progress)
    stats["algo"] = cfg["algo"]
    with open(os.path.join(run_dir, "train_stats.json"), "w", encoding="utf-8") as fh:
        json.dump(stats, fh, indent=1)
    results = None
    if not args.no_eval:
        results = compare(cfg, run_dir, video=not args.no_video)
    if args.ship:
        ship(run_dir, config_name)
    print_throughput(stats)
    print(f"Total wall time {time.perf_counter() - t_all:.0f} s; run folder {run_dir}")
    return {"run_dir": run_dir, "stats": stats, "results": results}


#: Files of a run that ``--ship`` copies (run folder, then its ``eval/``).
SHIP_FILES = ("model.zip", "config.yaml", "vecnormalize.pkl", "git.txt", "command.txt")
SHIP_EVAL_FILES = ("comparison.txt", "comparison.json")


def ship(run_dir: str, name: str, root: str | None = None) -> str:
    """Replace ``<root>/policies/trained/<name>`` with the model, config and normaliser of a run.

    The files go to a temporary folder next to the destination, which then takes the
    destination's place, so nothing of an earlier shipment survives (an old
    ``vecnormalize.pkl`` next to a model trained without normalisation would be loaded with it).

    Args:
        run_dir: The run folder.
        name: The shipped policy's name.
        root: Repository root (default: this file's folder).

    Returns:
        The destination folder.
    """
    import shutil  # noqa: PLC0415
    import tempfile  # noqa: PLC0415

    parent = os.path.join(root or ROOT, "policies", "trained")
    dest = os.path.join(parent, name)
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=f".{name}-", dir=parent)
    try:
        for src_dir, files in ((run_dir, SHIP_FILES),
                               (os.path.join(run_dir, "eval"), SHIP_EVAL_FILES)):
            for f in files:
                if os.path.isfile(os.path.join(src_dir, f)):
                    shutil.copy2(os.path.join(src_dir, f), os.path.join(tmp, f))
        os.chmod(tmp, 0o755)  # mkdtemp makes it private
        old = None
        if os.path.exists(dest):
            old = tempfile.mkdtemp(prefix=f".{name}-old-", dir=parent)
            os.rename(dest, os.path.join(old, name))
        os.rename(tmp, dest)
        tmp = None
        if old is not None:
            shutil.rmtree(old)
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    print(f"Shipped to {dest}")
    return dest


if __name__ == "__main__":
    main()
