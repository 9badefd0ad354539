"""OrcaVectorEnv on several threads: results bit-identical to one thread, whatever overlaps.

With more than one thread the worlds are stepped in chunks claimed by the threads as they
free up, and the Python thread draws the next episodes of worlds ahead while the pool steps
(adopted at the reset only when they are the episode the reset would draw). Nothing of that may
show in the results: every output of every step, and the state after, must be the same bits
as on one thread, in both autoreset modes, with every infos level, for mixtures of world sizes
and for worlds whose generator is used during the episode (where drawing ahead must give up).
"""

import numpy as np
import pytest

from orca_env.scenarios import SCENARIOS, register_scenario
from orca_env.vector import OrcaVectorEnv

pytestmark = pytest.mark.filterwarnings("ignore:actions outside the box")


def _trace(config, worlds, steps, threads, *, seed=5, extra=None, drain=True, **kw):
    """Every output of ``steps`` steps (random and zero actions) and the final slot state.

    ``extra(env, t)``: called before step ``t`` (partial resets, new weights...); returns
    outputs to record or None. ``drain``: with more than one thread, also draw every episode
    that can be drawn ahead before each step (how many the kernel's window fits depends on
    timing; this makes sure some are, at places that do not depend on timing).
    """
    v = OrcaVectorEnv(config, worlds, seed=seed, num_threads=threads, **kw)
    obs, info = v.reset()
    out = [obs, *(info[k] for k in sorted(info))]
    rng = np.random.default_rng(seed)
    for t in range(steps):
        if extra is not None:
            got = extra(v, t)
            if got is not None:
                out += [got[0], *(got[1][k] for k in sorted(got[1]))]
        act = rng.uniform(-1.2, 1.2, (v.num_envs, 2)) if t % 4 else np.zeros((v.num_envs, 2))
        side = v._batch.side_work
        while drain and side is not None and side():
            pass
        obs, rew, term, trunc, info = v.step(act)
        out += [obs, rew, term, trunc, np.array(sorted(info))]
        out += [info[k] for k in sorted(info)]
        # What the running episodes' scenarios say of themselves (evaluation reads it).
        out.append(np.array([str(getattr(ep.scenario, "case", None))
                             for ep in v._batch.episodes]))
    sl = v._batch.slots
    out += [sl.pos, sl.vel, sl.goals, v.world_sizes, np.array(v.scenario_names)]
    state = dict(adopted=v._ahead_used, off=int(v._ahead_off.sum()))
    v.close()
    return out, state


def _same(a, b):
    assert len(a) == len(b)
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        x, y = np.asarray(x), np.asarray(y)
        assert x.dtype == y.dtype and x.shape == y.shape, i
        assert np.array_equal(x, y), i


@pytest.fixture
def three_threads(monkeypatch):
    """Allow num_threads=3 on any machine (the config's bound is NUMBA_NUM_THREADS)."""
    monkeypatch.setenv("NUMBA_NUM_THREADS", "3")


@pytest.mark.parametrize("mode", ["same_step", "next_step"])
@pytest.mark.parametrize("infos", [False, True, "numeric"])
def test_circle_dense_threads_bit_identical(mode, infos, three_threads):
    # Short episodes: every world times out together every 12 steps, as circle_dense's do
    # every 100 under random actions, so most resets adopt an episode drawn ahead.
    kw = dict(autoreset_mode=mode, infos=infos, max_steps=12)
    one, s1 = _trace("circle_dense", 7, 40, 1, **kw)
    assert s1["adopted"] == 0  # one thread: nothing is drawn ahead
    for threads in (2, 3):
        many, s = _trace("circle_dense", 7, 40, threads, **kw)
        _same(one, many)
        assert s["adopted"] >= 14 and s["off"] == 0, s  # episodes drawn ahead were used
        _same(one, _trace("circle_dense", 7, 40, threads, drain=False, **kw)[0])


@pytest.mark.parametrize("share", [1, 50])
def test_any_chunk_divisor_gives_the_same_bits(share, monkeypatch):
    """Chunks of 1/(share * threads) of the worlds left: from halves to single worlds."""
    from orca_env import pipeline

    monkeypatch.setattr(pipeline, "CHUNK_SHARE", share)
    one, _ = _trace("circle_dense", 9, 15, 1, max_steps=6)
    _same(one, _trace("circle_dense", 9, 15, 2, max_steps=6)[0])


