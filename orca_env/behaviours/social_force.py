"""``social_force``: Helbing and Molnár's social force model, as pysocialforce parameterises it.

Each step a social-force agent ``a`` feels (Helbing & Molnár 1995, "Social force model for
pedestrian dynamics", Phys. Rev. E 51; pysocialforce 1.1.2's ``GoalAttractiveForce``,
``PedRepulsiveForce`` and ``SpaceRepulsiveForce``, ``forces.py`` and ``potentials.py``)::

    F_a = (min(v0_a, d_a) e_a - v_a) / tau                            goal attraction
        + ped_factor * sum_b w(e_a, -f_ab) f_ab                       other agents
        + space_factor * sum_B u0 / r exp(-|r_aB| / r) r_aB / |r_aB|  obstacle segments

with ``e_a`` the unit vector to the agent's target (its goal or guidance waypoint), ``d_a``
the distance to its goal (m, read as m/s: see below), ``v0_a`` its ``pref_speed``
(pysocialforce's initial speed), ``f_ab = -grad_r V(b)`` of the elliptical potential
``V(b) = v0 exp(-b / sigma)``, whose semi-minor axis
``2 b = sqrt((|r_ab| + |r_ab - s e_b|)^2 - s^2)`` uses ``r_ab = r_a - r_b``, ``s = |v_b| dt``
(pysocialforce's step width, here the env's time step) and ``e_b`` b's direction to its own
target; ``w = 1`` when ``-f_ab`` lies within ``fov_phi`` of ``e_a``, else
``fov_factor``; ``r_aB`` is the vector from the closest point of segment ``B`` to the agent. Then
(pysocialforce's ``PedState.step``, semi-implicit Euler)::

    v_a <- clip(v_a + dt F_a, min(max_speed_factor * v0_a, max_speed))

is the agent's preferred velocity; ORCA realises it (see below) and the position advances by the
realised velocity, which is the next step's ``v_a``.

Defaults, with pysocialforce's names (its ``config/default.toml`` and ``scene.py``):

======================  =========  ==========================================================
key                     default    pysocialforce
======================  =========  ==========================================================
``tau``                 0.5 s      ``tau`` (``PedState``, the relaxation time)
``v0``                  2.1 m²/s²  ``ped_repulsive_force.v0``
``sigma``               0.3 m      ``ped_repulsive_force.sigma``
``ped_factor``          1.5        ``ped_repulsive_force.factor``
``fov_phi``             100 deg    ``ped_repulsive_force.fov_phi`` (half of a 200 deg view)
``fov_factor``          0.5        ``ped_repulsive_force.fov_factor`` (Helbing's c)
``u0``                  10 m²/s²   ``space_repulsive_force.u0``
``r``                   0.2 m      ``space_repulsive_force.r``
``space_factor``        1.0        ``space_repulsive_force.factor``
``max_speed_factor``    1.3        ``max_speed_multiplier``
``cutoff``              3.0 m      none (pysocialforce sums over every pedestrian)
======================  =========  ==========================================================

Two more models, off by default, for crowds that press through doors (pysocialforce's wall
potential closes a 1.2 m door to 0.3 m discs: its push ``u0 / r exp(-D / r)`` equals the goal
force 2 m/s² at D = 0.6 m from each jamb). Helbing, Farkas and Vicsek 2000 ("Simulating
dynamical features of escape panic", Nature 407, 487), per unit mass ``mass``, with
``g = r_a + r_b - d_ab`` (radii, centre distance; ``r_a - d_aW`` to a wall), ``n`` the unit
vector from b (the wall's closest point) to a and ``t`` its left normal::

    + sum_b [ w A exp(g / B) + k max(g, 0) ] n + kappa max(g, 0) ((v_b - v_a) . t) t   others
    + sum_W [ wall_A exp(g / B) + k max(g, 0) ] n - kappa max(g, 0) (v_a . t) t      walls

(``w`` the field-of-view weight above, 1 in their model); and pysocialforce's
``SocialForce`` (Moussaïd, Helbing, Garnier, Johansson, Combe and Theraulaz 2009,
"Experimental study of the behavioural mechanisms underlying self-organization in human
crowds", Proc. R. Soc. B 276, 2755), with ``D = lambda_importance (v_b - v_a) + e_ba``, ``t``
its direction, ``theta`` the angle from ``e_ba`` (unit, from b to a) to ``t`` and
``B = gamma |D|``::

    + social_factor sum_b exp(-d_ab / B) [ exp(-(n_prime B theta)^2) t
                                           - sign(theta) exp(-(n B theta)^2) left(t) ]

Keys (the group key ``social_force``): ``A`` 0 N, ``wall_A`` 0 N, ``B`` 0.08 m, ``k`` 0 kg/s²,
``kappa`` 0 kg/(m s), ``mass`` 80 kg, ``substeps`` 1; ``social_factor`` 0, and
pysocialforce's ``lambda_importance`` 2, ``gamma`` 0.35, ``n`` 2, ``n_prime`` 3. ``model``
sets defaults first: ``pysocialforce`` (the table above) or ``helbing_farkas_vicsek`` (their
constants A = wall_A = 2e3 N, B = 0.08 m, k = 1.2e5 kg/s², kappa = 2.4e5 kg/(m s), 80 kg;
``fov_factor`` 1, ``ped_factor`` and ``space_factor`` 0, 10 sub-steps). The body force is
stiff (sqrt(k / m) = 39 /s): one 0.25 s step is unstable, so with ``substeps`` S > 1 each
world integrates S semi-implicit Euler steps of dt / S (0.025 s at S = 10: omega h = 0.97)
with every force recomputed, its other agents moving at their velocities, and hands ORCA the
mean velocity (displacement / dt). The friction is capped at what stops the sliding within a
sub-step (half each for two agents), so it never reverses it. A polygon vertex nearest to the
agent counts once in these terms (pysocialforce's potential counts it once per edge).
Differences from pysocialforce's ``SocialForce``: ``theta`` is wrapped to [-pi, pi] (it
subtracts two ``atan2`` angles, so pairs straddling pi lose their sideways push), and
``cutoff`` applies.

Differences from pysocialforce, on purpose: the gradients are analytic (pysocialforce takes
forward differences with a 1e-3 m step); a wall is the exact closest point of each segment
(pysocialforce samples its lines every 0.1 m); within ``v0_a`` metres of its goal the desired
speed is the distance per second (the built-in goal steering's rule; the distance is to the
goal, so a guidance waypoint on the way does not slow it; pysocialforce instead stops dead
within 0.5 m of the goal, and leaves arrival to its user), so that an agent arrives within the
scenario's goal tolerance instead of orbiting a goal it overshoots; agents farther than
``cutoff`` (centre to centre, or to a segment) are skipped, which bounds the work per agent in
a dense crowd: beyond 3 m a pedestrian's push is below about 2e-3 m/s² (``ped_factor * v0 /
sigma * exp(-(3 - s/2) / sigma)``) and a wall's below 1e-5 m/s². With those, forces agree with
pysocialforce's to about 2e-3 of their size and trajectories to millimetres over 7 s
(``tests/env/test_social_force.py`` measures both).

How ORCA treats them: a social-force agent avoids no agent in ORCA (``avoids_agents=False``,
core avoid mask 0): its avoidance is the social force, and ORCA on top would make it a second,
stiffer ORCA agent. Walls still bind it through ORCA's obstacle lines, so a fast agent cannot
cross a thin wall that the soft wall potential does not stop; set ``time_horizon_obst`` to
about the time step for the group so that those lines act only on contact and the potential
does the steering (the shipped social-force configs do). The others (ORCA agents, robots)
avoid it as an ORCA agent that takes its half (``responsibility`` 1: it does react, through
its forces). Visibility: agent ``a`` feels ``b`` only when ``a`` avoids ``b`` by the groups'
``avoids`` / ``visible_to``, so CrowdNav's invisible robot (``visible_to: []``) exerts no force
on social-force humans.

The forces are one numba kernel over every world's social-force slots (neighbours within the
world's slot range); parameters come from ``groups[i].social_force``, validated here.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
from numba import njit

from .base import Behaviour, register_behaviour

__all__ = ["DEFAULTS", "MODELS", "resolved", "social_forces", "steer", "sub_stepped"]

#: Parameter defaults (pysocialforce 1.1.2's), in the column order of the per-slot table. The
#: first eleven are Helbing and Molnar's model as pysocialforce's ``PedRepulsiveForce`` and
#: ``SpaceRepulsiveForce``; ``A`` .. ``substeps`` and ``wall_A`` Helbing, Farkas and Vicsek's
#: repulsion and contact forces (off: ``A``, ``wall_A``, ``k``, ``kappa`` 0, one step);
#: ``social_factor`` .. ``n_prime`` pysocialforce's ``SocialForce`` (Moussaid et al. 2009,
#: off: ``social_factor`` 0, its other constants pysocialforce's).
DEFAULTS = {"tau": 0.5, "v0": 2.1, "sigma": 0.3, "ped_factor": 1.5, "fov_phi": 100.0,
            "fov_factor": 0.5, "u0": 10.0, "r": 0.2, "space_factor": 1.0,
            "max_speed_factor": 1.3, "cutoff": 3.0,
            "A": 0.0, "B": 0.08, "k": 0.0, "kappa": 0.0, "mass": 80.0, "substeps": 1,
            "social_factor": 0.0, "lambda_importance": 2.0, "gamma": 0.35, "n": 2.0,
            "n_prime": 3.0, "wall_A": 0.0}
_COL = {k: j for j, k in enumerate(DEFAULTS)}
#: ``model`` presets: the defaults each sets before the group's own keys apply.
#: ``helbing_farkas_vicsek`` is Helbing, Farkas and Vicsek 2000 (Nature 407, 487), their
#: constants: A = 2e3 N, B = 0.08 m, k = 1.2e5 kg/s^2, kappa = 2.4e5 kg/(m s), m = 80 kg, an
#: isotropic repulsion (fov_factor 1), pysocialforce's ellipse and wall potential off, and 10
#: sub-steps of the env's step (0.025 s at 0.25 s: measured stable, docs/humans.md).
MODELS = {"pysocialforce": {},
          "helbing_farkas_vicsek": {"A": 2000.0, "wall_A": 2000.0, "B": 0.08, "k": 1.2e5,
                                    "kappa": 2.4e5, "mass": 80.0, "ped_factor": 0.0,
                                    "space_factor": 0.0, "fov_factor": 1.0, "substeps": 10}}
#: Keys that must be positive (others only non-negative), and upper bounds.
_POSITIVE = ("tau", "sigma", "r", "max_speed_factor", "cutoff", "B", "mass", "substeps",
             "gamma")
_MAXIMUM = {"fov_phi": 180.0, "fov_factor": 1.0, "substeps": 100}
_INTEGER = ("substeps",)


def _check(g, where: str) -> None:
    """Validate ``groups[i].social_force``: known keys, finite numbers, no negative force."""
    params = g.social_force or {}
    for k, v in params.items():
        key = f"{where}.social_force.{k}"
        if k == "model":
            if v not in MODELS:
                raise ValueError(f"config key {key!r} must be one of {sorted(MODELS)}, got {v!r}")
            continue
        if k not in DEFAULTS:
            raise ValueError(f"config key {key!r} is unknown; valid keys: "
                             f"{sorted([*DEFAULTS, 'model'])}")
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(v):
            raise ValueError(f"config key {key!r} must be a finite number, got {v!r}")
        if v < 0 or (k in _POSITIVE and v == 0):
            need = "positive" if k in _POSITIVE else "non-negative (a force parameter)"
            raise ValueError(f"config key {key!r} must be {need}, got {v!r}")
        if k in _MAXIMUM and v > _MAXIMUM[k]:
            raise ValueError(f"config key {key!r} must be at most {_MAXIMUM[k]}, got {v!r}")
        if k in _INTEGER and v != int(v):
            raise ValueError(f"config key {key!r} must be a whole number, got {v!r}")


def resolved(params: dict | None) -> dict:
    """A group's ``social_force`` mapping with its ``model``'s defaults and pysocialforce's."""
    params = dict(params or {})
    model = MODELS[params.pop("model", "pysocialforce")]
    return {**DEFAULTS, **model, **params}


