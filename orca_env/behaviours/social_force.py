"""``social_force``: Helbing and Molnár's social force model, as pysocialforce parameterises it.

Each step a social-force agent ``a`` feels (Helbing & Molnár 1995, "Social force model for
pedestrian dynamics", Phys. Rev. E 51; pysocialforce 1.1.2's ``GoalAttractiveForce``,
``PedRepulsiveForce`` and ``SpaceRepulsiveForce``, ``forces.py`` and ``potentials.py``)::

    F_a = (min(v0_a, d_a) e_a - v_a) / tau                            goal attraction
        + ped_factor * sum_b w(e_a, -f_ab) f_ab                       other agents
        + space_factor * sum_B u0 / r exp(-|r_aB| / r) r_aB / |r_aB|  obstacle segments

with ``e_a`` the unit vector to the agent's target at distance ``d_a`` (m, read as m/s: see
below), ``v0_a`` its ``pref_speed`` (pysocialforce's initial speed), ``f_ab = -grad_r V(b)``
of the elliptical potential ``V(b) = v0 exp(-b / sigma)``, whose semi-minor axis
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

Differences from pysocialforce, on purpose: the gradients are analytic (pysocialforce takes
forward differences with a 1e-3 m step); a wall is the exact closest point of each segment
(pysocialforce samples its lines every 0.1 m); within ``v0_a`` metres of its target the
desired speed is the distance per second (the built-in goal steering's rule; pysocialforce
instead stops dead within 0.5 m of the goal, and leaves arrival to its user), so that an agent
arrives within the scenario's goal tolerance instead of orbiting a goal it overshoots; agents
farther than ``cutoff`` (centre to
centre, or to a segment) are skipped, which bounds the work per agent in a dense crowd: beyond
3 m a pedestrian's push is below about 2e-3 m/s² (``ped_factor * v0 / sigma * exp(-(3 - s/2) /
sigma)``) and a wall's below 1e-5 m/s². With those, forces agree with pysocialforce's to
about 2e-3 of their size and trajectories to millimetres over 7 s
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

__all__ = ["DEFAULTS", "social_forces", "steer"]

#: Parameter defaults (pysocialforce 1.1.2's), in the column order of the per-slot table.
DEFAULTS = {"tau": 0.5, "v0": 2.1, "sigma": 0.3, "ped_factor": 1.5, "fov_phi": 100.0,
            "fov_factor": 0.5, "u0": 10.0, "r": 0.2, "space_factor": 1.0,
            "max_speed_factor": 1.3, "cutoff": 3.0}
_COL = {k: j for j, k in enumerate(DEFAULTS)}
#: Keys that must be positive (others only non-negative), and upper bounds.
_POSITIVE = ("tau", "sigma", "r", "max_speed_factor", "cutoff")
_MAXIMUM = {"fov_phi": 180.0, "fov_factor": 1.0}


def _check(g, where: str) -> None:
    """Validate ``groups[i].social_force``: known keys, finite numbers, no negative force."""
    params = g.social_force or {}
    for k, v in params.items():
        key = f"{where}.social_force.{k}"
        if k not in DEFAULTS:
            raise ValueError(f"config key {key!r} is unknown; valid keys: {sorted(DEFAULTS)}")
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(v):
            raise ValueError(f"config key {key!r} must be a finite number, got {v!r}")
        if v < 0 or (k in _POSITIVE and v == 0):
            need = "positive" if k in _POSITIVE else "non-negative (a force parameter)"
            raise ValueError(f"config key {key!r} must be {need}, got {v!r}")
        if k in _MAXIMUM and v > _MAXIMUM[k]:
            raise ValueError(f"config key {key!r} must be at most {_MAXIMUM[k]}, got {v!r}")


def _params(wc) -> np.ndarray:
    """(n, len(DEFAULTS)) float64 per-slot parameters of a world config (fov_phi as cos)."""
    rows = []
    for g in wc.groups:
        p = {**DEFAULTS, **(g.social_force or {})}
        p["fov_phi"] = math.cos(math.radians(p["fov_phi"]))
        rows.append([float(p[k]) for k in DEFAULTS])
    return np.asarray(rows, dtype=np.float64).reshape(-1, len(DEFAULTS))[wc.table.group]


def _sense_masks(wc) -> np.ndarray:
    """(n,) int64 whom each slot feels: the avoid masks as if it avoided agents in ORCA."""
    return wc.table.sense_masks


@njit(cache=True, no_cfunc_wrapper=True, inline="always")
def _closest_on_segment(px, py, ax, ay, bx, by):
    """The point of segment ab closest to p."""
    dx, dy = bx - ax, by - ay
    ll = dx * dx + dy * dy
    s = 0.0 if ll <= 0.0 else ((px - ax) * dx + (py - ay) * dy) / ll
    s = min(max(s, 0.0), 1.0)
    return ax + s * dx, ay + s * dy


@njit(cache=True, no_cfunc_wrapper=True, error_model="numpy")
def social_forces(slots, worlds, off, pos, vel, active, layer, sense, targets, pref_speed,
                  params, dt, obst_points, obst_next, obst_off, out):
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
        targets: (N, 2) float64 goals or waypoints, m.
        pref_speed: (N,) float64 desired speeds, m/s.
        params: (N, P) float64 per-slot parameters (columns of ``DEFAULTS``, fov as cos).
        dt: (B,) float64 time step per world, s (the ellipse's step width).
        obst_points: (V, 2) float64 the worlds' obstacle vertices, m.
        obst_next: (V,) int64 world-local index of each vertex's next vertex.
        obst_off: (B + 1,) int64 vertex offsets of the worlds.
        out: (k, 2) float64 output, m/s².
    """
    for q in range(slots.shape[0]):
        i = slots[q]
        b = worlds[q]
        p = params[i]
        tau, v0, sigma, pf = p[0], p[1], p[2], p[3]
        cosphi, c, u0, rr = p[4], p[5], p[6], p[7]
        sf, cutoff = p[8], p[10]
        cut_sq = cutoff * cutoff
        px, py = pos[i, 0], pos[i, 1]
        ex, ey = targets[i, 0] - px, targets[i, 1] - py
        d = math.sqrt(ex * ex + ey * ey)
        if d > 0.0:
            ex, ey = ex / d, ey / d
        else:
            ex, ey = 0.0, 0.0
        # Goal attraction: relax towards the desired velocity in tau. Within v0 * 1 s of the
        # target the desired speed is the distance per second (the built-in goal steering's
        # rule), so that agents arrive instead of orbiting a goal they overshoot.
        v_des = min(pref_speed[i], d)
        fx = (v_des * ex - vel[i, 0]) / tau
        fy = (v_des * ey - vel[i, 1]) / tau
        step = dt[b]
        for j in range(off[b], off[b + 1]):
            if j == i or not active[j] or (sense[i] & layer[j]) == 0:
                continue
            rx, ry = px - pos[j, 0], py - pos[j, 1]
            a_sq = rx * rx + ry * ry
            if a_sq > cut_sq or a_sq == 0.0:
                continue
            # b's step along its own desired direction shapes the ellipse.
            gx, gy = targets[j, 0] - pos[j, 0], targets[j, 1] - pos[j, 1]
            gd = math.sqrt(gx * gx + gy * gy)
            s = math.sqrt(vel[j, 0] * vel[j, 0] + vel[j, 1] * vel[j, 1]) * step
            if gd > 0.0:
                gx, gy = gx / gd, gy / gd
            else:
                gx, gy = 0.0, 0.0
            ux, uy = rx - s * gx, ry - s * gy
            A = math.sqrt(a_sq)
            Bn = math.sqrt(ux * ux + uy * uy)
            bb = 0.5 * math.sqrt(max((A + Bn) * (A + Bn) - s * s, 0.0))
            if bb <= 1e-12 or Bn == 0.0:
                continue  # on the ellipse's focal segment: no direction to push along
            # f = -grad V = V / sigma * db/dr, db/dr = (A + B) (r/A + u/B) / (4 b).
            k = v0 * math.exp(-bb / sigma) / sigma * (A + Bn) / (4.0 * bb)
            gfx = k * (rx / A + ux / Bn)
            gfy = k * (ry / A + uy / Bn)
            # Field of view: full weight when b (the direction -f) is within phi of e_a.
            w = 1.0 if -(ex * gfx + ey * gfy) > math.sqrt(gfx * gfx + gfy * gfy) * cosphi \
                else c
            fx += pf * w * gfx
            fy += pf * w * gfy
        o0 = obst_off[b]
        for v in range(o0, obst_off[b + 1]):
            nxt = obst_next[v]
            if obst_next[o0 + nxt] == v - o0 and nxt < v - o0:
                continue  # a two-vertex obstacle stores its segment twice: count it once
            cx, cy = _closest_on_segment(px, py, obst_points[v, 0], obst_points[v, 1],
                                         obst_points[o0 + nxt, 0], obst_points[o0 + nxt, 1])
            rx, ry = px - cx, py - cy
            dd = rx * rx + ry * ry
            if dd > cut_sq or dd == 0.0:
                continue
            D = math.sqrt(dd)
            k = sf * u0 / rr * math.exp(-D / rr) / D
            fx += k * rx
            fy += k * ry
        out[q, 0] = fx
        out[q, 1] = fy


