"""The goal-aligned frame: the one rotation between the world and what an agent sees and does.

An agent's observation and its action share a frame. In the goal-aligned frame (the default,
config ``observation.frame: goal``) the x axis points from the agent to its goal (or next
waypoint) and the y axis 90 degrees to its left; with ``frame: world`` the axes are the world's.
At the goal itself (distance <= 1e-12 m) the goal frame falls back to the world axes.

A frame is given by its x axis ``(ex, ey)``, a unit vector in world coordinates:

* world -> frame: ``(x ex + y ey, -x ey + y ex)``;
* frame -> world: ``(x ex - y ey, x ey + y ex)``.

The scalar functions are numba kernels for the observation and step kernels; the array functions
serve Python callers (heuristic actions, baselines, rendering). Every caller goes through these,
so the observation, action, reward and rendering frames cannot drift apart.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["frame_axis", "to_frame", "from_frame", "frame_axes", "world_to_frame"]

#: Below this distance to the goal (m) the goal frame is the world frame.
AT_GOAL_EPS = 1e-12


@njit(cache=True, no_cfunc_wrapper=True)
def frame_axis(to_goal_x, to_goal_y, world_frame):
    """The frame's x axis ``(ex, ey)`` for an agent whose goal lies at ``to_goal``, metres."""
    if world_frame:
        return 1.0, 0.0
    d = np.sqrt(to_goal_x * to_goal_x + to_goal_y * to_goal_y)
    if d > AT_GOAL_EPS:
        return to_goal_x / d, to_goal_y / d
    return 1.0, 0.0


@njit(cache=True, no_cfunc_wrapper=True)
def to_frame(x, y, ex, ey):
    """A world-frame vector in the frame whose x axis is ``(ex, ey)``."""
    return x * ex + y * ey, -x * ey + y * ex


@njit(cache=True, no_cfunc_wrapper=True)
def from_frame(x, y, ex, ey):
    """A vector given in the frame whose x axis is ``(ex, ey)``, in the world frame."""
    return x * ex - y * ey, x * ey + y * ex


@njit(cache=True, no_cfunc_wrapper=True)
def _axes(to_goal, world_frame, out):
    for i in range(to_goal.shape[0]):
        out[i, 0], out[i, 1] = frame_axis(to_goal[i, 0], to_goal[i, 1], world_frame)


@njit(cache=True, no_cfunc_wrapper=True)
def _to_frames(vec, axes, out):
    for i in range(vec.shape[0]):
        out[i, 0], out[i, 1] = to_frame(vec[i, 0], vec[i, 1], axes[i, 0], axes[i, 1])


def frame_axes(to_goal: np.ndarray, world_frame: bool = False) -> np.ndarray:
    """The x axes of many agents' frames.

    Args:
        to_goal: ``(k, 2)`` float64 vectors from each agent to its goal or waypoint, metres,
            world frame.
        world_frame: True for the world frame (every axis ``(1, 0)``).

    Returns:
        ``(k, 2)`` float64 unit vectors, world frame.
    """
    to_goal = np.ascontiguousarray(to_goal, dtype=np.float64).reshape(-1, 2)
    out = np.empty_like(to_goal)
    _axes(to_goal, bool(world_frame), out)
    return out


def world_to_frame(vec: np.ndarray, axes: np.ndarray) -> np.ndarray:
    """Rotate ``(k, 2)`` world-frame vectors into the frames with x axes ``axes`` ``(k, 2)``."""
    vec = np.ascontiguousarray(vec, dtype=np.float64).reshape(-1, 2)
    out = np.empty_like(vec)
    _to_frames(vec, np.ascontiguousarray(axes, dtype=np.float64), out)
    return out