def _params(wc) -> np.ndarray:
    """(n, len(DEFAULTS)) float64 per-slot parameters of a world config (fov_phi as cos)."""
    rows = []
    for g in wc.groups:
        p = resolved(g.social_force)
        p["fov_phi"] = math.cos(math.radians(p["fov_phi"]))
        rows.append([float(p[k]) for k in DEFAULTS])
    return np.asarray(rows, dtype=np.float64).reshape(-1, len(DEFAULTS))[wc.table.group]


def _sense_masks(wc) -> np.ndarray:
    """(n,) int64 whom each slot feels: the avoid masks as if it avoided agents in ORCA."""
    return wc.table.sense_masks


@njit(cache=True, no_cfunc_wrapper=True, inline="always")
def _closest_on_segment(px, py, ax, ay, bx, by):
    """The point of segment ab closest to p, and its parameter along ab (0 at a, 1 at b)."""
    dx, dy = bx - ax, by - ay
    ll = dx * dx + dy * dy
    s = 0.0 if ll <= 0.0 else ((px - ax) * dx + (py - ay) * dy) / ll
    s = min(max(s, 0.0), 1.0)
    return ax + s * dx, ay + s * dy, s


@njit(cache=True, no_cfunc_wrapper=True, error_model="numpy")
def _force_on(i, b, off, pos, vel, active, layer, sense, targets, goals, pref_speed, radius,
              params, step, h, obst_points, obst_next, obst_off):
    """The social force (m/s²) on slot ``i`` of world ``b``; ``h`` the integration step, s."""
    p = params[i]
    tau, v0, sigma, pf = p[0], p[1], p[2], p[3]
    cosphi, c, u0, rr = p[4], p[5], p[6], p[7]
    sf, cutoff = p[8], p[10]
    a_rep, b_rep, k_body, kappa, mass = p[11], p[12], p[13], p[14], p[15]
    msf, lam, gam, nn, nnp, wall_a = p[17], p[18], p[19], p[20], p[21], p[22]
    contact = a_rep > 0.0 or k_body > 0.0 or kappa > 0.0 or wall_a > 0.0
    cut_sq = cutoff * cutoff
    px, py = pos[i, 0], pos[i, 1]
    ex, ey = targets[i, 0] - px, targets[i, 1] - py
    d = math.sqrt(ex * ex + ey * ey)
    if d > 0.0:
        ex, ey = ex / d, ey / d
    else:
        ex, ey = 0.0, 0.0
    # Goal attraction: relax towards the desired velocity in tau. Within v0 * 1 s of the
    # goal the desired speed is the distance per second (the built-in goal steering's rule),
    # so that agents arrive instead of orbiting a goal they overshoot. The distance is to the
    # goal, not to a guidance waypoint on the way (the target then): an agent does not slow
    # down for the door it walks through.
    gx, gy = goals[i, 0] - px, goals[i, 1] - py
    v_des = min(pref_speed[i], math.sqrt(gx * gx + gy * gy))
    fx = (v_des * ex - vel[i, 0]) / tau
    fy = (v_des * ey - vel[i, 1]) / tau
    for j in range(off[b], off[b + 1]):
        if j == i or not active[j] or (sense[i] & layer[j]) == 0:
            continue
        rx, ry = px - pos[j, 0], py - pos[j, 1]
        a_sq = rx * rx + ry * ry
        if a_sq > cut_sq or a_sq == 0.0:
            continue
        A = math.sqrt(a_sq)
        if pf != 0.0:
            # b's step along its own desired direction shapes the ellipse.
            gx, gy = targets[j, 0] - pos[j, 0], targets[j, 1] - pos[j, 1]
            gd = math.sqrt(gx * gx + gy * gy)
            s = math.sqrt(vel[j, 0] * vel[j, 0] + vel[j, 1] * vel[j, 1]) * step
            if gd > 0.0:
                gx, gy = gx / gd, gy / gd
            else:
                gx, gy = 0.0, 0.0
            ux, uy = rx - s * gx, ry - s * gy
            Bn = math.sqrt(ux * ux + uy * uy)
            bb = 0.5 * math.sqrt(max((A + Bn) * (A + Bn) - s * s, 0.0))
            # On the ellipse's focal segment (bb or Bn 0) there is no direction to push along.
            if bb > 1e-12 and Bn != 0.0:
                # f = -grad V = V / sigma * db/dr, db/dr = (A + B) (r/A + u/B) / (4 b).
                kk = v0 * math.exp(-bb / sigma) / sigma * (A + Bn) / (4.0 * bb)
                gfx = kk * (rx / A + ux / Bn)
                gfy = kk * (ry / A + uy / Bn)
                # Field of view: full weight when b (the direction -f) is within phi of e_a.
                w = 1.0 if -(ex * gfx + ey * gfy) > math.sqrt(gfx * gfx + gfy * gfy) * cosphi \
                    else c
                fx += pf * w * gfx
                fy += pf * w * gfy
        if msf != 0.0:
            # Moussaid et al. 2009 as pysocialforce's SocialForce: interaction vector
            # D = lambda (v_b - v_a) + e (e from b to a), B = gamma |D|, theta the angle from
            # e to D, wrapped to [-pi, pi] (pysocialforce does not wrap it).
            ex2, ey2 = rx / A, ry / A
            dxv = lam * (vel[j, 0] - vel[i, 0]) + ex2
            dyv = lam * (vel[j, 1] - vel[i, 1]) + ey2
            dl = math.sqrt(dxv * dxv + dyv * dyv)
            if dl > 0.0:
                tx2, ty2 = dxv / dl, dyv / dl
                th = math.atan2(ty2, tx2) - math.atan2(ey2, ex2)
                if th > math.pi:
                    th -= 2.0 * math.pi
                elif th < -math.pi:
                    th += 2.0 * math.pi
                bm = gam * dl
                fv = math.exp(-A / bm - (nnp * bm * th) ** 2)
                sg = 1.0 if th > 0.0 else (-1.0 if th < 0.0 else 0.0)
                fa = -sg * math.exp(-A / bm - (nn * bm * th) ** 2)
                fx += msf * (fv * tx2 + fa * -ty2)
                fy += msf * (fv * ty2 + fa * tx2)
        if contact:
            # Helbing, Farkas and Vicsek 2000: A exp((r_ab - d_ab) / B) n_ab, and when the
            # discs touch k g n_ab + kappa g (dv . t) t, g = r_ab - d_ab; per unit mass.
            nx, ny = rx / A, ry / A
            gap = radius[i] + radius[j] - A
            w = 1.0 if -(ex * nx + ey * ny) > cosphi else c
            push = w * a_rep * math.exp(gap / b_rep)
            if gap > 0.0:
                push += k_body * gap
                tx, ty = -ny, nx
                dvt = (vel[j, 0] - vel[i, 0]) * tx + (vel[j, 1] - vel[i, 1]) * ty
                # The friction may at most halve the pair's sliding speed in one step
                # (both discs feel it): stable at any step.
                cf = min(kappa * gap, 0.5 * mass / h)
                fx += cf * dvt * tx / mass
                fy += cf * dvt * ty / mass
            fx += push * nx / mass
            fy += push * ny / mass
    o0 = obst_off[b]
    for v in range(o0, obst_off[b + 1]):
        nxt = obst_next[v]
        two = obst_next[o0 + nxt] == v - o0
        if two and nxt < v - o0:
            continue  # a two-vertex obstacle stores its segment twice: count it once
        cx, cy, at = _closest_on_segment(px, py, obst_points[v, 0], obst_points[v, 1],
                                     obst_points[o0 + nxt, 0], obst_points[o0 + nxt, 1])
        rx, ry = px - cx, py - cy
        dd = rx * rx + ry * ry
        if dd > cut_sq or dd == 0.0:
            continue
        D = math.sqrt(dd)
        kk = sf * u0 / rr * math.exp(-D / rr) / D
        fx += kk * rx
        fy += kk * ry
        # A polygon's vertex closest to the agent is the end of one segment and the start of
        # the next: the contact model counts it once (at the end), pysocialforce's potential
        # twice (it samples both lines).
        if contact and not (at == 0.0 and not two):
            nx, ny = rx / D, ry / D
            gap = radius[i] - D
            push = wall_a * math.exp(gap / b_rep)
            if gap > 0.0:
                push += k_body * gap
                tx, ty = -ny, nx
                vt = vel[i, 0] * tx + vel[i, 1] * ty
                cf = min(kappa * gap, mass / h)  # at most stops the sliding in one step
                fx -= cf * vt * tx / mass
                fy -= cf * vt * ty / mass
            fx += push * nx / mass
            fy += push * ny / mass
    return fx, fy