@pytest.mark.parametrize("mode", ["same_step", "next_step"])
def test_mixture_of_world_sizes_threads_bit_identical(mode):
    # Each world draws its entry (scenario, agent count, ranges) at every reset: the batch
    # reallocates when sizes change, and episodes drawn ahead come from a second cache of
    # the mixture's entries.
    from tests.env.test_mixture import mix

    one, _ = _trace(mix(max_steps=15), 5, 60, 1, autoreset_mode=mode, infos="numeric")
    two, s = _trace(mix(max_steps=15), 5, 60, 2, autoreset_mode=mode, infos="numeric")
    _same(one, two)
    assert s["adopted"] > 0


def test_generators_used_during_episodes_fall_back():
    # random_obstacles without crowd noise: the crowd's new goals come from the world's
    # generator during the episode, so episodes drawn ahead from it are dropped at the reset
    # (its generator moved on); with noise (blocks) they are not drawn at all. Guidance runs
    # its Python between the kernel's phases.
    groups = [{"name": "learners", "population": "learned", "count": 4, "on_goal": "stop"},
              {"name": "crowd", "population": "orca", "count": 6, "on_goal": "new_goal",
               "noise": 0.0}]
    for config, kw in (("random_obstacles", dict(max_steps=25, groups=groups)),
                       ("blocks", dict(max_steps=20))):
        one, _ = _trace(config, 4, 55, 1, **kw)
        two, s = _trace(config, 4, 55, 2, **kw)
        _same(one, two)
        assert s["off"] > 0, config


def test_scenario_state_per_episode_threads_bit_identical():
    # crowdnav_test layout: start_episode sets the case from (seed, episode) on the scenario
    # object; a draw ahead must not change the running episode's scenario.
    groups = [{"name": "robot", "population": "learned", "count": 1, "on_goal": "stop"},
              {"name": "humans", "population": "orca", "count": 5, "on_goal": "stay",
               "noise": 0.0}]  # no crowd noise: the generator is not used in the episode
    kw = dict(scenario_kwargs={"layout": "crowdnav_test"}, max_steps=10, groups=groups)
    one, _ = _trace("crowdnav_circle", 4, 45, 1, **kw)
    two, s = _trace("crowdnav_circle", 4, 45, 2, **kw)
    _same(one, two)
    assert s["adopted"] > 0


def test_resets_and_new_weights_between_steps_threads_bit_identical():
    # Partial and full resets (seeded or not) and new mixture weights between steps: each
    # invalidates or consumes what was drawn ahead.
    from tests.env.test_mixture import mix

    def extra(v, t):
        B, L = v.num_worlds, v.num_agents_per_world
        if t == 9:
            v.set_mixture_weights([1.0, 5.0, 1.0])
        if t == 17:
            mask = np.zeros(B * L, dtype=bool)
            mask[L:2 * L] = True
            return v.reset(options={"reset_mask": mask})
        if t == 23:
            return v.reset()
        if t == 31:
            return v.reset(seed=40)
        return None

    one, _ = _trace(mix(max_steps=8), 4, 40, 1, extra=extra)
    two, s = _trace(mix(max_steps=8), 4, 40, 2, extra=extra)
    _same(one, two)
    assert s["adopted"] > 0


@pytest.fixture
def hook_scenario():
    """A scenario of the user's with its own observation feature and reward term."""
    saved = dict(SCENARIOS)

    class Hooked(SCENARIOS["circle_v0"]):
        name = "circle_hooked_test_v0"
        EXTRA_OBSERVATIONS = (("x", -10.0, 10.0),)
        EXTRA_REWARDS = {"left": 0.1}

        def observation_features(self, view, slots):
            return view.positions[slots, :1]

        def reward_terms(self, view, slots):
            return (view.positions[slots, :1] < 0.0).astype(float)

    register_scenario(Hooked)
    yield Hooked.name
    SCENARIOS.clear()
    SCENARIOS.update(saved)


