"""A map's numbers on its cells, as a phone and a laptop draw them. Plotly sets every label of a map in one type, the
largest its longest line fits in the narrowest cell: /moe's share maps labelled to one decimal ('12.5%') came to 5 and
6 px on a 390 px phone in chromium (results/phone_cell_text.json). viz.labels.for_page leaves numbers out of cells a
screen would set them too small in; marks and tokens, which only the labels show, stay."""

import functools
import json

import numpy as np
import plotly.graph_objects as go
import pytest

from app import i18n
from core.encoder_decoder import alignment as al
from core.moe import balance_bounds
from core.moe import checkpoint_views as cv
from core.moe.data import CATEGORIES as WORD_CATEGORIES
from core.moe.data import SPECIAL
from viz import encoder_decoder as ved
from viz import moe as vmoe
from viz.labels import (
    CELL_TEXT_AT_LEAST,
    LAPTOP_FIGURE_PX,
    PHONE_FIGURE_PX,
    SIDEBAR_FIGURE_PX,
    TABLET_FIGURE_PX,
    beside_px,
    cell_text_px,
    for_page,
    indexed_labels,
)

E, LAYERS, CATEGORIES = 8, 4, 10  # the shipped checkpoints' experts and layers, the generator's word categories


def share_maps(lang: str) -> dict:
    t = functools.partial(i18n.text, lang, "moe.figure")
    rng = np.random.default_rng(0)
    loads = rng.dirichlet(np.ones(E), LAYERS) * 0.5
    summary = cv.CheckpointSummary(2.1, loads, 0.0, 0.5, [0], [3.0])
    comparison = cv.Comparison({"balanced": summary}, E, 1 / E, balance_bounds(E, 2))
    shares = cv.Specialisation("balanced", 1, [*WORD_CATEGORIES, SPECIAL][:CATEGORIES], rng.dirichlet(np.ones(CATEGORIES), E),
                               np.ones((E, CATEGORIES)), [], [1 / E] * E, 10)  # fmt: skip
    with open("results/encoder_decoder_alignment.json", encoding="utf-8") as f:
        grid = al.result_grid(json.load(f))
    return {
        "layer_load": vmoe.layer_load_heatmap(comparison, t, "balanced"),
        "category": vmoe.category_heatmap(shares, t),
        "alignment": ved.alignment_map(grid, functools.partial(i18n.text, lang, "encoder_decoder.figure")),
    }


def labelled(fig, px: int) -> bool:
    trace = for_page(fig.to_dict(), px)["data"][0]
    return trace.get("texttemplate") == "%{text}" and bool(trace.get("text"))


def numbered(fig, px: int) -> bool:
    """The map's numbers are on its cells as the page sends it `px` wide: from its text or its z ('%{z:.2f}')."""
    return bool(for_page(fig.to_dict(), px)["data"][0].get("texttemplate"))


@pytest.mark.parametrize(
    "label, cells, cell_px, drawn",
    [  # chromium 390 and 1366 px (scripts/phone_layout_check.py): each map's cells, their size and the type drawn
        ("16.4%", (8, 4), (21.5, 42), 6),  # /moe's layer loads on a phone
        ("16.4%", (8, 4), (30.5, 42), 9),  # beside each other on a laptop (432 px each)
        ("16.4%", (8, 4), (29, 42), 8),  # at 392 px (1,280 px window), the colour bar's title up its side
        ("16.4%", (8, 4), (32, 42), 9),  # its title across the bar's top
        ("27.1%", (10, 8), (19.9, 28.9), 5),  # /moe's categories on a phone
        ("16%", (8, 4), (21.5, 42), 10),  # to whole percent, before
        ("30.1%<br>[28.3%,<br>31.9%]", (4, 2), (47.3, 89), 10),  # /encoder-decoder's alignment on a phone
        ("30%<br>[28%, 32%]", (4, 2), (47.3, 89), 7),  # its interval on one line, before
        ("30.1%<br>[28.3%,<br>31.9%]", (4, 2), (181.5, 89), 12),  # a laptop: the figure's 12 px font
        ("0.94", (11, 11), (15, 18.4), 5),  # /encoder-decoder's encoder map on a phone ('%{z:.2f}')
        ("0.01", (11, 9), (11.6, 16.7), 4),  # its cross-attention map
        ("−2.46", (10, 10), (11.1, 17.3), 3),  # /masks' scores ('%{z}'), 282 px beside the others
        ("0.02", (3, 3), (23, 38), 8),  # /masks' decoder self-attention, 3 tokens
    ],
)
def test_cell_text_px_is_the_type_chromium_set_the_labels_in(label, cells, cell_px, drawn):
    (columns, rows), (wide, tall) = cells, cell_px
    assert cell_text_px([[label] * columns] * rows, (wide * columns, tall * rows)) == drawn