@njit(cache=True, no_cfunc_wrapper=True, error_model="numpy")
def social_forces(slots, worlds, off, pos, vel, active, layer, sense, targets, goals,
                  pref_speed, radius, params, dt, obst_points, obst_next, obst_off, out):
    """The social force on each agent of ``slots`` (all worlds), into ``out``.

    Args:
        slots: (k,) int64 batch slots of the social-force agents.
        worlds: (k,) int64 world of each slot.
        off: (B + 1,) int64 slot offsets of the worlds.
        pos: (N, 2) float64 positions, m, world frame.
        vel: (N, 2) float64 velocities, m/s, world frame.
        active: (N,) bool, in the simulation.
        layer: (N,) int64 core layer bits.
        sense: (N,) int64 whom each slot feels (``a`` feels ``b``: ``sense[a] & layer[b]``).
        targets: (N, 2) float64 goals or waypoints, m (the direction of the goal force).
        goals: (N, 2) float64 goals, m (the distance of the arrival rule).
        pref_speed: (N,) float64 desired speeds, m/s.
        radius: (N,) float64 radii, m (the contact model's body sizes).
        params: (N, P) float64 per-slot parameters (columns of ``DEFAULTS``, fov as cos).
        dt: (B,) float64 time step per world, s (the ellipse's step width).
        obst_points: (V, 2) float64 the worlds' obstacle vertices, m.
        obst_next: (V,) int64 world-local index of each vertex's next vertex.
        obst_off: (B + 1,) int64 vertex offsets of the worlds.
        out: (k, 2) float64 output, m/s².
    """
    for q in range(slots.shape[0]):
        b = worlds[q]
        fx, fy = _force_on(slots[q], b, off, pos, vel, active, layer, sense, targets, goals,
                           pref_speed, radius, params, dt[b], dt[b], obst_points, obst_next,
                           obst_off)
        out[q, 0] = fx
        out[q, 1] = fy


