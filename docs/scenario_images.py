"""Render one frame of every shipped scenario config into docs/images/scenarios/<name>.png.

Run from the repository root: ``SDL_VIDEODRIVER=dummy python docs/scenario_images.py``
(needs the video extra). Each frame is taken after a few steps of pure ORCA
(``env.heuristic_actions()``) from ``reset(seed=0)``, then downscaled to keep the PNG small.
"""

import glob
import os
import sys

import numpy as np
from PIL import Image

import orca_env

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "docs", "images", "scenarios")
STEPS = 8
WIDTH = 480  # pixels; wide scenes (corridors) get WIDE
WIDE = 720


def render(name):
    """One frame of config ``name`` as a PIL image."""
    env = orca_env.parallel_env(name, render_mode="rgb_array")
    env.reset(seed=0)
    for _ in range(STEPS):
        if not env.agents:
            break
        env.step(env.heuristic_actions())
    frame = np.asarray(env.render())
    env.close()
    image = Image.fromarray(frame)
    width = WIDE if image.width > 2 * image.height else WIDTH
    height = round(image.height * width / image.width)
    return image.resize((width, height), Image.LANCZOS)


def main(names):
    """Render ``names`` (default: every configs/*.yaml)."""
    os.makedirs(OUT, exist_ok=True)
    if not names:
        names = sorted(os.path.splitext(os.path.basename(p))[0]
                       for p in glob.glob(os.path.join(ROOT, "configs", "*.yaml")))
    for name in names:
        path = os.path.join(OUT, f"{name}.png")
        image = render(name).quantize(colors=128, method=Image.Quantize.MEDIANCUT)
        image.save(path, optimize=True)
        print(f"{path}: {image.width}x{image.height}, {os.path.getsize(path) // 1024} KB")


if __name__ == "__main__":
    main(sys.argv[1:])