def test_hooks_and_few_worlds_threads_bit_identical(hook_scenario):
    # The scenario's hooks run between the kernel's phases (and nothing is drawn ahead for
    # a scenario of the user's); batches of one and two worlds (fewer worlds than chunks).
    for config, worlds, kw in (("circle_dense", 4, dict(scenario=hook_scenario)),
                               ("circle_dense", 1, {}), ("circle_dense", 2, {})):
        one, _ = _trace(config, worlds, 30, 1, max_steps=10, infos=True, **kw)
        two, s = _trace(config, worlds, 30, 2, max_steps=10, infos=True, **kw)
        _same(one, two)
        assert (s["adopted"] > 0) == (not kw and worlds > 1)  # one world: one thread


def test_wait_threads_waits_for_a_count_to_reach_its_target():
    from orca_env.stages import wait_threads

    assert wait_threads(np.array([5, 1, 2], dtype=np.int64), 2, 2, 10)
    assert not wait_threads(np.array([5, 1, 1], dtype=np.int64), 2, 2, 10)
    assert wait_threads(np.array([5, 3, 1], dtype=np.int64), 1, 2, 10)


def test_a_failing_pool_thread_raises_instead_of_hanging(monkeypatch):
    """The spin at the end of a two-thread call gives up; the task's error then surfaces."""
    import threading

    from orca_env import pipeline

    v = OrcaVectorEnv("circle_dense", 8, seed=1, num_threads=2)
    v.reset()
    real = pipeline.run_worlds_entry
    main = threading.main_thread()

    def entry(*args):
        kernel = real(*args)

        def guarded(*a):
            if threading.current_thread() is not main:
                raise RuntimeError("pool thread failed")
            return kernel(*a)

        return guarded

    monkeypatch.setattr(pipeline, "run_worlds_entry", entry)
    monkeypatch.setattr(pipeline, "_JOIN_SPINS", 100)
    with pytest.raises(RuntimeError, match="pool thread failed"):
        v.step(np.zeros((v.num_envs, 2)))
    v.close()


def test_workers_that_fell_asleep_wake_for_the_next_call(monkeypatch):
    """Workers sleep once they spun out; a call then wakes them, and nothing else changes."""
    import time

    from orca_env import pipeline

    one, _ = _trace("circle_dense", 6, 12, 1, max_steps=8)
    monkeypatch.setattr(pipeline, "_IDLE_SPINS", 1)  # every worker sleeps between calls
    monkeypatch.setattr(pipeline, "_START_SPINS", 1)  # and the Python thread does not wait

    slept = []
    run = pipeline.Workers.run

    def counting(self, *args):
        deadline = time.monotonic() + 2.0
        while self._sleeping < self.count and time.monotonic() < deadline:
            time.sleep(0.001)  # let the worker reach its condition
        slept.append(self._sleeping)
        return run(self, *args)

    monkeypatch.setattr(pipeline.Workers, "run", counting)
    two, _ = _trace("circle_dense", 6, 12, 2, max_steps=8)
    _same(one, two)
    assert slept and all(s == 1 for s in slept)


def test_closing_stops_the_workers():
    v = OrcaVectorEnv("circle_dense", 4, seed=0, num_threads=2)
    v.reset()
    v.step(np.zeros((v.num_envs, 2)))
    threads = list(v._batch._pool._threads)
    assert len(threads) == 1 and all(t.is_alive() for t in threads)
    v.close()
    for t in threads:
        t.join(timeout=5.0)
    assert not any(t.is_alive() for t in threads)


def _step_in_child(v, actions, q):
    for a in actions:
        obs = v.step(a)[0]
    q.put(obs.tobytes())


def test_a_forked_copy_of_a_threaded_env_starts_its_own_workers():
    """A fork keeps the env but not its worker threads: the child's steps must not hang."""
    import multiprocessing as mp

    v = OrcaVectorEnv("circle_dense", 6, seed=2, num_threads=2)
    v.reset()
    v.step(np.zeros((v.num_envs, 2)))  # the workers have run a job before the fork
    actions = np.random.default_rng(0).uniform(-1, 1, (5, v.num_envs, 2))
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    child = ctx.Process(target=_step_in_child, args=(v, actions, q))
    child.start()
    got = q.get(timeout=120)
    child.join(timeout=30)
    assert child.exitcode == 0
    for a in actions:
        obs = v.step(a)[0]
    assert got == obs.tobytes()
    v.close()