@njit(cache=True, no_cfunc_wrapper=True, inline="always")
def _capped(vx, vy, cap):
    """``(vx, vy)`` scaled down to the speed ``cap`` if faster."""
    sp = math.sqrt(vx * vx + vy * vy)
    if sp > cap:
        return vx * cap / sp, vy * cap / sp
    return vx, vy


@njit(cache=True, no_cfunc_wrapper=True)
def _integrate(slots, worlds, vel, force, params, pref_speed, max_speed, dt, out):
    """``v + dt F`` clipped to ``min(max_speed_factor * pref_speed, max_speed)``, into ``out``."""
    for q in range(slots.shape[0]):
        i = slots[q]
        h = dt[worlds[q]]
        out[q, 0], out[q, 1] = _capped(vel[i, 0] + h * force[q, 0], vel[i, 1] + h * force[q, 1],
                                       min(params[i, 9] * pref_speed[i], max_speed[i]))


@njit(cache=True, no_cfunc_wrapper=True, error_model="numpy")
def sub_stepped(slots, worlds, off, pos, vel, active, layer, sense, targets, goals, pref_speed,
                radius, params, max_speed, dt, obst_points, obst_next, obst_off, out):
    """Preferred velocities of ``slots`` integrated over ``substeps`` sub-steps per world.

    World ``b`` takes ``S`` (its slots' largest ``substeps``) semi-implicit Euler steps of
    ``dt / S``: every social-force agent's velocity ``v + h F`` (clipped as in one step), then
    its position; the world's other agents move at their velocity. The preferred velocity is
    the mean over the step (displacement / dt), so that ORCA, realising it, puts the agent
    where the sub-steps did. With ``S`` 1 it is the one-step ``v + dt F`` exactly.
    Arguments as :func:`social_forces`, plus ``max_speed`` (N,) m/s; ``out`` (k, 2) m/s.
    """
    k = slots.shape[0]
    sub = 16  # the substeps column
    p = pos.copy()  # positions and velocities along the sub-steps; each world moves its own
    v = vel.copy()
    f = np.empty((k, 2))
    q0 = 0
    while q0 < k:
        b = worlds[q0]
        q1 = q0
        n_sub = 1
        while q1 < k and worlds[q1] == b:
            n_sub = max(n_sub, int(params[slots[q1], sub]))
            q1 += 1
        h = dt[b] / n_sub
        for _ in range(n_sub):
            for q in range(q0, q1):
                fx, fy = _force_on(slots[q], b, off, p, v, active, layer, sense, targets,
                                   goals, pref_speed, radius, params, dt[b], h, obst_points,
                                   obst_next, obst_off)
                f[q, 0] = fx
                f[q, 1] = fy
            for q in range(q0, q1):
                i = slots[q]
                v[i, 0], v[i, 1] = _capped(v[i, 0] + h * f[q, 0], v[i, 1] + h * f[q, 1],
                                           min(params[i, 9] * pref_speed[i], max_speed[i]))
            if n_sub > 1:
                for j in range(off[b], off[b + 1]):
                    if active[j]:
                        p[j, 0] += h * v[j, 0]
                        p[j, 1] += h * v[j, 1]
        for q in range(q0, q1):
            i = slots[q]
            if n_sub == 1:
                out[q, 0] = v[i, 0]
                out[q, 1] = v[i, 1]
            else:
                out[q, 0] = (p[i, 0] - pos[i, 0]) / dt[b]
                out[q, 1] = (p[i, 1] - pos[i, 1]) / dt[b]
        q0 = q1


