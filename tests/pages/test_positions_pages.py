"""The /positions page through AppTest: every part renders at the edges of its sliders and with hostile links,
what it says is the computed finding, and each view stays under 1 MB of figures."""

import json
import math

import pytest

from core.positions import sinusoidal
from tests.apptest_helpers import count_builds, figure_bytes, figure_titles, figure_traces, plotted_values
from tests.apptest_helpers import open_view as open_page
from tests.apptest_helpers import shown_text as shown

MAX_VIEW_BYTES = 1_000_000
HOSTILE = [
    "",
    "The 🐱 sat. 👍🏽👨‍👩‍👧",
    "猫はマットの上に座った。",
    "고양이가 앉았다.",
    "<script>alert(1)</script> {{7*7}}",
    "The cat sat on the mat because it was tired. " * 450,
]


@pytest.mark.parametrize(
    "params",
    [
        {"part": "sinusoidal"},
        {"part": "sinusoidal", "d": "256", "n": "256", "base": "6.0", "sp_d": "4096", "sp_n": "32768", "thr": "0.1"},
        {"part": "sinusoidal", "d": "8", "n": "16", "base": "1.0", "pair": "3", "sp_n": "128"},
        {"part": "relative", "rel_n": "24", "rel_d": "32", "clip": "12", "seed": "9999"},
        {"part": "relative", "rel_n": "3", "rel_d": "2", "clip": "0"},
        {"part": "alibi", "heads": "32", "al_n": "64", "al_head": "31"},
        {"part": "alibi", "heads": "1", "al_n": "4"},
        {"part": "alibi", "heads": "12", "al_head": "11"},
        {"part": "rope", "rope_d": "64", "rope_n": "512", "m": "500", "layout": "rotate_half", "rope_pair": "31"},
        {"part": "rope", "rope_d": "4", "rope_n": "8", "m": "0", "rope_base": "1.0"},
    ],
    ids=lambda p: "-".join(f"{k}{v}" for k, v in p.items()),
)
def test_positions_parts_render_within_budget(params):
    at = open_page("positions.py", params)
    assert at.get("plotly_chart")
    assert figure_bytes(at) < MAX_VIEW_BYTES
    assert not at.warning, [w.value for w in at.warning]  # every parameter above is valid


@pytest.mark.parametrize(
    "params",
    [
        {"part": "<script>"},
        {"part": "rope", "rope_d": "5"},
        {"part": "sinusoidal", "base": "nan"},
        {"part": "sinusoidal", "d": "-8", "sp_d": "3", "thr": "inf"},
        {"part": "alibi", "heads": "0", "al_head": "99"},
        {"part": "relative", "seed": "-1", "clip": "1e9"},
        {"part": "rope", "m": "99999999999999999999", "layout": "x"},
    ],
)
def test_positions_bad_links_are_ignored_with_a_notice(params):
    at = open_page("positions.py", params)
    assert "Ignored link parameters" in shown(at)


def test_sinusoidal_page_states_the_measured_sparsity():
    at = open_page("positions.py", {"part": "sinusoidal", "sp_d": "3072", "sp_n": "8192", "thr": "0.01"})
    r = sinusoidal.slow_dimension_share(8192, 3072, threshold=0.01)
    step = sinusoidal.neighbour_step_share(3072, 10000.0, 0.01)
    text = shown(at)
    assert f"{r['share']:.1%} of the 3,072 columns" in text
    assert f"{step:.1%} of the columns move by less than 1.0%" in text
    assert "same dot product to within" in text


def test_rope_check_and_layouts_are_stated():
    at = open_page("positions.py", {"part": "rope"})
    text = shown(at)
    assert "the score depends on m − n only" in text
    assert "|rotate_half(Px) − P·adjacent(x)|" in text


@pytest.mark.slow
def test_learned_part_uses_minilm_table():
    at = open_page("positions.py", {"part": "learned", "npos": "512"})
    assert "neighbouring positions have mean similarity" in shown(at)
    assert figure_bytes(at) < MAX_VIEW_BYTES


@pytest.mark.slow
@pytest.mark.parametrize("text", HOSTILE, ids=["empty", "emoji", "cjk", "korean", "script", "huge"])
def test_smollm2_bands_survive_hostile_text(text):
    at = open_page("positions.py", {"part": "rope", "smol": "1", "bands": "8", "band": "7", "layer": "29", "head": "8"})
    at.text_area(key="text").set_value(text).run()
    assert not at.exception, [e.value for e in at.exception]
    if text:
        assert "bands add up to the model's own scaled scores" in shown(at)
        assert figure_bytes(at) < MAX_VIEW_BYTES
    else:
        assert "Type some text" in shown(at)


def test_slider_keeps_its_value_when_its_bounds_change():
    """`pair`'s maximum is d/2 - 1: changing d used to drop the user's pair to 0. Now it is kept while it fits
    and falls back to the default (2) when it does not."""
    at = open_page("positions.py", {"part": "sinusoidal"})
    at.slider(key="pair").set_value(5).run()
    at.slider(key="d").set_value(128).run()
    assert at.slider(key="pair").value == 5 and at.slider(key="pair").max == 63
    at.slider(key="d").set_value(8).run()
    assert not at.exception
    assert at.slider(key="pair").value == 2 and at.slider(key="pair").max == 3