def test_a_batch_dropped_without_close_stops_its_workers(monkeypatch):
    """The workers hold their pool, not the batch: collecting the batch stops them.

    (Gymnasium's ``VectorEnv.__del__`` closes the env, and so the batch; here it does not.)
    """
    import gc

    monkeypatch.setattr(OrcaVectorEnv, "close_extras", lambda self, **kw: None)
    v = OrcaVectorEnv("circle_dense", 4, seed=0, num_threads=2)
    v.reset()
    v.step(np.zeros((v.num_envs, 2)))
    threads = list(v._batch._pool._threads)
    del v
    gc.collect()
    for t in threads:
        t.join(timeout=5.0)
    assert not any(t.is_alive() for t in threads)


def test_workers_stop_spinning_for_a_while_once_one_came_late():
    """A spinning worker that came late had no free core: spinning is dropped, then retried."""
    from orca_env import pipeline

    pool = pipeline.Workers(1)
    try:
        assert pool.ctrl[1] == pipeline._IDLE_SPINS
        pool._adapt(True)
        assert pool.ctrl[1] == pipeline._IDLE_SPINS  # on time: spinning stays
        pool._adapt(False)
        assert pool.ctrl[1] == 0
        for _ in range(pipeline._BUSY_CALLS - 1):
            pool._adapt(True)
            assert pool.ctrl[1] == 0
        pool._adapt(True)
        assert pool.ctrl[1] == pipeline._IDLE_SPINS
    finally:
        pool.close()


def test_a_hand_off_calls_a_worker_late_only_if_it_was_spinning():
    """hand_off: 1 entered; 0 not entered though every worker spun; -1 one had given up."""
    from orca_env.stages import await_job, hand_off

    ctrl = np.zeros(4, dtype=np.int64)  # one worker: [job, budget, done, spin flag]
    claim = np.array([0, 1, 0], dtype=np.int64)
    assert hand_off(ctrl, 1, claim, 1, 1000, 10) == -1  # its flag is down: asleep
    assert ctrl[0] == 1
    ctrl[3] = 1  # spinning, but it never enters
    assert hand_off(ctrl, 2, claim, 1, 1000, 10) == 0
    claim[2] = 1  # it entered
    assert hand_off(ctrl, 3, claim, 1, 1000, 10) == 1
    # The worker's side: the flag is down once it gives up, and it still sees a job published
    # before its last look.
    assert not await_job(ctrl, 0, 3, 100)
    assert ctrl[2] == 3 and ctrl[3] == 0
    ctrl[0] = 4
    assert await_job(ctrl, 0, 3, 0)  # no spin at all: the last look finds it
    assert await_job(ctrl, 0, 3, 100) and ctrl[3] == 1  # found spinning: still up


def test_a_worker_that_had_stopped_spinning_does_not_stop_the_spinning(monkeypatch):
    """Workers that slept (or were on their way to sleep) need a wake-up: no verdict on cores.

    Before the spin flags, a worker that had given up spinning but had not yet taken the GIL to
    register its sleep counted as late, so the pool stopped spinning for 64 calls again and again
    (measured: 286 of 303 calls at 256 worlds, no side work, two threads 1.58x one).
    """
    from orca_env import pipeline

    codes = iter([-1, -1, 0])
    real = pipeline.hand_off

    def fake(ctrl, job, claim, others, spins, wake_spins):
        real(ctrl, job, claim, others, 0, 0)  # publish; the worker runs the job as usual
        return next(codes)

    monkeypatch.setattr(pipeline, "hand_off", fake)
    pool = pipeline.Workers(1)
    try:
        claim = np.array([0, 1, 0], dtype=np.int64)
        for _ in range(2):
            pool.run(lambda: None, (), claim, lambda entered: None)
            assert pool.ctrl[1] == pipeline._IDLE_SPINS
        pool.run(lambda: None, (), claim, lambda entered: None)
        assert pool.ctrl[1] == 0  # every worker spun and one came late
    finally:
        pool.close()