def steer(view, slots: np.ndarray) -> np.ndarray:
    """Preferred velocities of the social-force ``slots`` (every world): ``(k, 2)`` m/s."""
    sl = view.slots
    params = view.per_slot("social_force.params", _params)
    sense = view.per_slot("social_force.sense", _sense_masks)
    worlds = view.world_of(slots)
    ob = view._obst
    out = np.empty((slots.size, 2))
    if (params[slots, _COL["substeps"]] > 1).any():
        sub_stepped(slots, worlds, view.offsets, sl.pos, sl.vel, sl.active, sl.layer, sense,
                    sl.targets, sl.goals, sl.pref_speed, sl.radius, params, sl.max_speed,
                    view.time_steps, ob.points, ob.next_ids, ob.off, out)
        return out
    force = np.empty((slots.size, 2))
    social_forces(slots, worlds, view.offsets, sl.pos, sl.vel, sl.active, sl.layer, sense,
                  sl.targets, sl.goals, sl.pref_speed, sl.radius, params, view.time_steps,
                  ob.points,
                  ob.next_ids, ob.off, force)
    _integrate(slots, worlds, sl.vel, force, params, sl.pref_speed, sl.max_speed,
               view.time_steps, out)
    return out


SOCIAL_FORCE = register_behaviour(Behaviour(
    name="social_force", steer=steer, avoids_agents=False, check=_check,
    doc="Helbing and Molnar's social force model with pysocialforce's parameters (goal "
        "attraction, elliptical repulsion from the agents it avoids, wall repulsion); ORCA "
        "avoids no agent for it, walls still bind it"))
