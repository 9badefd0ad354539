"""The frames' text (issue 25 item 9): the TrueType font pygame-ce ships, through FreeType, at
a legible size, evenly spaced (no "bott leneck", "t imed out")."""

import os

import numpy as np
import pytest

from orca_env import OrcaEnv
from orca_env.evaluation import snapshot
from orca_env.render import COLORS, Renderer

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BOTTLENECK = os.path.join(ROOT, "configs", "bottleneck.yaml")
#: Words of the band; the ones issue 25 found with a gap inside.
WORDS = ("bottleneck", "timed", "left", "stalled", "collided", "finished")


def _renderer(size):
    env = OrcaEnv(BOTTLENECK)
    env.reset(seed=10_000)
    r = Renderer("rgb_array", size=size)
    r.frame = r.draw(snapshot(env, 0, title="policy orca   scenario bottleneck_v0   seed 10000"))
    env.close()
    return r


def _letter_gaps(pg, draw):
    """Widths (pixels) of the blank columns between the glyphs of a word drawn by ``draw``."""
    surf = pg.Surface((400, 80))
    surf.fill((255, 255, 255))
    draw(surf)
    ink = (pg.surfarray.array3d(surf).min(axis=2) < 128).any(axis=1)
    d = np.diff(np.flatnonzero(ink)) - 1
    return d[d > 0]


def test_frames_use_the_font_pygame_ships_through_freetype():
    r = _renderer(720)
    pg = r._pg
    for font in (r._font, r._small):
        ft = font._ft
        assert isinstance(ft, pg.freetype.Font)
        assert os.path.basename(ft.path) == "freesansbold.ttf"
        assert os.path.dirname(os.path.abspath(ft.path)) == os.path.dirname(
            os.path.abspath(pg.__file__)), "not the font inside the pygame package"
        assert ft.scalable and not ft.kerning


@pytest.mark.parametrize("size,title,small", [(720, 19, 14), (480, 12, 11), (240, 12, 11)])
def test_text_is_legible_at_the_frame_sizes(size, title, small):
    # pygame.font.Font(None, 22) and (None, 18), the frames' fonts before, were 15 and 12
    # pixels high at the default size (720): the band's text is now larger.
    r = _renderer(size)
    assert r._font.get_height() >= title and r._small.get_height() >= small
    # The title's line really is drawn: text-coloured pixels in its first row of the band.
    y, row = r._rows[0]
    line = r.frame[y:y + r._font.get_height(), :, :].astype(int)
    dark = (np.abs(line - COLORS["text"]).sum(axis=2) < 60).sum()
    assert dark > 20 * len(row), dark


# Up to the default size (larger glyphs have sidebearings that differ by more than a pixel).
@pytest.mark.parametrize("size", [240, 360, 480, 720])
@pytest.mark.parametrize("word", WORDS)
def test_letters_of_a_word_are_evenly_spaced(size, word):
    r = _renderer(size)
    pg = r._pg
    for font in (r._font, r._small):
        gaps = _letter_gaps(pg, lambda s, f=font: f.draw(s, (2, 2), word, COLORS["text"]))
        assert gaps.size, f"{word!r}: no gap between glyphs found"
        # Kerned and hinted, "bottleneck" had a 5-pixel gap between t and l among 2-pixel ones.
        assert gaps.max() - gaps.min() <= 1, (word, font.get_height(), gaps.tolist())


def test_the_gap_check_sees_the_old_kerning():
    # The check above would have failed on the frames' old font: pygame.font's kerned text.
    pg = _renderer(720)._pg
    pg.font.init()
    old = pg.font.Font(None, 25)  # 17 px high, the size of the new title font
    gaps = _letter_gaps(pg, lambda s: s.blit(old.render("bottleneck", True, (0, 0, 0)), (2, 2)))
    assert gaps.max() - gaps.min() > 1, gaps.tolist()