@pytest.mark.parametrize("lang", ["en", "ja", "ko"])
def test_a_phone_is_not_sent_share_labels_too_small_to_read(lang):
    """/moe's share maps: 5 and 6 px on a phone (chromium), so no numbers on their cells there (the colour, the hover
    and the table say them); on a laptop (the layer loads beside each other: 9 px) and a tablet, labelled. The
    alignment map's 4 heads leave 47 px cells: 10 px on a phone, labelled everywhere."""
    maps = share_maps(lang)
    assert not labelled(maps["layer_load"], PHONE_FIGURE_PX) and not labelled(maps["category"], PHONE_FIGURE_PX)
    assert labelled(maps["layer_load"], beside_px(2)) and labelled(maps["category"], LAPTOP_FIGURE_PX)
    assert labelled(maps["category"], TABLET_FIGURE_PX)
    assert all(labelled(maps["alignment"], px) for px in (PHONE_FIGURE_PX, beside_px(2), LAPTOP_FIGURE_PX))
    assert CELL_TEXT_AT_LEAST == 9


@pytest.mark.parametrize("lang", ["en", "ja", "ko"])
def test_the_layer_loads_beside_each_other_keep_room_for_9_px_labels(lang):
    """/moe's two layer-load maps beside each other at a 1,280 px window (392 px each): with the colour bar's title
    standing up its side their cells were 29 px wide, '16.4%' in 8 px type (chromium), and a pixel of slack in the
    estimate kept them; with it across the bar's top, 32 px and 9 px, estimated 9. (On a phone, 8: left out.)"""
    fig = share_maps(lang)["layer_load"]
    assert fig.data[0].colorbar.title.side == "top"
    assert labelled(fig, beside_px(2))


def test_leaving_labels_out_changes_neither_the_figure_nor_the_dict_shared_by_every_width():
    """A shared figure's dict is fitted for each width a browser asks for (app/ui.read_only): the phone's copy loses
    the labels, the dict and the figure keep them; a plotly figure fitted in place loses them."""
    fig = share_maps("en")["layer_load"]
    sent = fig.to_dict()
    phone = for_page(dict(sent), PHONE_FIGURE_PX)
    assert "text" not in phone["data"][0] and "texttemplate" not in phone["data"][0]
    assert sent["data"][0]["texttemplate"] == "%{text}" and fig.data[0].texttemplate == "%{text}"
    alignment = share_maps("en")["alignment"]
    for_page(alignment, SIDEBAR_FIGURE_PX)
    assert alignment.data[0].texttemplate is None and alignment.data[0].text is None


def test_marks_on_cells_stay_at_any_width():
    """/moe's router map marks the chosen and the dropped experts on their cells: the marks are the figure's news,
    not numbers its colour says, so they stay however narrow the figure."""
    from tests.viz.test_moe_figures import VIEW

    fig = vmoe.router_heatmap(VIEW, functools.partial(i18n.text, "en", "moe.figure"))
    sent = fig.to_dict()["data"][1:]  # the marks, markers over their cells
    assert [t["mode"] for t in sent] == ["markers", "markers"] and all(len(t["x"]) for t in sent)
    for px in (SIDEBAR_FIGURE_PX, 120):
        assert for_page(fig.to_dict(), px)["data"][1:] == sent