@njit(cache=True, no_cfunc_wrapper=True)
def _integrate(slots, worlds, vel, force, params, pref_speed, max_speed, dt, out):
    """``v + dt F`` clipped to ``min(max_speed_factor * pref_speed, max_speed)``, into ``out``."""
    for q in range(slots.shape[0]):
        i = slots[q]
        h = dt[worlds[q]]
        vx = vel[i, 0] + h * force[q, 0]
        vy = vel[i, 1] + h * force[q, 1]
        cap = min(params[i, 9] * pref_speed[i], max_speed[i])
        sp = math.sqrt(vx * vx + vy * vy)
        if sp > cap:
            vx, vy = vx * cap / sp, vy * cap / sp
        out[q, 0] = vx
        out[q, 1] = vy


def steer(view, slots: np.ndarray) -> np.ndarray:
    """Preferred velocities of the social-force ``slots`` (every world): ``(k, 2)`` m/s."""
    sl = view.slots
    params = view.per_slot("social_force.params", _params)
    sense = view.per_slot("social_force.sense", _sense_masks)
    worlds = view.world_of(slots)
    ob = view._obst
    force = np.empty((slots.size, 2))
    social_forces(slots, worlds, view.offsets, sl.pos, sl.vel, sl.active, sl.layer, sense,
                  sl.targets, sl.pref_speed, params, view.time_steps, ob.points, ob.next_ids,
                  ob.off, force)
    out = np.empty((slots.size, 2))
    _integrate(slots, worlds, sl.vel, force, params, sl.pref_speed, sl.max_speed,
               view.time_steps, out)
    return out


SOCIAL_FORCE = register_behaviour(Behaviour(
    name="social_force", steer=steer, avoids_agents=False, check=_check,
    doc="Helbing and Molnar's social force model with pysocialforce's parameters (goal "
        "attraction, elliptical repulsion from the agents it avoids, wall repulsion); ORCA "
        "avoids no agent for it, walls still bind it"))
