"""Reproducible evaluation of a policy on a scenario config: seeds, policies, episodes, reports.

:func:`evaluate` runs a policy on the frozen evaluation seeds (:func:`eval_seeds`), one env
reset per seed, and reports metrics per episode and in aggregate (mean with a 95% confidence
interval; the definitions are in :mod:`orca_env.evaluation.metrics`). The report is plain JSON
data; :func:`~orca_env.evaluation.metrics.report_json` serialises it canonically, so the same
policy, config and seeds give the same bytes on every run and every machine that produces the
same simulation (the core is deterministic and independent of the thread count; nothing in the
report depends on wall-clock time, paths or the host).

Evaluation seeds
----------------
Episode ``k`` of an evaluation uses seed ``EVAL_SEED_BASE + k`` = 10_000 + k. Seeds
``10_000 .. 19_999`` (``EVAL_SEEDS``) are reserved for evaluation: training and tuning must
never reset an env with them (check with :func:`is_eval_seed`). Episodes are independent of one
another (each resets with its own seed, and the random policy reseeds from it), so the first
``N`` episodes of a longer evaluation are the same episodes.

Policies
--------
A policy is any callable ``policy(observations, env) -> actions`` (see :data:`Policy`):

* ``observations`` is the dict the env returned last (``{agent: observation}``), ``env`` the
  ``OrcaEnv`` itself (for ``env.agents``, ``env.action_space(agent)``, ``env.sim``, ...);
* it returns ``{agent: action}`` whose keys are exactly ``env.agents`` (the live agents at this
  step: agents that finished have left it), each action a ``(2,)`` float array in ``[-1, 1]``.

It may define ``reset(seed: int)``, called before every episode with the episode's seed (for
any randomness of its own), and ``name``. Known by name (:data:`NAMED_POLICIES`): ``orca``
(``env.heuristic_actions()``: pure ORCA with the safety layer), ``orca_margin`` (the same with
the 0.10 m safety margin the shipped generalists deploy with,
:data:`~orca_env.baselines.ORCA_MARGIN`: the reference that tells what learning adds to the
margin), ``random`` (uniform actions in the box, seeded per episode), and the published
baselines ``cadrl`` and ``ga3c_cadrl``
(:mod:`orca_env.policies.cadrl`; they need ``pip install --no-deps
gym-collision-avoidance==0.0.3`` for their weights).
Anything else is a dotted path ``package.module:attribute`` (or ``package.module.attribute``) to
a policy: a function (or any callable object) is used as it is, a class is instantiated with no
arguments (``attribute()``) and the instance is the policy. With ``model`` the attribute is a
*loader*, called as ``loader(model_path: str, env) -> policy`` (the saved-model loaders in
``orca_env.policies`` follow this interface). A spec that is an existing file or folder
(``run/model.zip``, ``run/``) is a model for the default loader :data:`DEFAULT_LOADER`; the
names come first, so a folder called ``orca`` or ``cadrl`` never shadows them (pass
``./orca`` for such a folder).

Example (``mypolicies.py`` on the Python path, then ``--policy mypolicies:still``)::

    import numpy as np

    def still(observations, env):
        return {agent: np.zeros(2, dtype=np.float32) for agent in env.agents}

A dotted path is the plug-in mechanism, and it runs arbitrary code: the module is imported
(executing its top level) and the attribute is called (or instantiated), with the privileges of
the process. Only pass dotted paths to code you trust. Model files are loaded by their loader
(the default one reads stable-baselines3 ``.zip`` files), so trust them as you trust the loader.
"""

from __future__ import annotations

import importlib
import inspect
import math
import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import __version__
from ..baselines import ORCA_MARGIN, OrcaMarginPolicy, OrcaPolicy, RandomPolicy
from ..codes import STATUSES, Population, Status
from ..config import apply_policy_settings
from ..environment import OrcaEnv
from ..files import atomic_write_text, remove_stale_temps
from ..policies import TRAINED_DIR
from ..render import require_imageio, require_pygame
from ..training.config import DEPLOY_KEYS
from ..training.run_folder import model_label  # the loaders name their policies with it too
from .episode_log import EpisodeRecorder, check_size, replay, snapshot
from .metrics import (
    ARRIVAL_TIMES,
    METRICS,
    OVERLAP_METRICS,
    aggregate,
    report_json,
    social_metric_definitions,
    write_csv,
)
from .plots import plot_trajectories, require_matplotlib
from .social import DISCOMFORT_DISTANCE, PERSONAL_SPACE, SocialRecorder, check_personal_space

__all__ = ["EVAL_SEED_BASE", "EVAL_SEEDS", "DEFAULT_LOADER", "REPORT_FORMAT", "Policy",
           "OrcaPolicy", "RandomPolicy", "eval_seeds", "is_eval_seed", "resolve_policy",
           "run_episode", "evaluate", "prepare_out_dir", "check_extras", "policy_observation",
           "policy_settings", "policy_deploy", "shipped_policies", "NAMED_POLICIES",
           "is_named_policy"]

