import os

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
