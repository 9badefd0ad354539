"""CrowdNav's circle-crossing scenario, with CrowdNav's own test cases as a layout."""

from __future__ import annotations

import numpy as np

from .base import (
    RANDOM_RADIUS,
    RANDOM_SPEED,
    DiscGrid,
    Scenario,
    SpawnError,
    World,
    sample_pairs,
)

#: CrowdNav's seed of test case 0. Its ``CrowdSim.reset(phase='test')`` calls
#: ``np.random.seed(counter_offset['test'] + case_counter['test'])`` with
#: ``counter_offset = {'train': case_capacity['val'] + case_capacity['test'], 'val': 0,
#: 'test': case_capacity['val']}`` and ``case_capacity = {'val': 1000, 'test': 1000, ...}``
#: (``crowd_sim/envs/crowd_sim.py``): test case ``i`` is seed ``1000 + i``, validation case ``i``
#: seed ``i``, training case ``i`` seed ``2000 + i``.
CROWDNAV_TEST_SEED = 1000
#: CrowdNav's ``case_capacity['test']``: test seeds stay below the training ones (2000..).
CROWDNAV_TEST_CAPACITY = 1000
#: CrowdNav's ``test_size`` (``crowd_nav/configs/env.config``): its test phase runs cases
#: 0..499 (``case_counter`` wraps modulo ``test_size``).
CROWDNAV_TEST_SIZE = 500
#: CrowdNav's seed of validation case 0 (``counter_offset['val']``): validation case ``i`` is
#: seed ``i``, below the test seeds.
CROWDNAV_VAL_SEED = 0
#: CrowdNav's ``case_capacity['val']``: validation seeds stay below the test ones (1000..).
CROWDNAV_VAL_CAPACITY = 1000
#: CrowdNav's ``val_size`` (``crowd_nav/configs/env.config``): its validation phase runs cases
#: 0..99 (``case_counter['val']`` wraps modulo ``val_size``).
CROWDNAV_VAL_SIZE = 100
#: Values of the ``split`` parameter: which of CrowdNav's fixed case sets ``crowdnav_test`` runs.
SPLITS = ("test", "val")
#: Values of the ``layout`` parameter.
LAYOUTS = ("random", "crowdnav_test")


def _dist(dx: float, dy: float) -> float:
    """``np.linalg.norm((dx, dy))``, CrowdNav's own call in its rejection tests.

    The same call, not ``hypot`` or ``sqrt(dx*dx + dy*dy)``: those differ from it in the last
    bit for about one pair in twelve, and a draw at the rejection distance would then be
    accepted here and rejected there.
    """
    return float(np.linalg.norm((dx, dy)))


