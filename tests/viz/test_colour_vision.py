"""The figures' colours read apart for the common colour-vision deficiencies, checked by simulation.

Each colour is simulated as a protanope, a deuteranope and a tritanope sees it with the severity-1.0 matrices of
Machado, Oliveira and Fernandes, "A Physiologically-based Model for Simulation of Color Vision Deficiency", IEEE
TVCG 15(6), 2009 (their supplementary table; applied to linear RGB). Colours are compared in CIELAB (sRGB, D65)
with CIEDE2000 (Sharma, Wu and Dalal, Color Research & Application 30(1), 2005), checked here against pairs of
their published test data.

What must hold, for normal vision and each of the three simulations:
- a sequential scale (weights, magnitudes): lightness L* rises or falls monotonically from end to end, so the
  order of values survives the loss of hue, and any tenth of the scale spans at least 3 CIEDE2000 units (a few
  just-noticeable differences: no flat stretch);
- a diverging scale: lightness falls monotonically from the centre to each end, and a value and its opposite are
  told apart by hue (at least 10 units between the two sides once they are a fifth of the range from zero);
- a cyclic scale (angles): angle a and 2 pi - a, as light or as dark as each other, are told apart by hue (10
  units) from a twentieth to 0.35 of a turn (near half a turn both are near pi, and dark);
- colours drawn side by side as categories (the palette, each figure's named set, allowed and masked cells): at
  least 10 CIEDE2000 units apart. One unit is about one just-noticeable difference between two large patches side
  by side, the condition the formula was fitted to; the app's categories are thin lines, small markers and legend
  swatches away from their line, where the difference needed grows several-fold as marks shrink (Szafir,
  "Modeling Color Difference for Visualization Design", IEEE TVCG 24(1), 2018). Ten keeps that margin; plotly's
  default palette, which the app used, has pairs at 1.3 (orange and green, protanopia) and 4.6 (green and red,
  deuteranopia).
Masked cells are never told by colour alone: they carry a "✕" (tests/viz/test_heatmap.py, test_masks_figures.py,
test_transformer_xl_figures.py and tests/pages/test_masks_page.py check the marks).
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import numpy as np
import plotly.colors as plotly_colours
import pytest
from _plotly_utils.basevalidators import ColorscaleValidator

from viz import encoder_decoder, kv_cache, moe, sdpa_steps, style

VIZ = Path(__file__).resolve().parents[2] / "viz"

# Machado et al. 2009, severity 1.0: linear RGB of the simulated colour = M @ linear RGB
MACHADO = {
    "protanopia": np.array(
        [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]]
    ),
    "deuteranopia": np.array(
        [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.011820, 0.042940, 0.968881]]
    ),
    "tritanopia": np.array(
        [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602], [0.004733, 0.691367, 0.303900]]
    ),
}
VISIONS = (None, *MACHADO)  # None: normal vision
SRGB_TO_XYZ = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]])
D65 = SRGB_TO_XYZ.sum(axis=1)  # the white point: XYZ of sRGB white


def linear(srgb):
    c = np.asarray(srgb, dtype=float)
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def encoded(lin):
    c = np.clip(lin, 0.0, 1.0)
    return np.where(c <= 0.0031308, 12.92 * c, 1.055 * c ** (1 / 2.4) - 0.055)


def seen(srgb, vision: str | None):
    """The sRGB colour (..., 3) in [0, 1] as the vision sees it."""
    return np.asarray(srgb, dtype=float) if vision is None else encoded(linear(srgb) @ MACHADO[vision].T)


def cielab(srgb):
    xyz = linear(srgb) @ SRGB_TO_XYZ.T / D65
    d = 6 / 29
    f = np.where(xyz > d**3, np.cbrt(xyz), xyz / (3 * d * d) + 4 / 29)
    return np.stack([116 * f[..., 1] - 16, 500 * (f[..., 0] - f[..., 1]), 200 * (f[..., 1] - f[..., 2])], axis=-1)


def ciede2000(lab1, lab2):
    """CIEDE2000 colour difference (kL = kC = kH = 1), as Sharma et al. 2005 write it out step by step."""
    L1, a1, b1 = np.moveaxis(np.asarray(lab1, dtype=float), -1, 0)
    L2, a2, b2 = np.moveaxis(np.asarray(lab2, dtype=float), -1, 0)
    c_mean = (np.hypot(a1, b1) + np.hypot(a2, b2)) / 2
    g = 0.5 * (1 - np.sqrt(c_mean**7 / (c_mean**7 + 25.0**7)))
    a1, a2 = (1 + g) * a1, (1 + g) * a2
    c1, c2 = np.hypot(a1, b1), np.hypot(a2, b2)
    h1, h2 = np.degrees(np.arctan2(b1, a1)) % 360, np.degrees(np.arctan2(b2, a2)) % 360
    chromatic = c1 * c2 != 0
    dh = h2 - h1
    dh = np.where(dh > 180, dh - 360, np.where(dh < -180, dh + 360, dh))
    dh = np.where(chromatic, dh, 0.0)
    d_big_h = 2 * np.sqrt(c1 * c2) * np.sin(np.radians(dh / 2))
    L_mean, c_mean = (L1 + L2) / 2, (c1 + c2) / 2
    h_sum = h1 + h2
    h_mean = np.where(np.abs(h1 - h2) <= 180, h_sum / 2, np.where(h_sum < 360, (h_sum + 360) / 2, (h_sum - 360) / 2))
    h_mean = np.where(chromatic, h_mean, h_sum)
    r = np.radians
    t = 1 - 0.17 * np.cos(r(h_mean - 30)) + 0.24 * np.cos(r(2 * h_mean)) + 0.32 * np.cos(r(3 * h_mean + 6))
    t = t - 0.20 * np.cos(r(4 * h_mean - 63))
    s_l = 1 + 0.015 * (L_mean - 50) ** 2 / np.sqrt(20 + (L_mean - 50) ** 2)
    s_c, s_h = 1 + 0.045 * c_mean, 1 + 0.015 * c_mean * t
    r_t = -2 * np.sqrt(c_mean**7 / (c_mean**7 + 25.0**7)) * np.sin(r(60 * np.exp(-(((h_mean - 275) / 25) ** 2))))
    dl, dc, dhh = (L2 - L1) / s_l, (c2 - c1) / s_c, d_big_h / s_h
    return np.sqrt(dl**2 + dc**2 + dhh**2 + r_t * dc * dhh)


def rgb(colour: str):
    """'#rrggbb', 'rgb(r, g, b)' or a CSS name plotly knows, as sRGB in [0, 1]."""
    if colour.startswith("#"):
        return np.array([int(colour[i : i + 2], 16) for i in (1, 3, 5)]) / 255
    if colour.startswith("rgb"):
        return np.array([float(v) for v in re.findall(r"[\d.]+", colour)[:3]]) / 255
    return rgb({"white": "#ffffff", "black": "#000000"}[colour])


def samples(scale: str, n: int = 101):
    """n colours evenly along a plotly scale, interpolated as plotly.js does (in sRGB between the stops)."""
    stops = ColorscaleValidator("colorscale", "heatmap").validate_coerce(scale)
    return np.array([rgb(c) for c in plotly_colours.sample_colorscale(stops, list(np.linspace(0, 1, n)))])


# --- the references: the formulas above against published numbers and the matrices' properties ---------------


@pytest.mark.parametrize(
    "lab1, lab2, expected",
    [  # Sharma, Wu and Dalal 2005, Table 1: pairs 1, 2, 7, 17-20, 24 and 25
        ((50.0, 2.6772, -79.7751), (50.0, 0.0, -82.7485), 2.0425),
        ((50.0, 3.1571, -77.2803), (50.0, 0.0, -82.7485), 2.8615),
        ((50.0, 0.0, 0.0), (50.0, -1.0, 2.0), 2.3669),
        ((50.0, 2.5, 0.0), (73.0, 25.0, -18.0), 27.1492),
        ((50.0, 2.5, 0.0), (61.0, -5.0, 29.0), 22.8977),
        ((50.0, 2.5, 0.0), (56.0, -27.0, -3.0), 31.9030),
        ((50.0, 2.5, 0.0), (58.0, 24.0, 15.0), 19.4535),
        ((50.0, 2.5, 0.0), (50.0, 3.1736, 0.5854), 1.0000),
        ((60.2574, -34.0099, 36.2677), (60.4626, -34.1751, 39.4387), 1.2644),
    ],
)
def test_ciede2000_matches_sharma_et_al(lab1, lab2, expected):
    assert ciede2000(lab1, lab2) == pytest.approx(expected, abs=1e-4)
    assert ciede2000(lab2, lab1) == pytest.approx(expected, abs=1e-4)


def test_cielab_of_known_colours():
    assert cielab(rgb("#ffffff")) == pytest.approx([100.0, 0.0, 0.0], abs=0.01)
    assert cielab(rgb("#000000")) == pytest.approx([0.0, 0.0, 0.0], abs=0.01)
    assert cielab(rgb("#ff0000")) == pytest.approx([53.24, 80.09, 67.20], abs=0.05)  # sRGB red, D65
    assert cielab(rgb("#777777"))[0] == pytest.approx(50.03, abs=0.05)  # mid grey


def test_machado_matrices_keep_greys_and_dichromats_see_a_plane():
    """Each row sums to 1 (a grey stays that grey); a protanope's and a deuteranope's colours lie on a plane
    (rank 2): the colour pairs on their confusion lines become one colour."""
    for m in MACHADO.values():
        assert m.sum(axis=1) == pytest.approx([1, 1, 1], abs=2e-6)
    for vision in ("protanopia", "deuteranopia"):
        assert abs(np.linalg.det(MACHADO[vision])) < 1e-6
    # the classic confusions: plotly's orange and green for a protanope, its green and red for a deuteranope
    assert ciede2000(cielab(seen(rgb("#ff7f0e"), "protanopia")), cielab(seen(rgb("#2ca02c"), "protanopia"))) < 2
    assert ciede2000(cielab(rgb("#ff7f0e")), cielab(rgb("#2ca02c"))) > 30


# --- the app's colours ----------------------------------------------------------------------------------------

SEQUENTIAL = {"Blues", "Greens", "Oranges", "Viridis", "Reds_r"}
DIVERGING = {"RdBu"}
CYCLIC = {"Twilight"}
MIN_TENTH, MIN_APART = 3.0, 10.0  # CIEDE2000 units (the module's docstring says why)


def scales_in_viz() -> set[str]:
    """Every named scale a figure uses: the literals in viz/ and the style module's *_SCALE constants."""
    named = set()
    for path in VIZ.rglob("*.py"):
        named |= set(re.findall(r'colorscale\s*[:=]\s*(?:str\s*=\s*)?"(\w+)"', path.read_text()))
    return named | {value for key, value in vars(style).items() if key.endswith("_SCALE")}