#: First evaluation seed; episode k uses EVAL_SEED_BASE + k.
EVAL_SEED_BASE = 10_000
#: Seeds reserved for evaluation: training must never use them.
EVAL_SEEDS = range(EVAL_SEED_BASE, EVAL_SEED_BASE + 10_000)
#: Loader used when the policy spec is a model file.
DEFAULT_LOADER = "orca_env.policies:load_policy"
REPORT_FORMAT = "orca-env-eval/1"

#: ``policy(observations, env) -> actions``: observations and actions are dicts keyed by the
#: live agents (the actions' keys must be exactly ``env.agents``); actions are (2,) arrays in
#: [-1, 1].
Policy = Callable[[dict, Any], dict]

# Status names as the env reports them in infos.
_ACTIVE, _AT_GOAL = STATUSES[Status.ACTIVE], STATUSES[Status.AT_GOAL]
_TIMED_OUT, _DEADLOCKED = STATUSES[Status.TIMED_OUT], STATUSES[Status.DEADLOCKED]


def eval_seeds(n: int, start: int = 0) -> list[int]:
    """The frozen evaluation seeds of episodes ``start .. start + n - 1``.

    Raises:
        ValueError: If the episodes leave the reserved range (10_000 episodes).
    """
    if not (isinstance(n, int) and n >= 0 and isinstance(start, int) and start >= 0):
        raise ValueError(f"eval_seeds needs integers n >= 0 and start >= 0, got {n!r}, {start!r}")
    if start + n > len(EVAL_SEEDS):
        raise ValueError(f"at most {len(EVAL_SEEDS)} evaluation episodes, asked for "
                         f"{start}..{start + n - 1}")
    return [EVAL_SEED_BASE + start + k for k in range(n)]


def is_eval_seed(seed: int) -> bool:
    """Whether ``seed`` is reserved for evaluation (training code should assert it is not)."""
    return seed in EVAL_SEEDS


# -- policies (the built-ins live in orca_env.baselines) ----------------------------------------
#: Policies known by name (``--policy NAME``): the class, or the ``module:class`` path of one
#: loaded on first use, built with no arguments. ``cadrl`` and ``ga3c_cadrl`` are the published
#: baselines of :mod:`orca_env.policies.cadrl` (their weights come from gym-collision-avoidance).
#: The names come before files: a folder called ``orca`` or ``cadrl`` never shadows them.
NAMED_POLICIES: dict[str, Any] = {
    "orca": OrcaPolicy,
    "orca_margin": OrcaMarginPolicy,
    "random": RandomPolicy,
    "cadrl": "orca_env.policies.cadrl:CadrlPolicy",
    "ga3c_cadrl": "orca_env.policies.cadrl:Ga3cCadrlPolicy",
}
#: The env config keys a named policy needs (:func:`policy_settings`): the published
#: baselines pick velocities.
_NAMED_SETTINGS: dict[str, dict] = {"cadrl": {"action": "velocity"},
                                    "ga3c_cadrl": {"action": "velocity"},
                                    "orca_margin": {"learned_orca_padding": ORCA_MARGIN}}


def is_named_policy(spec: Any, model: Any = None) -> bool:
    """Whether ``spec`` is one of :data:`NAMED_POLICIES` (and no ``model`` is given)."""
    return isinstance(spec, str) and model is None and spec in NAMED_POLICIES


def _import_object(path: str) -> Any:
    mod_name, sep, attr = path.partition(":")
    if not sep:
        mod_name, _, attr = path.rpartition(".")
    if not mod_name or not attr:
        raise ValueError(f"policy {path!r}: expected {', '.join(map(repr, NAMED_POLICIES))}, "
                         f"a model file or run folder, a shipped policy "
                         f"({', '.join(shipped_policies())}) or a dotted path "
                         f"'package.module:attribute'")
    try:
        obj = importlib.import_module(mod_name)
    except ImportError as exc:
        raise ValueError(f"policy {path!r}: cannot import module {mod_name!r} ({exc})") from exc
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError as exc:
            raise ValueError(f"policy {path!r}: module {mod_name!r} has no attribute "
                             f"{attr!r}") from exc
    return obj


def shipped_policies() -> list[str]:
    """Names of the shipped trained policies (folders of ``orca_env.policies.trained``)."""
    return sorted(n for n in os.listdir(TRAINED_DIR)
                  if os.path.isfile(os.path.join(TRAINED_DIR, n, "config.yaml")))


def _model_path(spec: str) -> str | None:
    """The model file or run folder ``spec`` names, or ``None``.

    An existing path, else a shipped policy's name (``generalist``: found wherever the package
    is installed).
    """
    if os.path.isfile(spec) or os.path.isdir(spec):
        return spec
    return os.path.join(TRAINED_DIR, spec) if spec in shipped_policies() else None