@functools.cache
def marian_view():
    from core.encoder_decoder import view as edv
    from tests.fake_traces import random_marian

    model, tok = random_marian()
    run = edv.run_sentence(model, tok, "the cat sees the small dog near the old house", "ja")
    return edv.step_view(run, "free", 8, 0, 0)


@pytest.mark.parametrize("lang", ["en", "ja", "ko"])
def test_a_phone_is_not_sent_weights_written_by_a_texttemplate_too_small_to_read(lang):
    """/encoder-decoder's maps write each weight by a texttemplate over z ('%{z:.2f}'), /masks' scores by '%{z}':
    chromium drew them in 4 and 5 px type on a 390 px phone (the encoder's 11 x 11 cells 15 px wide), /masks' 3 px
    (10 x 10 in a 282 px block), its three-token decoder map's 8 px (results/cell_text_texttemplate_before.json). Read from the template and z as plotly
    writes them, they are left out there as text labels are; a laptop's wide map keeps them."""
    from core.masks import batch
    from core.masks import encoder_decoder as masks_kinds
    from core.masks.state import sentences_of
    from viz import masks as vmasks

    view = marian_view()
    words = functools.partial(i18n.text, lang, "encoder_decoder.figure")
    maps = [ved.encoder_figure(view, words), ved.self_figure(view, words), ved.cross_figure(view, words)]
    assert [m.data[0].texttemplate for m in maps] == ["%{z:.2f}"] * 3
    assert not any(numbered(m, PHONE_FIGURE_PX) for m in maps)
    assert all(numbered(m, LAPTOP_FIGURE_PX) for m in maps)
    words = functools.partial(i18n.text, lang, "masks.figure")
    sentences = sentences_of("\n".join(batch.EXAMPLES)).token_lists  # the page's own, 10 tokens padded
    steps = batch.mask_steps_view(sentences, 0, 0, "both", seed=0)
    figs = vmasks.mask_steps_figures(steps, words, indexed_labels(steps.tokens))
    assert (figs["scores"].data[0].texttemplate, figs["weights"].data[0].texttemplate) == ("%{z}", "%{z:.2f}")
    assert not numbered(figs["scores"], beside_px(3)) and not numbered(figs["weights"], beside_px(3))
    assert numbered(figs["scores"], LAPTOP_FIGURE_PX + 300)
    kinds = masks_kinds.encoder_decoder(sentences[0], sentences[1], seed=0).kinds
    drawn = {
        k.kind: vmasks.attention_kind_figure(k, words, 0, indexed_labels(k.query_tokens), indexed_labels(k.key_tokens))
        for k in kinds
    }
    assert not numbered(drawn["encoder_self"], beside_px(3)) and not numbered(drawn["cross"], beside_px(3))
    # the three-token decoder map: at 282 px (three on a line of 1,366's column) 8 px in English, whose rows' title
    # stands in three lines beside it, 11 in Japanese and Korean (two); at 256 (three on a line of 1,280's) its cells
    # are 11 and 17 px wide, '0.33' in 4 and 6 px type
    assert not numbered(drawn["decoder_self"], beside_px(3))
    # the masked cells' crosses stay where the numbers go: marks, not numbers (at 256 px its cells are too narrow for
    # a cross too: tests/viz/test_cell_marks.py)
    two = for_page(figs["weights"].to_dict(), beside_px(2))["data"]
    assert "texttemplate" not in two[0] and two[1]["texttemplate"] == "%{text}"