class CrowdNavCircle(Scenario):
    """CrowdNav's ``circle_crossing`` (Chen et al. 2019, ``crowd_sim.py``).

    Each agent starts at ``circle_radius * (cos a, sin a) + noise`` with ``a ~ U(0, 2 pi)`` and
    noise ``U(-0.5, 0.5) * v_pref`` per axis, and heads for the point opposite the origin
    (goal = -start); a draw is rejected when it comes within ``r_i + r_j + discomfort_dist`` of
    another start or goal. With ``robot_fixed`` (default) slot 0 is CrowdNav's robot: start
    ``(0, -circle_radius)``, goal ``(0, circle_radius)``. Defaults are CrowdNav's: time step 0.25,
    time limit 25 s (100 steps), radius 0.3, pref speed 1, max speed 1, and its ORCA humans'
    neighbor_dist 10, max_neighbors 10, time_horizon 5, time_horizon_obst 5. Default groups: one
    learned robot that stops at its goal and 5 ORCA humans that stay at theirs.

    Layouts (parameter ``layout``):

    * ``random`` (default): the rule above by batched rejection sampling from the env's
      generator (:func:`~orca_env.scenarios.base.sample_pairs`, noise with v_pref 1), so a seed
      gives its own layout, not CrowdNav's.
    * ``crowdnav_test``: CrowdNav's test cases, case by case. The episode's case is
      ``(seed + episode) % test_cases`` (``Scenario.start_episode``: ``seed`` is the seed given
      to ``reset``, ``episode`` counts the ``reset()`` calls since without a seed, as CrowdNav's
      ``case_counter`` counts its resets). The evaluation seeds ``10000 + k`` therefore give
      case ``k`` (10000 is a multiple of 500): ``orca-env eval ... --episodes 500`` runs
      CrowdNav's 500 test cases in its order. Case ``i`` is drawn as CrowdNav draws it, from a
      ``np.random.RandomState(1000 + i)`` (:data:`CROWDNAV_TEST_SEED`; CrowdNav seeds numpy's
      global generator with the same number, a private ``RandomState`` gives the same stream
      without touching global state): slot 0 is the robot, ``(0, -circle_radius) -> (0,
      circle_radius)``, with no draw; then slot after slot, for a slot whose group has
      ``randomize_attributes``, ``v_pref ~ U(0.5, 1.5)`` and ``radius ~ U(0.3, 0.5)``, then
      draws of ``angle, noise_x, noise_y`` (``U(0, 1)`` each, scaled as above with the slot's
      v_pref, its ``max_speed``) until the start is at least ``r_i + r_j + discomfort_dist`` from
      the start and from the goal of every slot before it (CrowdNav's ``generate_circle_crossing_
      human``). CrowdNav retries forever; here a slot gives up after ``MAX_TRIES`` draws with
      ``SpawnError`` (never reached with CrowdNav's 5 humans). ``test_cases`` (default 500,
      CrowdNav's ``test_size``) may be at most 1000, CrowdNav's test capacity: seeds from
      2000 on are its training cases.

    Splits (parameter ``split``, with ``layout: crowdnav_test``): ``test`` (default) gives the
    test cases above; ``val`` gives CrowdNav's validation cases instead, as its
    ``reset(phase='val')`` does: case ``(seed + episode) % val_cases`` (default 100, CrowdNav's
    ``val_size``; at most 1000, its validation capacity), drawn by the same rules from
    ``np.random.RandomState(0 + case)`` (:data:`CROWDNAV_VAL_SEED`), so no validation case is a
    test case. Model selection runs on ``split: val``; the test cases only report. (CrowdNav
    draws its validation cases with its ``train_val_sim`` rule, circle crossing by default, and
    with a single human for policies without ``multiagent_training``; here the scenario's own
    rule and the config's humans draw them.) :attr:`case_seed` is the numpy seed of the
    episode's case, CrowdNav's own name for it: validation case ``i`` is ``i``, test case ``i``
    is ``1000 + i``.

    CrowdNav's default test setting (invisible robot, ORCA padding, its time limit and collision
    rule) is ``configs/crowdnav_circle_invisible.yaml``.

    Version History:
        v0: initial version; the ``layout``, ``test_cases``, ``split`` and ``val_cases``
        parameters were added later, with defaults that keep the original layouts.
    """

    name = "crowdnav_circle_v0"
    PARAMS = dict(circle_radius=4.0, discomfort_dist=0.2, robot_fixed=True, layout="random",
                  test_cases=CROWDNAV_TEST_SIZE, split="test", val_cases=CROWDNAV_VAL_SIZE)
    POSITIVE = ("circle_radius", "test_cases", "val_cases")
    #: Parameters that only choose which of CrowdNav's fixed cases a seed gives (the episode
    #: itself is named by :attr:`case_seed`): ``orca_env.evaluation.bench.episode_keys`` leaves
    #: them out of an entry's identity.
    CASE_PARAMS = ("split", "test_cases", "val_cases")
    AGENT_DEFAULTS = dict(radius=0.3, max_speed=1.0, pref_speed=1.0, neighbor_dist=10.0,
                          max_neighbors=10, time_horizon=5.0, time_horizon_obst=5.0)
    MAX_STEPS = 100
    OBS_DEFAULTS = dict(num_agents=5, num_obstacles=0, range=8.0)
    DEFAULT_GROUPS = [dict(population="learned", count=1, on_goal="stop"),
                      dict(population="orca", count=5, on_goal="stay")]

    #: CrowdNav test case of the current episode (``crowdnav_test`` layout), else None.
    case: int | None = None

    def check_params(self):
        """``layout`` and ``split`` are known; CrowdNav's cases need the robot, fit its capacity."""
        self._require(self.layout in LAYOUTS, "layout", f"one of {list(LAYOUTS)}")
        self._require(self.test_cases <= CROWDNAV_TEST_CAPACITY, "test_cases",
                      f"at most {CROWDNAV_TEST_CAPACITY} (CrowdNav's test capacity: its seeds "
                      f"from {CROWDNAV_TEST_SEED + CROWDNAV_TEST_CAPACITY} on are training cases)")
        self._require(self.val_cases <= CROWDNAV_VAL_CAPACITY, "val_cases",
                      f"at most {CROWDNAV_VAL_CAPACITY} (CrowdNav's validation capacity: its "
                      f"seeds from {CROWDNAV_VAL_SEED + CROWDNAV_VAL_CAPACITY} on are test cases)")
        self._require(self.split in SPLITS, "split", f"one of {list(SPLITS)}")
        if self.layout == "crowdnav_test":
            self._require(self.robot_fixed, "robot_fixed",
                          "true with layout crowdnav_test (slot 0 is CrowdNav's robot)")
        else:
            self._require(self.split == "test", "split",
                          "'test' (the default) unless layout is crowdnav_test (the random "
                          "layout draws from the env's seed, not from CrowdNav's cases)")

    def start_episode(self, seed, episode):
        """With ``layout: crowdnav_test``, the episode's case, ``(seed + episode) % test_cases``.

        With ``split: val``, ``(seed + episode) % val_cases``, a validation case.
        """
        if self.layout != "crowdnav_test":
            self.case = None
        else:
            self.case = (seed + episode) % (self.val_cases if self.split == "val"
                                            else self.test_cases)

    @property
    def case_seed(self) -> int | None:
        """The numpy seed CrowdNav draws the episode's case from (None with the random layout).

        CrowdNav's own name for a case: validation case ``i`` is seed ``i``, test case ``i``
        seed ``1000 + i``.
        """
        if self.case is None:
            return None
        base = CROWDNAV_VAL_SEED if self.split == "val" else CROWDNAV_TEST_SEED
        return base + int(self.case)

    def build_world(self, rng):
        """An empty world sized to the circle."""
        return World(extent=self.circle_radius + 1.5)

    def robot_start(self) -> tuple[float, float]:
        """CrowdNav's robot start; its goal is the opposite point."""
        return 0.0, -self.circle_radius

    def place_agents(self, rng, sim, radii):
        """Noisy starts on the circle with antipodal goals; slot 0 fixed if ``robot_fixed``."""
        r = self.circle_radius

        def sampler(rng, i, b):
            if i == 0 and self.robot_fixed:
                s = np.tile([0.0, -r], (b, 1))
                return s, -s
            ang = rng.random(b) * 2.0 * np.pi
            noise = rng.random((b, 2)) - 0.5  # CrowdNav: (U - 0.5) * v_pref, with v_pref = 1
            s = r * np.stack([np.cos(ang), np.sin(ang)], axis=1) + noise
            return s, -s

        return sample_pairs(rng, sim, radii, sampler, margin=self.discomfort_dist,
                            max_tries=self.MAX_TRIES, scenario=self.name)

    def populate(self, rng, sim, radii, max_speeds, randomized):
        """The default, or with ``layout: crowdnav_test`` the episode's CrowdNav case."""
        if self.layout != "crowdnav_test":
            return super().populate(rng, sim, radii, max_speeds, randomized)
        starts, goals = self.crowdnav_case(self.case, radii, max_speeds, randomized)
        return starts, goals, radii, max_speeds

    def crowdnav_case(self, case: int, radii: np.ndarray, max_speeds: np.ndarray,
                      randomized: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """CrowdNav's case ``case`` of the ``split`` (see the class docstring), deterministic.

        Args:
            case: Case index, ``0 <= case < 1000``.
            radii: ``(n,)`` radius per slot; randomized slots are overwritten in place.
            max_speeds: ``(n,)`` v_pref per slot; randomized slots are overwritten in place.
            randomized: ``(n,)`` bool, slots with ``randomize_attributes``.

        Returns:
            ``(starts, goals)``, ``(n, 2)`` float64 each.

        Raises:
            ValueError: If slot 0 (the robot) is randomized: CrowdNav never randomizes it.
            SpawnError: If a slot finds no place in ``MAX_TRIES`` draws.
        """
        if randomized[0]:
            raise ValueError(f"{self.name} layout crowdnav_test: slot 0 is CrowdNav's robot, "
                             f"whose attributes CrowdNav does not randomize; set "
                             f"randomize_attributes on the human groups only")
        # CrowdNav seeds numpy's global generator with np.random.seed(1000 + case) (test) or
        # np.random.seed(case) (val); a private legacy RandomState with the same seed yields the
        # same numbers in the same order.
        base = CROWDNAV_VAL_SEED if self.split == "val" else CROWDNAV_TEST_SEED
        rs = np.random.RandomState(base + int(case))
        n = len(radii)
        starts = np.zeros((n, 2))
        goals = np.zeros((n, 2))
        starts[0] = self.robot_start()
        goals[0] = -starts[0]
        # Starts (entry 2j) and goals (2j + 1) placed so far: each draw is measured against
        # the nearby ones only (CrowdNav measures all: the same decisions, in O(n) not O(n^2)).
        top = max(float(radii.max()), RANDOM_RADIUS[1] if randomized.any() else 0.0)
        grid = DiscGrid(2 * n, top, self.discomfort_dist)
        grid.add(np.stack([starts[0], goals[0]]), radii[[0, 0]])
        for h in range(1, n):
            if randomized[h]:
                # Agent.sample_random_attributes: v_pref first, then the radius.
                max_speeds[h] = rs.uniform(*RANDOM_SPEED)
                radii[h] = rs.uniform(*RANDOM_RADIUS)
            starts[h], goals[h] = self._crowdnav_human(rs, h, grid, radii, max_speeds)
            grid.add(np.stack([starts[h], goals[h]]), radii[[h, h]])
        return starts, goals

    def _crowdnav_human(self, rs, h, grid, radii, v_pref):
        """CrowdNav's ``generate_circle_crossing_human`` for slot ``h`` against slots ``< h``.

        ``grid`` (a :class:`~orca_env.scenarios.base.DiscGrid`) holds the starts (entry
        ``2j``) and goals (``2j + 1``) of the slots ``< h``; a draw is refused when it is
        closer than ``radii[h] + radii[j] + discomfort_dist`` to any of them, as CrowdNav's
        loop over all of them refuses it.
        """
        for _ in range(self.MAX_TRIES):
            angle = rs.random_sample() * np.pi * 2
            px_noise = (rs.random_sample() - 0.5) * v_pref[h]
            py_noise = (rs.random_sample() - 0.5) * v_pref[h]
            px = self.circle_radius * np.cos(angle) + px_noise
            py = self.circle_radius * np.sin(angle) + py_noise
            for q in grid.near(px, py):
                min_dist = radii[h] + radii[q // 2] + self.discomfort_dist
                if _dist(px - grid.xy[q, 0], py - grid.xy[q, 1]) < min_dist:
                    break
            else:
                return (px, py), (-px, -py)
        raise SpawnError(f"{self.name}: CrowdNav test case {self.case}: slot {h} found no start "
                         f"in {self.MAX_TRIES} draws; use fewer agents or smaller radii")