def resolve_policy(spec: Any, model: str | os.PathLike | None = None,
                   env: Any = None) -> tuple[Policy, str]:
    """Turn a policy spec into ``(policy, name)``.

    Args:
        spec: A name of :data:`NAMED_POLICIES` (``"orca"``, ``"orca_margin"``, ``"random"``,
            ``"cadrl"``, ``"ga3c_cadrl"``; their env settings, such as ``orca_margin``'s margin,
            come from :func:`policy_settings`, which the env must be built with), a callable
            policy, a dotted path to one, a dotted path
            to a loader (with ``model``), or a model file or run folder (loaded by
            :data:`DEFAULT_LOADER`); a shipped policy by its name (``generalist``), unless a
            file or folder of that name is in the working directory.
        model: Path of a saved model, passed to the loader ``spec``.
        env: The env, passed to a loader (for its spaces).

    Returns:
        The policy and its label for the report: names and dotted paths as
        given; a model file, run folder or shipped policy for the default loader (named or
        not) by :func:`model_label` (``generalist``, the run folder's name); another loader
        as ``loader(<model file name>)``; a callable by its ``name`` or ``__name__``.
    """
    # The names first: a folder called "orca" or "random" in the cwd (train.py writes
    # runs/<x>/eval/orca/) must not shadow them.
    if is_named_policy(spec, model):
        factory = NAMED_POLICIES[spec]
        return (_import_object(factory) if isinstance(factory, str) else factory)(), spec
    path = _model_path(spec) if isinstance(spec, str) and model is None else None
    if path is not None:
        # A model file or a run folder (model.zip + normaliser), or a shipped policy's name,
        # for the default loader.
        spec, model = DEFAULT_LOADER, path
    elif isinstance(spec, str) and ":" not in spec and ("/" in spec or os.sep in spec
                                                       or spec.endswith(".zip")):
        # Looks like a path, not a dotted module name: say that it does not exist.
        raise ValueError(f"policy {spec!r}: no such model file or run folder")
    if isinstance(model, (str, os.PathLike)) and not os.path.exists(model):
        raise ValueError(f"--model {os.fspath(model)!r}: no such model file or run folder")
    name = spec if isinstance(spec, str) else getattr(spec, "name", None) or \
        getattr(spec, "__name__", type(spec).__name__)
    obj = _import_object(spec) if isinstance(spec, str) else spec
    if model is not None:
        if not callable(obj):
            raise ValueError(f"loader {spec!r} is not callable")
        _check_signature(obj, 2, f"loader {spec!r}", "loader(path, env) -> policy")
        policy = obj(os.fspath(model), env)
        name = (model_label(model) if spec == DEFAULT_LOADER
                else f"{name}({os.path.basename(os.fspath(model))})")
    elif isinstance(obj, type):
        _check_signature(obj, 0, f"policy class {spec!r}",
                         "a class instantiated with no arguments")
        policy = obj()
    else:
        policy = obj
    if not callable(policy):
        raise ValueError(f"policy {spec!r} is not callable: expected "
                         f"policy(observations, env) -> actions")
    _check_signature(policy, 2, f"policy {spec!r}", "policy(observations, env) -> actions")
    return policy, str(name)


def _check_signature(obj: Any, n: int, what: str, expected: str) -> None:
    """Refuse a callable that cannot be called with ``n`` positional arguments.

    A plug-in with the wrong signature would otherwise fail with a ``TypeError`` deep in the
    first episode. Callables whose signature Python cannot tell (some builtins) pass.

    Raises:
        ValueError: Naming ``what``, its signature and ``expected``.
    """
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return
    try:
        sig.bind(*range(n))
    except TypeError as exc:
        raise ValueError(f"{what} has the signature {sig}, which cannot be called as "
                         f"{expected} ({exc})") from None


def policy_settings(spec: Any, model: str | os.PathLike | None = None) -> dict | None:
    """Env config keys a policy needs from every env, before the env is built.

    A loader may define ``env_settings(model_path) -> dict | None``: the env config keys the
    model was trained with that must hold in any env it acts in (the default loader's
    :func:`orca_env.policies.env_settings`: its ``action`` mode and, for models trained with
    ``observation.layout: universal``, the ``observation`` settings). A loader with only the
    older hook ``observation_settings(model_path) -> dict | None`` gives ``{"observation":
    ...}``. :func:`evaluate` and ``orca-env bench`` apply them
    (:func:`orca_env.config.apply_policy_settings`; explicit ``overrides`` still win), so such a
    model runs on every config.

    Args:
        spec: As for :func:`resolve_policy`.
        model: As for :func:`resolve_policy`.

    Returns:
        The settings, or ``None`` (``orca``, ``random``, plain callables, loaders without a
        hook); ``{"action": "velocity"}`` for ``cadrl`` and ``ga3c_cadrl``;
        ``{"learned_orca_padding": 0.1}`` for ``orca_margin``.
    """
    if is_named_policy(spec, model):
        settings = _NAMED_SETTINGS.get(spec)
        return None if settings is None else dict(settings)
    found = _loader_hook(spec, model, ("env_settings", "observation_settings"))
    if found is None:
        return None
    name, settings = found
    if name == "observation_settings":
        return None if settings is None else {"observation": settings}
    return settings