def test_every_scale_a_figure_uses_is_checked_here():
    assert scales_in_viz() <= SEQUENTIAL | DIVERGING | CYCLIC, scales_in_viz() - (SEQUENTIAL | DIVERGING | CYCLIC)
    assert {style.WEIGHTS_SCALE, style.SEQUENTIAL_SCALE} <= SEQUENTIAL and style.DIVERGING_SCALE in DIVERGING


@pytest.mark.parametrize("vision", VISIONS)
@pytest.mark.parametrize("scale", sorted(SEQUENTIAL))
def test_sequential_scales_keep_their_order(scale, vision):
    colours = seen(samples(scale), vision)
    lab = cielab(colours)
    steps = np.diff(lab[:, 0])
    assert (steps > 0).all() or (steps < 0).all(), (scale, vision, steps.min(), steps.max())
    assert ciede2000(lab[:-10], lab[10:]).min() >= MIN_TENTH, (scale, vision)


@pytest.mark.parametrize("vision", VISIONS)
@pytest.mark.parametrize("scale", sorted(DIVERGING))
def test_diverging_scales_tell_sign_and_size(scale, vision):
    lab = cielab(seen(samples(scale), vision))
    lightness = lab[:, 0]
    assert (np.diff(lightness[:51]) > 0).all() and (np.diff(lightness[50:]) < 0).all(), (scale, vision)
    low, high = lab[:41], lab[::-1][:41]  # 0 .. 0.4 against 1 .. 0.6: opposite values, a fifth of the range out
    assert ciede2000(low, high).min() >= MIN_APART, (scale, vision)