def test_rope_pairs_are_numbered_from_zero_on_sliders_axes_and_formula():
    at = open_page("positions.py", {"part": "rope", "rope_d": "16", "rope_pair": "7"})
    pair = at.slider(key="rope_pair")
    assert (pair.min, pair.max, pair.value) == (0, 7, 7)
    assert "θᵢ = base^(−2i/d), i = 0 … d/2 − 1" in shown(at)
    angles = figure_traces(at, 1)[0]  # rotation matrix, then the angles
    assert plotted_values(angles["x"]).tolist() == list(range(8))
    assert "Pair 7:" in figure_titles(at)[2]


def test_variation_figure_labels_major_ticks_only():
    at = open_page("positions.py", {"part": "sinusoidal", "sp_d": "512", "sp_n": "128", "thr": "0.001"})
    axis = json.loads(at.get("plotly_chart")[-1].proto.spec)["layout"]["yaxis"]
    assert axis["type"] == "log" and axis["tickmode"] == "array"
    for v in axis["tickvals"]:
        mantissa = v / 10 ** math.floor(math.log10(v) + 1e-9)
        assert min(abs(mantissa - m) for m in (1, 2, 5)) < 1e-9, v


def test_relative_part_cites_music_transformer_with_its_numbers():
    text = shown(open_page("positions", {"part": "relative", "rel_n": "10", "rel_d": "8", "clip": "2"}))
    assert "Music Transformer** (Huang et al. 2018)" in text
    assert "an (n, n, d) tensor, 800 numbers at n = 10, d = 8" in text and "50 numbers (n × 5 offsets)" in text


def test_rope_part_computes_the_phrase_with_and_without_a_prefix():
    from core.positions.prefix import prefix_view

    ex = prefix_view()
    text = shown(open_page("positions", {"part": "rope"}))
    assert "“the cat sat” read alone (positions 0–2) and after “yesterday in the garden” (positions 4–6)" in text
    assert (
        f"change by up to {ex.absolute_change:.3f}" in text and f"at most {ex.rope_change:.1e}, rounding only" in text
    )


def test_the_position_table_names_example_models_and_the_apps_own():
    """Drawn once its expander is opened (it reads transformers' family configs): closed, the page has no table."""
    from app.views.positions import EXAMPLES_OPEN

    column = "example models (transformers model_type)"
    assert not [d for d in open_page("positions", {"part": "alibi"}).dataframe if column in d.value.columns]
    at = open_page("positions", {"part": "alibi"}, state={EXAMPLES_OPEN: True})
    table = next(d for d in at.dataframe if column in d.value.columns).value
    rows = dict(zip(table["positions"], table["example models (transformers model_type)"]))
    assert rows["learned (absolute)"] == "bert, gpt2" and rows["RoPE (relative)"] == "llama, qwen2, mistral"
    assert rows["ALiBi (relative)"] == "bloom, mpt"
    app = dict(zip(table["positions"], table["this app's models"]))
    assert (
        "MiniLM" in app["learned (absolute)"] and "SmolLM2" in app["RoPE (relative)"] and app["ALiBi (relative)"] == "–"
    )


def test_sinusoidal_part_shows_what_one_training_step_moves():
    from core.positions.training_step import one_step

    s, learned = one_step("sinusoidal"), one_step("learned")
    text = shown(open_page("positions", {"part": "sinusoidal"}))
    assert f"the first layer's W^Q moved by {s.w_q:.2%} of its size" in text
    assert (
        "the sinusoidal position vectors moved by 0%" in text and f"({learned.positions:.2%} in the same step)" in text
    )


def test_sinusoidal_part_draws_the_materials_size_pooled():
    at = open_page("positions", {"part": "sinusoidal"})
    assert "(the material draws it at 8,192 positions × 3,072 dimensions): 8,192 × 3,072 values" in shown(at)


def test_two_visitors_share_the_sparsity_parts_variation_figure(monkeypatch):
    """The variation figure depends on the sparsity part's settings alone: built (and its caption read) once per
    process for every visitor and every run that changes only d, n or the pair above it (8 ms a run when not)."""
    from viz.positions import sinusoidal as figures

    built = count_builds(monkeypatch, figures, "variation_figure")
    first, second = open_page("positions", {"part": "sinusoidal"}), open_page("positions", {"part": "sinusoidal"})
    second.slider[0].set_value(128).run()  # d: a setting the figure does not depend on
    assert len(built) == 1 and not second.exception
    specs = [[c.proto.spec for c in at.get("plotly_chart")] for at in (first, second)]
    assert specs[0][-1] == specs[1][-1] and specs[0][0] != specs[1][0]  # the same variation figure, d's own PE


def test_learned_part_measures_the_sparser_explanation_on_minilms_table():
    from core.models import registry
    from core.positions.learned import subspace_view

    sub = subspace_view(registry.shared("minilm"))
    text = shown(open_page("positions", {"part": "learned"}))
    assert f"{sub.k} of its {sub.d} directions hold 90% of the position vectors' variance" in text
    assert f"put {sub.word_share:.2%} of their variance into those same directions" in text
    assert sub.kept_apart and f"That is {sub.below_chance:.1f}× less than chance" in text


def test_rope_part_draws_the_angles_at_the_materials_size():
    from core.positions import rope as rp

    big = rp.pooled_angles(8192, 3072)
    text = shown(open_page("positions", {"part": "rope"}))
    assert "At the material's size, n = 8,192 positions and d = 3,072" in text
    assert f"length {big.fastest_coherence:.3f} on average" in text and f"at least {big.slowest_coherence:.4f}" in text