def policy_deploy(spec: Any, model: str | os.PathLike | None = None) -> dict | None:
    """The part of :func:`policy_settings` that the policy's ``deploy`` section gives.

    From the loader's ``deploy_settings(model_path) -> dict | None`` hook (the default loader's
    :func:`orca_env.policies.deploy_settings`: the run config's ``deploy`` section, e.g.
    ``{"learned_orca_padding": 0.1}``). ``orca-env bench`` reports with it where a policy's
    deploy keys came from: a key of :func:`policy_settings` that is not here comes from the env
    config the model was trained with.

    Returns:
        The section, or ``None`` (no model, a loader without the hook, no ``deploy`` section);
        ``orca_margin``'s margin for it.
    """
    if is_named_policy(spec, model):
        # Its deploy keys (orca_margin's margin) act as a trained policy's section: --set
        # overrides them alike.
        deploy = {k: v for k, v in _NAMED_SETTINGS.get(spec, {}).items() if k in DEPLOY_KEYS}
        return deploy or None
    found = _loader_hook(spec, model, ("deploy_settings",))
    return None if found is None else found[1]


def _loader_hook(spec: Any, model: str | os.PathLike | None,
                 names: tuple[str, ...]) -> tuple[str, dict | None] | None:
    """``(name, hook(model))`` of the first of the loader's ``names`` hooks, or ``None``."""
    if not isinstance(spec, str) and model is None:
        return None
    if isinstance(spec, str) and model is None:
        path = _model_path(spec)
        if path is None:
            return None  # a dotted path to a policy: it has no model
        spec, model = DEFAULT_LOADER, path
    if not os.path.exists(model):
        return None  # resolve_policy reports the missing model
    loader = _import_object(spec) if isinstance(spec, str) else spec
    for name in names:
        hook = getattr(loader, name, None)
        if callable(hook):
            break
    else:
        return None
    settings = hook(os.fspath(model))
    if settings is not None and not isinstance(settings, dict):
        raise ValueError(f"loader {spec!r}: {name} must return a mapping of config keys or "
                         f"None, got {type(settings).__name__}")
    return name, settings


def policy_observation(spec: Any, model: str | os.PathLike | None = None) -> dict | None:
    """The ``observation`` part of :func:`policy_settings` (``None`` when it has none)."""
    settings = policy_settings(spec, model)
    return None if settings is None else settings.get("observation")


