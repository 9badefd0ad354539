"""``OrcaVectorEnv``: B independent worlds of one config, stepped by the step pipeline.

A B-world view of :class:`orca_env.pipeline.WorldBatch`, the pipeline the single env runs on one
world: every world's observations, rewards, terminations and truncations are bit-identical to a
single env reset with that world's seed and stepped with the same actions (``tests/vector``).
Per world it keeps only what is Python by design: the generator, the scenario (placement at
reset, new goals for crowd agents) and the episode's simulator (obstacles and queries). With
``num_threads > 1`` the worlds are stepped by a thread pool and this thread (the kernels release
the GIL), while this thread also draws the next episodes of worlds ahead (see the class).
"""

from __future__ import annotations

import numbers
import warnings
from collections import deque
from typing import Any, NamedTuple

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv

from .environment import OrcaEnv, make_batch
from .episode import WorldConfig, announce_compilation, check_seed, draw_episode, redraw_warning
from .finished import FINISHED_AGENTS, RowRecord, check_choice
from .infos import info_columns, reset_columns
from .scenarios import SCENARIOS
from .step import masked_actions

__all__ = ["OrcaVectorEnv", "AUTORESET_MODES", "make_vector_env"]

#: The autoreset modes of :class:`OrcaVectorEnv` (Gymnasium's ``AutoresetMode``).
AUTORESET_MODES = (AutoresetMode.SAME_STEP, AutoresetMode.NEXT_STEP)


class _Ahead(NamedTuple):
    """A world's next episode, drawn ahead (:meth:`OrcaVectorEnv._draw_ahead`)."""

    episode: Any  # the WorldEpisode; its ``rng`` is the world's generator
    state: dict  # the world's generator state the draw started from (restored after it)
    end: dict  # the generator's state the draw ended in (set at adoption)
    index: int  # the episode's index since the seed
    redraws: list  # the mixture's redraws, (k, values, exc) each, reported at adoption
    probabilities: Any  # the mixture's probabilities array the draw used (None: no mixture)


def _autoreset_mode(value: Any) -> AutoresetMode:
    """An ``AutoresetMode`` from a member, its value (``"NextStep"``) or name (``"next_step"``)."""
    mode = value if isinstance(value, AutoresetMode) else None
    if mode is None and isinstance(value, str):
        for m in AutoresetMode:
            if value in (m.value, m.name, m.name.lower()):
                mode = m
    if mode not in AUTORESET_MODES:
        raise ValueError(f"autoreset_mode must be one of {[m.name for m in AUTORESET_MODES]} "
                         f"(an AutoresetMode or its name), got {value!r}")
    return mode


