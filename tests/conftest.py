"""Test-wide settings: headless pygame, deterministic numba threading."""

import os

# pygame must never open a window in tests (rendering is exercised headless).
os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