# -- one episode -------------------------------------------------------------------------------
def _nan_to_none(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


def run_episode(env: Any, policy: Policy, seed: int, *, recorder: EpisodeRecorder | None = None,
                debug_agent: int | None = None, overlap_metrics: bool = False,
                personal_space: float = PERSONAL_SPACE) -> dict:
    """Run one episode from ``env.reset(seed=seed)`` to its end; return its metrics.

    Args:
        env: An ``OrcaEnv``.
        policy: ``policy(observations, env) -> actions``; its ``reset(seed)`` is called first.
        seed: Reset seed.
        recorder: Receives a snapshot of every state (for logs, videos and plots); the
            statuses in it are the env's own (``env.render_data()["statuses"]``).
        debug_agent: Slot whose ORCA lines go into the snapshots.
        overlap_metrics: Add the overlap depth metrics
            (:data:`~orca_env.evaluation.metrics.OVERLAP_METRICS`).
        personal_space: Radius of ``personal_space_intrusion``, m of clearance (finite, >= 0).

    Returns:
        ``{"seed": seed, <metric>: value, ...}`` with the keys of :data:`METRICS` (and of
        ``OVERLAP_METRICS`` with ``overlap_metrics``), then of
        :data:`~orca_env.evaluation.metrics.SOCIAL_METRICS`; undefined values are ``None``.
        The social metrics are computed apart from the others, from the positions of every
        slot after each step (:class:`~orca_env.evaluation.social.SocialRecorder`), so adding
        them changed none of the other values.

    Raises:
        ValueError: If ``debug_agent`` is not a slot of the env, or ``personal_space`` is not
            a finite number >= 0.
    """
    check_personal_space(personal_space)
    obs, infos = env.reset(seed=seed)
    if hasattr(policy, "reset"):
        policy.reset(seed)
    data = env.render_data()
    # agent_k is the k-th learned slot, as in the env.
    slots = np.flatnonzero(np.asarray(data["populations"]) == Population.LEARNED)
    n_slots = int(np.asarray(data["populations"]).shape[0])
    if debug_agent is not None and not (isinstance(debug_agent, (int, np.integer))
                                        and 0 <= debug_agent < n_slots):
        raise ValueError(f"debug_agent {debug_agent!r} is not a slot of the env: expected an "
                         f"integer in 0 .. {n_slots - 1}")
    n_l = slots.size
    dt = float(env.time_step)
    d0 = np.array([infos[a]["distance_to_goal"] for a in env.possible_agents])
    travelled = np.zeros(n_l)
    hit_agent = np.zeros(n_l, dtype=bool)
    hit_obst = np.zeros(n_l, dtype=bool)
    reached_at = np.full(n_l, np.nan)
    final = [_ACTIVE] * n_l
    ret = np.zeros(n_l)
    min_sep = math.inf
    # Deepest overlap (m) of each learned agent at the end of a step (0: never touched).
    overlap = np.zeros(n_l)
    touched = np.zeros(n_l, dtype=bool)
    inter_sum, lp3_sum, agent_steps = 0.0, 0, 0
    index = {a: k for k, a in enumerate(env.possible_agents)}
    if recorder is not None:
        recorder.add(snapshot(env, 0, debug_agent, data=data))
    steps = 0
    prev = env.sim.positions[slots].copy()
    social = SocialRecorder(env.sim.positions, env.sim.active, data["populations"],
                            np.asarray(env.radii), slots, dt, learned_code=int(Population.LEARNED),
                            personal_space=personal_space)
    while env.agents:
        actions = policy(obs, env)
        obs, rewards, terms, truncs, infos = env.step(actions)
        steps += 1
        pos = env.sim.positions[slots]
        live = np.zeros(n_l, dtype=bool)
        for a, info in infos.items():
            k = index[a]
            live[k] = True
            travelled[k] += math.hypot(pos[k, 0] - prev[k, 0], pos[k, 1] - prev[k, 1])
            ret[k] += rewards[a]
            status = info["status"]
            final[k] = status
            if status == _AT_GOAL and math.isnan(reached_at[k]):
                reached_at[k] = steps * dt
            cw = info["collided_with"]
            if cw == "agent":
                hit_agent[k] = True
            elif cw == "obstacle":
                hit_obst[k] = True
            sep = info["nearest_separation"]
            if sep < min_sep:
                min_sep = sep
            if sep < 0.0:
                touched[k] = True
                overlap[k] = max(overlap[k], -sep)
            inter_sum += info["intervention"]
            lp3_sum += bool(info["used_lp3"])
            agent_steps += 1
        prev = pos.copy()
        social.add(env.sim.positions, env.sim.active, live)
        if recorder is not None:
            recorder.add(snapshot(env, steps, debug_agent))
    success = np.array([s == _AT_GOAL for s in final])
    ok = np.flatnonzero(success)
    collided = hit_agent | hit_obst
    out = {
        "seed": int(seed),
        "success_rate": float(success.mean()),
        "collision_rate": float(collided.mean()),
        "agent_collision_rate": float(hit_agent.mean()),
        "obstacle_collision_rate": float(hit_obst.mean()),
        "timeout_rate": float(np.mean([s == _TIMED_OUT for s in final])),
        "deadlock_rate": float(np.mean([s == _DEADLOCKED for s in final])),
        "all_success": float(success.all()),
        "time_to_goal": math.fsum(reached_at[ok]) / ok.size if ok.size else None,
        "makespan": float(reached_at.max()) if success.all() else None,
        "path_ratio": (math.fsum(travelled[ok] / np.maximum(d0[ok], 1e-9)) / ok.size
                       if ok.size else None),
        "min_separation": _nan_to_none(min_sep),
        "intervention": inter_sum / agent_steps if agent_steps else None,
        "lp3_rate": lp3_sum / agent_steps if agent_steps else None,
        "episode_return": math.fsum(ret) / n_l,
        "episode_steps": steps,
    }
    if overlap_metrics:
        radii = np.asarray(env.radii)[slots]  # this episode's (randomize_attributes)
        out["contact_rate"] = float(touched.mean())
        out["max_overlap"] = float(overlap.max())
        out["max_overlap_relative"] = float((overlap / radii).max())
    out.update(social.metrics(success, np.asarray(env.goals)[slots]))
    # Last, after the metrics (whose order reports keep): when each successful learned agent
    # arrived, None for the others, for the paired time-to-goal ratio
    # (metrics.paired_time_ratio). Not a metric (no aggregate, no CSV column): the per-episode
    # record that pairs agents between two policies' runs.
    out[ARRIVAL_TIMES] = [float(reached_at[k]) if success[k] else None for k in range(n_l)]
    return out


class _Progress:
    """Episode counter on stderr: a rewritten line on a terminal, a few lines otherwise."""

    def __init__(self, total: int, enabled: bool, label: str) -> None:
        self.total, self.enabled, self.label = total, enabled and total > 0, label
        self.t0 = time.perf_counter()
        self.tty = sys.stderr.isatty()
        self.every = max(1, total // 10)
        self.succ = 0.0

    def update(self, done: int, episode: dict) -> None:
        if not self.enabled:
            return
        self.succ += episode["success_rate"]
        if not self.tty and done % self.every and done != self.total:
            return
        el = time.perf_counter() - self.t0
        eta = el / done * (self.total - done)
        msg = (f"[{self.label}] {done}/{self.total} episodes  success {self.succ / done:.3f}  "
               f"{el:.1f}s elapsed  eta {eta:.1f}s")
        sys.stderr.write(("\r" + msg + " " * 4) if self.tty else msg + "\n")
        if self.tty and done == self.total:
            sys.stderr.write("\n")
        sys.stderr.flush()


# -- checks before the work -------------------------------------------------------------------
def check_no_links(out_dir: str | os.PathLike, subfolders: Sequence[str] = (),
                   arg: str = "out_dir") -> None:
    """Refuse a symbolic link on the way from ``out_dir`` to any of its ``subfolders``.

    A command writes inside its output folder only: a ``logs`` or ``entries`` subfolder that
    is a link would make it write through the link, outside the folder, so it is an error
    (nothing is created or changed). ``out_dir`` itself may be a link (the user named it).

    Args:
        out_dir: The output folder.
        subfolders: Paths relative to ``out_dir`` (``logs``, ``entries/circle/orca``); the
            parts that exist are checked.
        arg: The argument's name in messages (``--out`` on the command line).

    Raises:
        ValueError: Naming ``arg``, the folder and the link.
    """
    path = os.fspath(out_dir)
    for sub in subfolders:
        here = path
        for part in os.path.normpath(sub).split(os.sep):
            here = os.path.join(here, part)
            if os.path.islink(here):
                raise ValueError(f"{arg} {path!r}: {here!r} is a symbolic link (refused: "
                                 f"nothing is written through a link inside the output folder)")
            if not os.path.isdir(here):
                break


def prepare_out_dir(out_dir: str | os.PathLike, subfolders: Sequence[str] = (),
                    arg: str = "out_dir") -> str:
    """Create the output folder (and ``subfolders``) and check that files can be written there.

    Args:
        out_dir: The folder.
        subfolders: Subfolders to create too (``logs``, ``videos``); none may be a symbolic
            link (:func:`check_no_links`).
        arg: The argument's name in messages (``--out`` on the command line).

    Returns:
        ``out_dir`` as a string.

    Raises:
        ValueError: Naming ``arg`` and the path, if the folder cannot be created (a regular
            file in the way, no permission), is not writable, or a subfolder is a link.
    """
    path = os.fspath(out_dir)
    check_no_links(path, subfolders, arg)
    for folder in (path, *(os.path.join(path, sub) for sub in subfolders)):
        if os.path.exists(folder) and not os.path.isdir(folder):
            raise ValueError(f"{arg} {path!r}: {folder!r} exists and is not a folder")
        try:
            os.makedirs(folder, exist_ok=True)
        except OSError as exc:
            raise ValueError(f"{arg} {path!r}: cannot create the folder "
                             f"({exc.strerror or exc})") from None
    try:
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as exc:
        raise ValueError(f"{arg} {path!r}: the folder is not writable "
                         f"({exc.strerror or exc})") from None
    return path


#: The summary files :func:`evaluate` writes in its output folder.
SUMMARY_FILES = ("metrics.json", "episodes.csv", "trajectories.png")


def clear_earlier_run(out_dir: str, summary: Sequence[str] = SUMMARY_FILES,
                      subfolders: Sequence[str] = ("logs", "videos")) -> None:
    """Before the first episode into a reused output folder: remove what would contradict it.

    An earlier run's ``summary`` files would stand beside this run's logs, should it be
    stopped before it writes its own; they go now (a link is removed, never its target). The
    temporary files a killed earlier run left (:func:`orca_env.files.remove_stale_temps`, by
    their name pattern) go from ``out_dir`` and its ``subfolders`` that are real folders (no
    link is followed). Earlier logs and videos stay (this run overwrites those of its seeds).
    """
    for f in summary:
        p = os.path.join(out_dir, f)
        if os.path.islink(p) or os.path.isfile(p):
            os.remove(p)
    for folder in (out_dir, *(os.path.join(out_dir, sub) for sub in subfolders)):
        if os.path.isdir(folder) and not os.path.islink(folder):
            remove_stale_temps(folder)


def check_extras(*, videos: bool = False, plots: bool = False) -> None:
    """Check that the optional packages for videos and plots import, before any work.

    Raises:
        ImportError: Saying which extra to install (``pip install "orca-env[video]"``).
    """
    if videos:
        require_pygame()
        require_imageio()
    if plots:
        require_matplotlib()


# -- the whole evaluation ----------------------------------------------------------------------
def evaluate(config: Any, policy: Any = "orca", *, episodes: int = 20,
             seeds: Sequence[int] | None = None, model: str | os.PathLike | None = None,
             overrides: dict | None = None, out_dir: str | os.PathLike | None = None,
             videos: int = 0, trajectories: int = 0, logs: int = 0,
             debug_agent: int | None = None, video_size: int = 720, video_format: str = "mp4",
             progress: bool | str = False, log_dtype: Any = np.float32,
             name: str | None = None, overlap_metrics: bool | None = None,
             personal_space: float = PERSONAL_SPACE) -> dict:
    """Evaluate a policy on a config over the frozen evaluation seeds.

    Args:
        config: A YAML path, dict or ``EnvConfig`` (as ``OrcaEnv`` takes it).
        policy: See :func:`resolve_policy`. A model's ``action`` mode and, when it was
            trained with ``observation.layout: universal``, its observation settings are
            applied to the env first (:func:`policy_settings`), so it runs on any config.
        episodes: Number of episodes (seeds ``eval_seeds(episodes)``) when ``seeds`` is None.
        seeds: Explicit seeds (must all be evaluation seeds).
        model: A saved model, for a loader ``policy``.
        overrides: Config keys overriding ``config`` (nested sections merge), e.g.
            ``{"max_steps": 50}``; ``render_mode`` is always ``None``.
        out_dir: Folder for ``metrics.json``, ``episodes.csv`` and, on request, ``videos/``,
            ``logs/`` and ``trajectories.png``; ``None`` writes nothing. It is created and
            checked before the first episode; every file is written atomically (a temporary
            name, then a rename). A reused folder: once every check has passed, before the
            first episode, the earlier run's ``metrics.json``, ``episodes.csv`` and
            ``trajectories.png`` and the temporary files a killed run left are removed
            (:func:`clear_earlier_run`), so an interrupted run never leaves an earlier summary
            beside its own logs; a ``logs/`` or ``videos/`` subfolder that is a symbolic link
            is refused (:func:`check_no_links`), never written through.
        videos: Write a video of each of the first ``videos`` episodes (needs ``out_dir``).
        trajectories: Plot the first ``trajectories`` episodes into ``trajectories.png``.
        logs: Write an episode log of each of the first ``logs`` episodes (-1: all).
        debug_agent: Slot whose ORCA half-planes the videos and logs show (checked against the
            env's slots even when nothing is recorded).
        video_size: Long side of the video frames, pixels.
        video_format: ``mp4`` or ``gif``.
        progress: Print progress to stderr; a string is the progress line's label (default
            ``eval <policy name>``).
        log_dtype: Float type of the logs.
        name: The policy's name in the report, videos and plots (default: the spec, or the
            model's file name; see :func:`resolve_policy`).
        overlap_metrics: Report the overlap depth (``contact_rate``, ``max_overlap``,
            ``max_overlap_relative``: :data:`~orca_env.evaluation.metrics.OVERLAP_METRICS`).
            ``None`` (default): when the config (or an entry of a mixture) gives
            ``collision_tolerance`` in its size-aware mapping form (``{relative: 0.01}``);
            reports of the other configs keep the metrics they had before the overlap metrics
            existed.
        personal_space: Radius of the personal space, m of clearance to a human (surface to
            surface; finite, >= 0): ``personal_space_intrusion`` is the fraction of the learned
            agents' steps ending closer than this (default 0.5 m). The social-navigation
            metrics (:data:`~orca_env.evaluation.metrics.SOCIAL_METRICS`) are in every report,
            after the others, whose values they do not change.

    Returns:
        The report: ``format``, ``orca_env_version``, ``policy``, ``config`` (resolved),
        ``env`` (time step, step limit and agent counts after scenario defaults), ``seeds``,
        ``num_episodes``, ``metrics`` (unit and definition of each), ``aggregate``,
        ``episodes`` and ``social`` (the personal-space radius and CrowdNav's discomfort
        distance the social metrics used, m). It holds nothing that depends on the host or the
        time.

    Raises:
        ValueError: On a bad argument (the message names it): ``episodes`` below 1 or empty
            ``seeds``, a negative ``videos`` or
            ``trajectories``, ``logs`` below -1, a ``debug_agent`` that is not a slot, a seed
            outside the evaluation seeds, an unknown video format, a bad ``video_size``, a
            negative or non-finite ``personal_space``,
            extras without ``out_dir``, an ``out_dir`` that cannot be created or written, or an
            unusable policy. All of these are raised before the first episode.
        ImportError: If videos or trajectories are asked for without the video extra
            (pygame-ce, imageio, matplotlib); before the first episode.
    """
    for arg, value, least in (("videos", videos, 0), ("trajectories", trajectories, 0),
                              ("logs", logs, -1)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < least:
            raise ValueError(f"{arg} must be an integer >= {least}"
                             f"{' (-1: all)' if least < 0 else ''}, got {value!r}")
    personal_space = check_personal_space(personal_space)
    if video_format not in ("mp4", "gif"):
        raise ValueError(f"video_format must be 'mp4' or 'gif', got {video_format!r}")
    if videos:
        check_size("video_size", video_size)
    if seeds is None:
        if isinstance(episodes, bool) or not isinstance(episodes, (int, np.integer)) \
                or episodes < 1:
            raise ValueError(f"episodes must be an integer >= 1, got {episodes!r}")
        seeds = eval_seeds(int(episodes))
    seeds = [int(s) for s in seeds]
    if not seeds:
        raise ValueError("seeds: empty, nothing to evaluate (give at least one seed)")
    bad = [s for s in seeds if not is_eval_seed(s)]
    if bad:
        raise ValueError(f"seed {bad[0]} is not an evaluation seed (reserved range "
                         f"{EVAL_SEEDS.start}..{EVAL_SEEDS.stop - 1})")
    # Everything that can fail for want of a folder or a package fails now, before any episode.
    if out_dir is None and (videos or trajectories or logs):
        asked = [f"--{arg} {value}" for arg, value in (("videos", videos),
                 ("trajectories", trajectories), ("logs", "all" if logs < 0 else logs)) if value]
        raise ValueError(f"{', '.join(asked)}: videos, trajectories and logs need an output "
                         f"folder: pass --out DIR (out_dir=DIR)")
    if out_dir is not None:
        out_dir = prepare_out_dir(out_dir, [sub for sub, k in (("logs", logs), ("videos", videos))
                                            if k])
    check_extras(videos=bool(videos), plots=bool(trajectories))
    kwargs = dict(overrides or {})
    kwargs["render_mode"] = None
    # A model brings its action mode and (universal layout) observation settings to any config.
    kwargs = apply_policy_settings(kwargs, policy_settings(policy, model))
    env = OrcaEnv(config, **kwargs)
    pol, resolved_name = resolve_policy(policy, model, env)
    if overlap_metrics is None:
        overlap_metrics = any(isinstance(c.collision_tolerance, dict)
                              for c in env.config.entries())
    metrics = {**METRICS, **(OVERLAP_METRICS if overlap_metrics else {}),
               **social_metric_definitions(personal_space)}
    name = resolved_name if name is None else str(name)
    n_logs = len(seeds) if logs < 0 else logs
    n_rec = max(videos, trajectories, n_logs)
    if out_dir is not None:
        clear_earlier_run(out_dir)  # every check passed: the episodes start now
    cfg = env.config.to_dict()
    prog = _Progress(len(seeds), bool(progress),
                     progress if isinstance(progress, str) else f"eval {name}")
    rows, plotted = [], []
    fps = env.metadata["render_fps"]
    for k, seed in enumerate(seeds):
        rec = None
        if k < n_rec:
            title = f"policy {name}   scenario {cfg.get('scenario')}   seed {seed}"
            rec = EpisodeRecorder(cfg, seed, name, dtype=log_dtype,
                                  extra={"render_fps": fps, "title": title})
        row = run_episode(env, pol, seed, recorder=rec, debug_agent=debug_agent,
                          overlap_metrics=bool(overlap_metrics), personal_space=personal_space)
        rows.append(row)
        if rec is not None:
            log = rec.to_log()
            log.meta["metrics"] = row
            if k < n_logs:
                log.save(os.path.join(out_dir, "logs", f"episode_{seed}.npz"))
            if k < videos:
                replay(log, video=os.path.join(out_dir, "videos",
                                               f"episode_{seed}.{video_format}"),
                       fps=fps, size=video_size)
            if k < trajectories:
                plotted.append(log)
        prog.update(k + 1, row)
    env.close()
    report = {
        "format": REPORT_FORMAT,
        "orca_env_version": __version__,
        "policy": name,
        "config": cfg,
        # Scenario defaults the config left as None, resolved.
        "env": {"time_step": float(env.time_step), "max_steps": int(env.max_steps),
                "num_learned": len(env.possible_agents),
                "num_agents": int(np.asarray(env.sim.radii).shape[0]) if env.sim else None},
        "seeds": seeds,
        "num_episodes": len(seeds),
        "metrics": {k: {"unit": u, "definition": d} for k, (u, d) in metrics.items()},
        "aggregate": aggregate(rows, metrics),
        "episodes": rows,
        "social": {"personal_space": personal_space, "discomfort_distance": DISCOMFORT_DISTANCE},
    }
    if out_dir is not None:
        atomic_write_text(os.path.join(out_dir, "metrics.json"), report_json(report))
        write_csv(rows, os.path.join(out_dir, "episodes.csv"), metrics)
        if plotted:
            plot_trajectories(plotted, os.path.join(out_dir, "trajectories.png"),
                              title=f"policy {name} on {cfg.get('scenario')}")
    return report
