"""``OrcaVectorEnv``: B independent worlds of one config, stepped by the step pipeline.

A B-world view of :class:`orca_env.pipeline.WorldBatch`, the pipeline the single env runs on one
world: every world's observations, rewards, terminations and truncations are bit-identical to a
single env reset with that world's seed and stepped with the same actions (``tests/vector``).
Per world it keeps only what is Python by design: the generator, the scenario (placement at
reset, new goals for crowd agents) and the episode's simulator (obstacles and queries). With
``num_threads > 1`` blocks of worlds are stepped by a thread pool (the kernels release the GIL).
"""

from __future__ import annotations

import numbers
import warnings
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv

from .environment import OrcaEnv, make_batch
from .episode import WorldConfig, announce_compilation, check_seed, draw_episode, redraw_warning
from .step import clip_actions

__all__ = ["OrcaVectorEnv"]


class OrcaVectorEnv(VectorEnv):
    """``B`` independent worlds of one config, as arrays of agent rows, stepped in one call.

    Row ``b * L + k`` is ``agent_k`` of world ``b`` (``L`` learned agents per world); the vector
    env has ``num_envs = B * L`` rows. Per world it is bit-identical to
    ``orca_env.parallel_env(config)`` reset with that world's seed (then with ``seed=None`` at
    every autoreset) and stepped with the same actions.

    ## Finished agents and autoreset (Gymnasium's ``AutoresetMode.SAME_STEP``)

    Agents of a world finish at different steps. A row whose agent finished (terminated or
    truncated) is *not alive*: its action is ignored, and on later steps of its world it reports
    reward 0, ``terminated = truncated = False`` and an all-zero observation. ``info["alive"]``
    ((B*L,) bool) says which rows need an action on the next step, ``info["active"]`` which rows
    acted on this step (their reward, terminations and truncations are real). A world resets
    when none of its learned agents is alive, on the same step (``SAME_STEP``): the step returns
    the reward, termination and truncation of the last agents, the first observation of the new
    episode in ``obs``, and ``info["world_reset"]`` ((B,) bool) marks the worlds that reset.
    The observation a finished agent ended with is in ``info["final_obs"]`` ((B*L, D) float32,
    valid where ``info["_final_obs"]`` ((B*L,) bool) is True, i.e. for the rows that finished on
    this step), whether or not its world reset; bootstrap truncated rows from it. Both keys are
    present only on steps where some row finished (Gymnasium's convention).

    ## Arguments

    ``OrcaVectorEnv(config, num_worlds, *, seed=None, infos=False, **config_kwargs)``:
    ``config`` and ``config_kwargs`` as for :class:`~orca_env.environment.OrcaEnv`;
    ``num_worlds`` worlds (B >= 1); ``seed`` for the first ``reset`` when it is given none (an
    int: world ``b`` gets ``seed + b``; or a list of B ints); ``infos=True`` adds per-row arrays
    to ``info``: ``status`` ((B*L,) int64 :class:`~orca_env.codes.Status` codes),
    ``reward_terms`` ((B*L, len(TERMS)) float64 weighted terms), ``nearest_separation``
    ((B*L,) float64, m) and ``collided_with`` ((B*L,) int8: 0 none, 1 agent, 2 obstacle).
    ``num_threads`` (config key, default 1): above 1 the worlds are split into that many blocks,
    stepped at once by threads of a pool (the kernel releases the GIL; results are identical).

    Every config key of the single env's step is mirrored, including visibility (``avoids``,
    ``visible_to``), ``orca_padding``, ``randomize_attributes`` (each world's radii and speeds
    are reloaded at its reset), the ``linear`` population, ``time_limit_rule``,
    ``collision_check``, the size-aware ``collision_tolerance``, ``action: residual``,
    ``observation.layout: universal``, ``observation.time``, scenarios with their own reward
    terms or observation features (their hooks run once per step over every world's agents),
    registered behaviours and ``mixture`` configs (each world draws its own entry at every
    reset; worlds may differ in size). Two things are Python per world: configs with crowd
    noise draw it from each world's generator, and ``guidance: true`` asks each world's
    roadmap for waypoints.
    """

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP}

    def __init__(self, config: Any = None, num_worlds: int = 1, *, seed: Any = None,
                 infos: bool = False, **config_kwargs: Any) -> None:
        if isinstance(num_worlds, bool) or not isinstance(num_worlds, numbers.Integral) \
                or num_worlds < 1:
            raise ValueError(f"num_worlds must be an integer >= 1, got {num_worlds!r}")
        if not isinstance(infos, bool):
            raise ValueError(f"infos must be True or False, got {infos!r}")
        self._seeds = self._world_seeds(seed, int(num_worlds))
        #: The template env: config, spaces and mixture (it never steps).
        self._template = e = OrcaEnv(config, infos="compact", **config_kwargs)
        self.config = e.config
        self.num_worlds = B = int(num_worlds)
        self.infos = infos
        self.num_agents_per_world = L = len(e.possible_agents)
        self.num_envs = B * L
        self.single_observation_space = e.observation_spaces[e.possible_agents[0]]
        self.single_action_space = e.action_spaces[e.possible_agents[0]]
        d = self.single_observation_space.shape[0]
        self._d = d
        self.observation_space = spaces.Box(
            np.broadcast_to(self.single_observation_space.low, (B * L, d)),
            np.broadcast_to(self.single_observation_space.high, (B * L, d)), dtype=np.float32)
        self.action_space = spaces.Box(-1.0, 1.0, (B * L, self.single_action_space.shape[0]),
                                       dtype=np.float32)
        self._mixture = e.mixture
        # Per world: its resolved config (its own scenario object), generator and seed.
        wc = e.world_config
        self._configs = [wc] + [WorldConfig(wc.config) for _ in range(B - 1)]
        self._entry_configs: list[dict] = [{} for _ in range(B)]
        self._rngs: list = [None] * B
        self._rng_seeds: list = [None] * B
        self._seed_episodes = [0] * B
        #: Mixture draws made again because their agents could not be placed.
        self.mixture_redraws = 0
        self._batch = make_batch(e, B, int(wc.config.num_threads or 1))
        self._hooks = bool(wc.extra_obs or wc.extra_terms)
        self._warned_clip = False
        self._norm_clip = wc.learned_kinematics == "holonomic"  # see step.clip_actions
        self._started = False

    # -- construction helpers ------------------------------------------------------------
    @staticmethod
    def _world_seeds(seed: Any, B: int) -> list:
        if seed is None:
            return [None] * B
        if isinstance(seed, (list, tuple, np.ndarray)):
            seeds = list(seed)
            if len(seeds) != B:
                raise ValueError(f"seed must list one seed per world ({B}), got {len(seeds)}")
            for s in seeds:
                check_seed("seed", s)
            return [int(s) for s in seeds]
        check_seed("seed", seed)
        return [int(seed) + b for b in range(B)]

    def _reset_worlds(self, worlds: list[int], seeds: list, obs: np.ndarray) -> None:
        """New episodes of ``worlds`` (a seed each, or None to continue the generator)."""
        announce_compilation()

        def redraw(k, values, exc):
            self.mixture_redraws += 1
            redraw_warning(self.mixture_redraws, k, values, exc)

        eps = []
        for b, s in zip(worlds, seeds, strict=True):
            if s is not None or self._rngs[b] is None:
                self._rngs[b], self._rng_seeds[b] = seeding.np_random(s)
                self._seed_episodes[b] = 0
            else:
                self._seed_episodes[b] += 1
            ep, _, _ = draw_episode(self._configs[b], self._mixture, self._entry_configs[b],
                                    self._rngs[b], int(self._rng_seeds[b]),
                                    self._seed_episodes[b], redraw)
            if ep.table.learned_slots.size != self.num_agents_per_world:
                raise RuntimeError(f"a mixture entry has {ep.table.learned_slots.size} learned "
                                   f"agents, not {self.num_agents_per_world}")
            eps.append(ep)
        batch = self._batch
        batch.load(worlds, eps)
        L = self.num_agents_per_world
        rows = np.concatenate([np.arange(b * L, (b + 1) * L) for b in worlds])
        if self._hooks:
            batch.run_hooks(rows)
        sep = np.full(self.num_envs, np.inf)
        batch.observe(worlds, obs, sep)

    # -- Gymnasium VectorEnv API ---------------------------------------------------------
    def reset(self, *, seed: Any = None, options: dict | None = None):
        """Reset every world.

        Args:
            seed: None (the constructor's ``seed`` on the first reset, else continue each
                world's generator), an int (world ``b`` gets ``seed + b``) or a list of B ints.
            options: ``None`` or a dict; none is read (a non-empty one warns, naming its keys).

        Returns:
            ``(obs, info)``: obs (B*L, D) float32; info with ``alive`` (B*L,) bool (all True).
        """
        if options is not None and not isinstance(options, dict):
            raise ValueError(f"options must be None or a dict, got {options!r}")
        if options:  # no key is read: say so rather than ignore it silently
            # A warning, not an error: PettingZoo's API test resets with options={"options": 1}.
            warnings.warn(f"options: this env reads no reset options, ignoring "
                          f"{sorted(map(str, options))[:5]} (set them in the env config)",
                          UserWarning, stacklevel=2)
        seeds = self._world_seeds(seed, self.num_worlds)
        if seed is None and not self._started:
            seeds = self._seeds
        self._started = True
        obs = np.zeros((self.num_envs, self._d), dtype=np.float32)
        self._reset_worlds(list(range(self.num_worlds)), seeds, obs)
        self._warned_clip = False
        return obs, {"alive": self._batch.alive.copy()}

    def _actions(self, actions: Any) -> np.ndarray:
        size = self.single_action_space.shape[0]
        try:
            raw = np.asarray(actions)
        except (TypeError, ValueError):
            raw = None
        if raw is None or raw.shape != (self.num_envs, size) or raw.dtype.kind not in "iuf":
            shape = getattr(raw, "shape", None)
            raise ValueError(f"actions must be a ({self.num_envs}, {size}) array of real "
                             f"numbers, got shape {shape} dtype {getattr(raw, 'dtype', None)}")
        act = np.array(raw, dtype=np.float64, order="C")  # the pipeline's fixed layout
        act[~self._batch.alive] = 0.0  # rows of finished agents are ignored
        bad, clipped = clip_actions(act, self._norm_clip)
        if bad >= 0:
            raise ValueError(f"actions: non-finite value (NaN or inf) in row {bad}: "
                             f"{raw[bad].tolist()!r}")
        if clipped and not self._warned_clip:
            self._warned_clip = True
            warnings.warn("actions outside the box [-1, 1] were clipped (warned once)",
                          stacklevel=3)
        return act

    def step(self, actions: Any):
        """Step every world once.

        Args:
            actions: (B*L, 2) real actions (as for ``OrcaEnv``, in the agents' frames); rows of
                agents that are not alive are ignored.

        Returns:
            ``(obs (B*L, D) float32, rewards (B*L,) float64, terminations (B*L,) bool,
            truncations (B*L,) bool, info)``; see the class docstring for finished rows, the
            autoreset and ``info``.

        Raises:
            RuntimeError: Before ``reset``.
            ValueError: On actions of the wrong shape or type, or NaN/inf in an alive row.
        """
        if not self._started:
            raise RuntimeError("step() called before reset()")
        act = self._actions(actions)
        batch = self._batch
        res = batch.step(act, batch.run_hooks if self._hooks else None)
        obs = res.obs
        info: dict[str, Any] = {}
        fin = res.term | res.trunc
        if fin.any():
            info["final_obs"] = obs.copy()
            info["_final_obs"] = fin
            obs[fin] = 0.0
        reset = np.flatnonzero(res.world_done)
        if reset.size:
            self._reset_worlds(reset.tolist(), [None] * reset.size, obs)
        info["alive"] = batch.alive.copy()
        info["active"] = res.acted
        info["world_reset"] = res.world_done
        if self.infos:
            info["status"] = res.status
            info["reward_terms"] = res.weighted
            info["nearest_separation"] = res.sep
            info["collided_with"] = res.hit
        return obs, res.reward, res.term, res.trunc, info

    @property
    def alive(self) -> np.ndarray:
        """(B*L,) bool copy: the rows whose agent needs an action on the next step."""
        return self._batch.alive.copy()

    @property
    def world_sizes(self) -> np.ndarray:
        """(B,) int64 agents (slots) of each world's current episode (a mixture's differ)."""
        return np.diff(self._batch.offsets)

    @property
    def scenario_names(self) -> list[str | None]:
        """Each world's current scenario (None before the first reset)."""
        return [None if ep is None else ep.scenario.name for ep in self._batch.episodes]

    @property
    def mixture_weights(self) -> list[float] | None:
        """The mixture's entry weights (``None`` without a mixture)."""
        return self._template.mixture_weights

    def set_mixture_weights(self, weights: Any) -> None:
        """Draw every world's mixture entries with new weights from its next reset on."""
        self._template.set_mixture_weights(weights)

    def close_extras(self, **kwargs: Any) -> None:
        """Release the thread pool (``close()`` calls it once)."""
        batch = getattr(self, "_batch", None)  # a constructor that raised left no batch
        if batch is not None:
            batch.close()