@pytest.mark.parametrize("vision", VISIONS)
@pytest.mark.parametrize("scale", sorted(CYCLIC))
def test_cyclic_scales_tell_an_angle_from_its_mirror(scale, vision):
    lab = cielab(seen(samples(scale), vision))
    a, mirror = lab[5:36], lab[::-1][5:36]  # angles 0.05-0.35 of a turn against 0.95-0.65
    assert ciede2000(a, mirror).min() >= MIN_APART, (scale, vision)


CATEGORIES = {  # colours one figure draws side by side
    "palette": style.PALETTE,
    "masks (allowed, masked)": [style.ALLOWED_COLOUR, style.MASKED_COLOUR],
    "moe variants": moe.VARIANT_COLOURS,
    "kv-cache policies": [style.BLUE, *kv_cache.POLICY_COLOURS.values()],
    "encoder-decoder kinds": [encoder_decoder.KIND_COLOURS[k] for k in ("self", "masked", "cross")],
    "sdpa scaled, unscaled": [sdpa_steps.SCALED_COLOUR, sdpa_steps.UNSCALED_COLOUR],
    "lesson histogram (right, other, mine)": [style.GREEN, style.MASKED_COLOUR, style.PALETTE[0], style.ORANGE],
}


@pytest.mark.parametrize("vision", VISIONS)
@pytest.mark.parametrize("name", sorted(CATEGORIES))
def test_categorical_colours_stay_apart(name, vision):
    lab = cielab(seen(np.array([rgb(c) for c in CATEGORIES[name]]), vision))
    close = [
        (CATEGORIES[name][i], CATEGORIES[name][j], round(float(ciede2000(lab[i], lab[j])), 1))
        for i, j in itertools.combinations(range(len(lab)), 2)
        if ciede2000(lab[i], lab[j]) < MIN_APART
    ]
    assert close == [], (name, vision, close)