class OrcaVectorEnv(VectorEnv):
    """``B`` independent worlds of one config, as arrays of agent rows, stepped in one call.

    Row ``b * L + k`` is ``agent_k`` of world ``b`` (``L`` learned agents per world); the vector
    env has ``num_envs = B * L`` rows. Per world it is bit-identical to
    ``orca_env.parallel_env(config)`` reset with that world's seed (then with ``seed=None`` at
    every autoreset) and stepped with the same actions.

    ## Finished agents and autoreset

    Agents of a world finish at different steps. A row whose agent finished (terminated or
    truncated) is *not alive*: its action is ignored, and on later steps of its world it reports
    reward 0, ``terminated = truncated = False`` and an all-zero observation. ``info["alive"]``
    ((B*L,) bool) says which rows need an action on the next step, ``info["active"]`` which rows
    acted on this step (their reward, terminations and truncations are real). With
    ``finished_agents="absorb"`` (the absorbing state, as for ``OrcaEnv``) an agent that finishes
    before its world ends reports ``terminated = truncated = False`` on that step too, and every
    row of a world reports its end on the world's last step (``terminated`` if its agent
    terminated, then or before; ``truncated`` for all of them when the world ended by a time
    limit or a deadlock; :meth:`orca_env.finished.RowRecord.absorb`), so each row's episode is its
    world's: no row waits idle between episodes, and each row's return is its agent's.

    A world resets once none of its learned agents is alive:

    * ``autoreset_mode=SAME_STEP`` (default): on the same step. The step returns the reward,
      termination and truncation of the last agents, the first observation of the new episode
      in ``obs``, and ``info["world_reset"]`` ((B,) bool) marks the worlds that reset. The
      observation a finished agent ended with is in ``info["final_obs"]`` ((B*L, D) float32,
      valid where ``info["_final_obs"]`` ((B*L,) bool) is True, i.e. for the rows that finished
      on this step), whether or not its world reset; bootstrap truncated rows from it. Both keys
      are present only on steps where some row finished (Gymnasium's convention).
    * ``autoreset_mode=NEXT_STEP`` (Gymnasium's default, which its observation wrappers
      require): ``obs`` holds the observation a finished agent ended with; the world is reset on
      the next step, which ignores its rows' actions and returns their first observation with
      reward 0 and ``terminated = truncated = False`` (the world is not stepped), and
      ``info["world_reset"]`` ((B*L,) bool) marks those rows. Every ``info`` array then has one
      entry per row, as Gymnasium's ``DictInfoToList`` expects. ``metadata["autoreset_mode"]``
      says which mode an env runs.

    ## Resetting some worlds

    ``reset(options={"reset_mask": mask})`` starts new episodes in some worlds only
    (Gymnasium's partial reset, as its ``SyncVectorEnv`` does it): ``mask`` is a (B*L,) bool
    array over rows in which every world's rows agree (a world resets as a whole: its agents
    share it). ``seed`` as for a full reset (``None`` continues each world's generator; an int
    gives world ``b`` the seed ``seed + b``; a list has one entry per world), read for the
    masked worlds only. It returns the full ``obs``: the masked rows' first observations, the
    other rows what the last ``step`` or ``reset`` returned; ``info["reset_mask"]`` is the
    mask, ``info["alive"]`` every row, and with ``infos="numeric"`` each key's array holds the
    first observations' values on the masked rows (zero elsewhere). A world pending a
    ``NEXT_STEP`` autoreset that is reset this way is not reset again on the next step.

    Gymnasium's ``RecordEpisodeStatistics`` counts per row: with several learned agents per
    world and ``finished_agents="leave"``, a finished agent's idle steps until its world resets
    count into its row's next episode; with ``"absorb"`` a row's episode is its world's and its
    return its agent's.

    ## Arguments

    ``OrcaVectorEnv(config, num_worlds, *, seed=None, infos=False, autoreset_mode=SAME_STEP,
    finished_agents="leave", **config_kwargs)``:
    ``config`` and ``config_kwargs`` as for :class:`~orca_env.environment.OrcaEnv`;
    ``num_worlds`` worlds (B >= 1); ``seed`` for the first ``reset`` when it is given none (an
    int: world ``b`` gets ``seed + b``; or a list of B ints); ``infos=True`` adds per-row arrays
    to ``info``: ``status`` ((B*L,) int64 :class:`~orca_env.codes.Status` codes),
    ``reward_terms`` ((B*L, len(TERMS)) float64 weighted terms), ``nearest_separation``
    ((B*L,) float64, m) and ``collided_with`` ((B*L,) int8: 0 none, 1 agent, 2 obstacle);
    ``infos="numeric"`` adds one (B*L,) array per key of the PettingZoo env's numeric infos
    (:data:`orca_env.infos.NUMERIC_KEYS`, ``reward_<term>`` per term), at reset too, with
    ``active`` the rows that acted (at ``reset``: every row) and ``status`` a finished row's last
    status. ``autoreset_mode`` (a Gymnasium ``AutoresetMode`` or its name) and
    ``finished_agents`` (``"leave"`` or ``"absorb"``): see above.
    ``num_threads`` (config key, default 1): above 1 a pool of ``num_threads - 1`` threads and
    the calling thread step the worlds, each claiming the next chunk of worlds as it finishes
    the last (the kernel releases the GIL). Meanwhile the calling thread does part of the
    resets' Python ahead: it draws the next episode of worlds (the scenario's placement, the
    simulator; most of a reset's time) from each world's generator, putting its state back
    after the draw, and with a second scenario object; a reset without a seed (autoreset,
    ``reset()``, ``reset_mask``) takes it only if the world's generator is still where the draw
    started and the mixture's weights are the same, so every result is bit-identical to one
    thread's, in both autoreset modes.
    What overlaps: the draws of worlds of the package's own scenarios whose generator is not
    used during their episode (no crowd noise, no new goals for crowds, no behaviour drawing
    from it: such a world's draw is dropped at its reset and it is not drawn ahead again), and
    the kernel's chunks among threads. Serial as before: scenarios registered by the user
    (their objects may keep state across episodes), loading the drawn episodes into the batch
    (which may reallocate it), the observations' first call, the scenarios' hooks, guidance and
    the step's Python around the kernel. With one thread nothing is drawn ahead.

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

    #: The class default; each env sets its own (``autoreset_mode``).
    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP}

    def __init__(self, config: Any = None, num_worlds: int = 1, *, seed: Any = None,
                 infos: bool | str = False,
                 autoreset_mode: AutoresetMode | str = AutoresetMode.SAME_STEP,
                 finished_agents: str = "leave", **config_kwargs: Any) -> None:
        if isinstance(num_worlds, bool) or not isinstance(num_worlds, numbers.Integral) \
                or num_worlds < 1:
            raise ValueError(f"num_worlds must be an integer >= 1, got {num_worlds!r}")
        if not isinstance(infos, bool) and infos != "numeric":
            raise ValueError(f"infos must be True, False or 'numeric', got {infos!r}")
        mode = _autoreset_mode(autoreset_mode)
        check_choice("finished_agents", finished_agents, FINISHED_AGENTS)
        self._seeds = self._world_seeds(seed, int(num_worlds))
        #: The template env: config, spaces and mixture (it never steps).
        self._template = e = OrcaEnv(config, infos="compact", **config_kwargs)
        self.config = e.config
        self.num_worlds = B = int(num_worlds)
        self.infos = infos
        self.metadata = {**type(self).metadata, "autoreset_mode": mode}
        self.autoreset_mode = mode
        #: ``"leave"`` or ``"absorb"`` (:mod:`orca_env.finished`).
        self.finished_agents = finished_agents
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
        self._norm_clip = wc.learned_kinematics == "holonomic"  # see step.masked_actions
        self._started = False
        self._obs: np.ndarray | None = None  # what the last reset or step returned
        self._term_names = e.reward_term_names
        self._absorb = finished_agents == "absorb"
        # What each row did last (the absorbing state; numeric infos' last status).
        self._record = RowRecord(B, L) if self._absorb or infos == "numeric" else None
        self._next_step = mode == AutoresetMode.NEXT_STEP
        #: NEXT_STEP: the worlds that ended on the last step, reset on the next one.
        self._pending = np.zeros(B, dtype=bool)
        self._row_world = np.repeat(np.arange(B), L)
        # Episodes drawn ahead, with more than one thread (see _draw_ahead): per world the
        # drawn episode (or None), a second resolved config (a plain config's) or mixture-entry
        # cache whose scenario objects the draws use, and whether drawing it ahead failed.
        self._ahead: list[_Ahead | None] = [None] * B
        self._ahead_configs: list = [None] * B
        self._ahead_entries: list[dict] = [{} for _ in range(B)]
        self._ahead_off = np.zeros(B, dtype=bool)
        self._ahead_queue: deque = deque()
        self._ahead_used = 0  # episodes drawn ahead and adopted (the tests read it)
        if self._batch._threads > 1 and self._builtin_scenarios():
            self._batch.side_work = self._draw_ahead_one

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

    def _builtin_scenarios(self) -> bool:
        """Whether every scenario the worlds may run is one of the package's own.

        Their episodes depend only on their parameters, the seed, the episode index and the
        generator (:meth:`~orca_env.scenarios.base.Scenario.start_episode` sets what a draw
        reads), so a second scenario object draws the same episode: what drawing ahead needs.
        """
        m = self._mixture
        names = [self.config.scenario] if m is None else \
            [m.config_at(k).scenario for k in range(len(m))]
        return all(n in SCENARIOS and SCENARIOS[n].__module__.startswith("orca_env.scenarios")
                   for n in names)

    def _draw_ahead_one(self) -> bool:
        """Draw the next world's next episode ahead (the batch's ``side_work``).

        Returns:
            False when no world is left to draw.
        """
        q = self._ahead_queue
        while q:
            b = q.popleft()
            if self._ahead[b] is None and not self._ahead_off[b] and self._rngs[b] is not None:
                self._ahead[b] = self._draw_ahead(b)
                return True
        return False

    def _draw_ahead(self, b: int) -> _Ahead | None:
        """World ``b``'s next episode, drawn now from its generator, whose state is restored.

        Runs on the Python thread while the pool's threads step the worlds (the batch's
        ``side_work``), so that the draws of a reset (the scenario's placement, the simulator:
        most of a reset's Python) are out of the step that resets. The draw leaves nothing the
        world uses changed: it draws from the world's generator and puts back the state it
        started from (keeping the state it ended in), and uses a second scenario object (a
        second resolved config, or a second cache of mixture entries, swapped with the world's
        own at adoption). It is adopted at the world's next reset without a seed only if the
        world's generator is still in the state the draw started from (nothing drew from it
        since: no crowd noise, no new goals, ...) and the mixture's weights are the same; the
        generator then jumps to the end state, as if the reset had drawn. Otherwise it is
        dropped and the reset draws as always, so every episode is the one a reset without
        drawing ahead gives. A world whose draw ahead was dropped (or failed) is not drawn
        ahead again. Draws that raise are dropped: the reset raises.

        Drawing from the world's own generator rather than a copy saves building a generator
        per draw (a bit generator and its ``Generator``: 6.4 against 2.1 us a draw measured, on
        the thread the two-thread step waits for).
        """
        rng = self._rngs[b]
        noisy = self._batch._settings.noisy[b]  # crowd noise draws every step: never valid
        if noisy:
            self._ahead_off[b] = True
            return None
        bg = rng.bit_generator
        state = bg.state
        redraws: list = []
        index = self._seed_episodes[b] + 1
        try:
            if self._mixture is None:
                wc = self._ahead_configs[b]
                if wc is None:
                    wc = self._ahead_configs[b] = WorldConfig(self.config)
                entries = self._entry_configs[b]
            else:
                wc, entries = self._configs[b], self._ahead_entries[b]
            ep, _, _ = draw_episode(wc, self._mixture, entries, rng, int(self._rng_seeds[b]),
                                    index, lambda *a: redraws.append(a))
            end = bg.state
        except Exception:  # noqa: BLE001 (the reset draws again and raises)
            self._ahead_off[b] = True
            return None
        finally:
            bg.state = state
        probs = None if self._mixture is None else self._mixture.probabilities
        return _Ahead(ep, state, end, index, redraws, probs)

    def _adopt(self, b: int, ahead: _Ahead | None) -> Any:
        """The episode drawn ahead for world ``b`` if it is the one a reset draws now, else None."""
        if ahead is None:
            return None
        m = self._mixture
        bg = self._rngs[b].bit_generator
        if ahead.index != self._seed_episodes[b] + 1 or ahead.episode.rng is not self._rngs[b] \
                or (m is not None and m.probabilities is not ahead.probabilities) \
                or bg.state != ahead.state:
            self._ahead_off[b] = True
            return None
        bg.state = ahead.end
        self._seed_episodes[b] = ahead.index
        self._ahead_used += 1
        if m is None:
            self._configs[b], self._ahead_configs[b] = ahead.episode.config, self._configs[b]
        else:
            self._entry_configs[b], self._ahead_entries[b] = \
                self._ahead_entries[b], self._entry_configs[b]
        return ahead.episode

    def _reset_worlds(self, worlds: list[int], seeds: list, obs: np.ndarray,
                      sep: np.ndarray | None = None) -> np.ndarray:
        """New episodes of ``worlds`` (a seed each, or None to continue the generator).

        Writes the first observations (and clearances into ``sep``) of their rows; returns
        the rows.
        """
        announce_compilation()

        def redraw(k, values, exc):
            self.mixture_redraws += 1
            redraw_warning(self.mixture_redraws, k, values, exc)

        eps = []
        for b, s in zip(worlds, seeds, strict=True):
            ahead, self._ahead[b] = self._ahead[b], None
            ep = None
            if s is not None or self._rngs[b] is None:
                self._rngs[b], self._rng_seeds[b] = seeding.np_random(s)
                self._seed_episodes[b] = 0
            else:
                ep = self._adopt(b, ahead)
                if ep is None:
                    self._seed_episodes[b] += 1
                else:
                    for args in ahead.redraws:
                        redraw(*args)
            if ep is None:
                ep, _, _ = draw_episode(self._configs[b], self._mixture,
                                        self._entry_configs[b], self._rngs[b],
                                        int(self._rng_seeds[b]), self._seed_episodes[b], redraw)
            if ep.table.learned_slots.size != self.num_agents_per_world:
                raise RuntimeError(f"a mixture entry has {ep.table.learned_slots.size} learned "
                                   f"agents, not {self.num_agents_per_world}")
            eps.append(ep)
        batch = self._batch
        batch.load(worlds, eps)
        L = self.num_agents_per_world
        rows = (np.asarray(worlds, dtype=np.int64)[:, None] * L + np.arange(L)).ravel()
        if self._hooks:
            batch.run_hooks(rows)
        if sep is None:
            sep = np.full(self.num_envs, np.inf)
        batch.observe(worlds, obs, sep)
        if self._record is not None:
            self._record.reset(rows)
        if self._batch.side_work is not None:
            self._ahead_queue.extend(worlds)
        return rows

    def _slot_ids(self) -> np.ndarray:
        """(B*L,) int64 each row's slot in the batch's slot arrays."""
        return self._batch.offsets[self._row_world] + self._batch.learned

    # -- Gymnasium VectorEnv API ---------------------------------------------------------
    def reset(self, *, seed: Any = None, options: dict | None = None):
        """Reset every world.

        Args:
            seed: None (the constructor's ``seed`` on the first reset, else continue each
                world's generator), an int (world ``b`` gets ``seed + b``) or a list of B ints.
            options: ``None`` or a dict; none is read (a non-empty one warns, naming its keys).

        Returns:
            ``(obs, info)``: obs (B*L, D) float32; info with ``alive`` (B*L,) bool (all True)
            and, with ``infos="numeric"``, the numeric arrays of the first observations.
        """
        if options is not None and not isinstance(options, dict):
            raise ValueError(f"options must be None or a dict, got {options!r}")
        options = dict(options or {})
        mask = options.pop("reset_mask", None)
        if options:  # no other key is read: say so rather than ignore it silently
            # A warning, not an error: PettingZoo's API test resets with options={"options": 1}.
            warnings.warn(f"options: this env reads no reset options, ignoring "
                          f"{sorted(map(str, options))[:5]} (set them in the env config)",
                          UserWarning, stacklevel=2)
        if mask is not None:
            return self._reset_some(mask, seed)
        seeds = self._world_seeds(seed, self.num_worlds)
        if seed is None and not self._started:
            seeds = self._seeds
        self._started = True
        obs = np.zeros((self.num_envs, self._d), dtype=np.float32)
        sep = np.full(self.num_envs, np.inf)
        self._reset_worlds(list(range(self.num_worlds)), seeds, obs, sep)
        self._pending[:] = False
        self._warned_clip = False
        self._obs = obs
        info: dict[str, Any] = {"alive": self._batch.alive.copy()}
        if self.infos == "numeric":
            info.update(reset_columns(self._slot_ids(), self._batch.slots, self._term_names,
                                      sep))
        return obs, info

    def _reset_some(self, mask: Any, seed: Any):
        """``reset(options={"reset_mask": mask})``: new episodes of the masked worlds only."""
        if not self._started:
            raise RuntimeError("reset(options={'reset_mask': ...}) before the first reset(): "
                               "reset every world first")
        B, L = self.num_worlds, self.num_agents_per_world
        m = np.asarray(mask)
        if m.shape != (self.num_envs,) or m.dtype != np.bool_:
            raise ValueError(f"options['reset_mask'] must be a ({self.num_envs},) bool array "
                             f"over rows, got shape {m.shape} dtype {m.dtype}")
        by_world = m.reshape(B, L)
        mixed = np.flatnonzero(by_world.any(axis=1) != by_world.all(axis=1))
        if mixed.size:
            b = int(mixed[0])
            raise ValueError(f"options['reset_mask']: the rows {b * L}..{(b + 1) * L - 1} of "
                             f"world {b} must be all True or all False (its agents share the "
                             f"world, which resets as a whole), got "
                             f"{by_world[b].astype(int).tolist()}")
        worlds = np.flatnonzero(by_world[:, 0])
        if not worlds.size:
            raise ValueError("options['reset_mask'] selects no row: give at least one world")
        seeds = self._world_seeds(seed, B)
        obs = self._obs.copy()
        sep = np.full(self.num_envs, np.inf)
        rows = self._reset_worlds(worlds.tolist(), [seeds[b] for b in worlds], obs, sep)
        self._pending[worlds] = False
        self._obs = obs
        info: dict[str, Any] = {"alive": self._batch.alive.copy(), "reset_mask": m.copy()}
        if self.infos == "numeric":
            first = reset_columns(self._slot_ids()[rows], self._batch.slots, self._term_names,
                                  sep[rows])
            for k, col in first.items():
                full = np.zeros(self.num_envs, dtype=col.dtype)
                full[rows] = col
                info[k] = full
        return obs, info

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
        # The pipeline's fixed layout; rows of finished agents are ignored (zero).
        act = np.empty((self.num_envs, size))
        bad, clipped = masked_actions(np.ascontiguousarray(raw, dtype=np.float64),
                                      self._batch.alive, self._norm_clip, act)
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
        # Worlds pending a NEXT_STEP reset have no live agent: the batch does not step them.
        res = batch.step(act, batch.run_hooks if self._hooks else None)
        numeric = None
        if self._absorb:
            self._record.absorb(res)
        if self.infos == "numeric":
            numeric = info_columns(res, np.arange(self.num_envs), self._slot_ids(),
                                   batch.slots, self._term_names, res.acted)
            numeric["status"] = res.status if self._absorb else self._record.last_status(res)
        obs = res.obs
        info: dict[str, Any] = {}
        fin = res.term | res.trunc
        if self._next_step:
            pending = self._pending
            self._pending = res.world_done.copy()
            reset = np.flatnonzero(pending)
            if reset.size:  # the worlds that ended on the last step start again
                sep = np.full(self.num_envs, np.inf)
                rows = self._reset_worlds(reset.tolist(), [None] * reset.size, obs, sep)
                res.status[rows] = 0
                if numeric is not None:
                    first = reset_columns(self._slot_ids()[rows], batch.slots,
                                          self._term_names, sep[rows])
                    for k, col in first.items():
                        if k != "active":
                            numeric[k][rows] = col
            world_reset = np.repeat(pending, self.num_agents_per_world)
        else:
            if fin.any():
                info["final_obs"] = obs.copy()
                info["_final_obs"] = fin
                obs[fin] = 0.0
            reset = np.flatnonzero(res.world_done)
            if reset.size:
                self._reset_worlds(reset.tolist(), [None] * reset.size, obs)
            world_reset = res.world_done
        info["alive"] = batch.alive.copy()
        info["active"] = res.acted
        info["world_reset"] = world_reset
        if self.infos is True:
            info["status"] = res.status
            info["reward_terms"] = res.weighted
            info["nearest_separation"] = res.sep
            info["collided_with"] = res.hit
        elif numeric is not None:
            info.update(numeric)
        self._obs = obs
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


def make_vector_env(num_envs: int = 1, config: Any = None, *,
                    autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
                    **kwargs: Any) -> OrcaVectorEnv:
    """The Gymnasium ids' vector entry point: ``gymnasium.make_vec(id, num_envs=N)``.

    ``num_envs`` worlds of a config with one learned agent (the ids' configs,
    :data:`orca_env.single.GYM_IDS`), so row ``b`` is world ``b``'s robot, stepped in one call
    (``vectorization_mode="vector_entry_point"``, which ``make_vec`` picks by default for these
    ids; ``"sync"`` and ``"async"`` still vectorize :class:`~orca_env.single.SingleAgentEnv`).
    ``autoreset_mode`` defaults to ``NEXT_STEP``, as for Gymnasium's own vector envs; every
    other keyword goes to :class:`OrcaVectorEnv` (``seed``, ``infos``, ``finished_agents``,
    config keys).

    Raises:
        ValueError: On a bad ``num_envs``, or a config without exactly one learned agent.
    """
    if isinstance(num_envs, bool) or not isinstance(num_envs, numbers.Integral) or num_envs < 1:
        raise ValueError(f"num_envs must be an integer >= 1, got {num_envs!r}")
    env = OrcaVectorEnv(config, int(num_envs), autoreset_mode=autoreset_mode, **kwargs)
    if env.num_agents_per_world != 1:
        n = env.num_agents_per_world
        env.close()
        raise ValueError(f"make_vec needs a config with exactly one learned agent (one row per "
                         f"env); config {config!r} has {n}; use orca_env.vector.OrcaVectorEnv "
                         f"for several learned agents per world")
    return env
