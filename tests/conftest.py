"""Test-wide settings: headless pygame (no window, no audio, no banner)."""

import os

# pygame must never open a window in tests (rendering is exercised headless).
os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