def test_the_labels_read_from_a_texttemplate_are_what_plotly_writes():
    """plotly writes '%{z:.2f}' and '%{z:.1%}' as d3 formats them (Python's alike) and '%{z}' in its shortest form
    ('1', '−2.46': chromium's widest labels on /masks); masked cells (NaN) get none."""
    from viz.labels import _cell_labels

    z = np.array([[0.94, -2.46], [1.0, np.nan]], dtype=np.float32)
    cells = {"type": "heatmap", "z": z}
    assert _cell_labels({**cells, "texttemplate": "%{z:.2f}"}.get) == [["0.94", "-2.46"], ["1.00", ""]]
    assert _cell_labels({**cells, "texttemplate": "%{z:.1%}"}.get) == [["94.0%", "-246.0%"], ["100.0%", ""]]
    sent = go.Figure(go.Heatmap(z=z, texttemplate="%{z}")).to_dict()["data"][0]  # z as to_dict sends it: base64
    assert _cell_labels(sent.get) == [["0.94", "-2.46"], ["1", ""]]
    assert _cell_labels({**cells, "texttemplate": "%{z:.2f} of %{x}"}.get) is None  # not numbers alone


def lens_view(n: int, stages: int = 31):
    """SmolLM2's lens (30 layers: 31 stages) over n positions, each cell's top token eight characters."""
    import torch

    from core.logit_lens import LensView

    tokens = [[[" becomes", " because"] for _ in range(n)] for _ in range(stages)]
    probs = torch.tensor([0.5, 0.25]).expand(stages, n, 2)
    final = torch.full((stages, n), 0.3)
    return LensView(tokens=[f" word{i}" for i in range(n)], top_ids=torch.zeros(stages, n, 2, dtype=torch.long),
                    top_tokens=tokens, top_probs=probs, final_ids=torch.zeros(n, dtype=torch.long), final_prob=final,
                    final_is_top=final > 0.5, first_stage=[None] * n)  # fmt: skip


@pytest.mark.parametrize("lang", ["en", "ja", "ko"])
def test_top_tokens_too_small_to_read_are_left_to_the_hover(lang):
    """/logit-lens wrote each cell's top token (up to 8 characters) in its cell: 19 positions and 31 stages are cells
    31 x 19 px at a 1,280 px window, the tokens in 5 px type (3 at 1,100). Where a page's width would set them under
    9 px they are left out (the hover names each cell's top tokens with their probabilities); five positions keep
    them."""
    from viz import logit_lens as vlens

    t = functools.partial(i18n.text, lang, "logit_lens.figure")
    long, short = vlens.lens_figure(lens_view(19), t), vlens.lens_figure(lens_view(5), t)
    assert not labelled(long, LAPTOP_FIGURE_PX) and not labelled(long, PHONE_FIGURE_PX)
    assert labelled(short, LAPTOP_FIGURE_PX)
    assert " becomes: 0.500" in long.data[0].customdata[0][0] and "%{customdata}" in long.data[0].hovertemplate


def test_flash_attentions_tiles_beside_the_partial_output_keep_room_for_9_px_weights():
    """/flash-attention's finished weights (10 x 10 by default) beside the partial output at a 1,280 px window (392 px
    each): with the colour bar's title standing up its side its cells were 23.6 px wide, '0.02' in 8 px type
    (chromium, results/beside_layout_positions.json), where for_page's estimate, 2 px wider than the plot chromium
    drew, kept them. With it across the bar's top they keep 9 px with the estimate's error to spare."""
    from core import flash_attention as fa
    from viz import flash_attention as fv

    view = fa.walk(n=10, d=4, br=4, bc=3)
    fig = fv.tiles_figure(view, functools.partial(i18n.text, "en", "flash_attention.figure"), len(view.steps) - 1)
    assert fig.data[0].colorbar.title.side == "top"
    drawn = for_page(fig.to_dict(), beside_px(2) - 3)["data"][0]
    assert drawn["texttemplate"] == "%{z:.2f}"
    assert cell_text_px([["0.02"] * 10] * 10, (10 * 23.6, 10 * 21.6)) == 8  # as chromium set them, title standing
