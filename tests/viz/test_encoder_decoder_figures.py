"""viz/encoder_decoder.py: the encoder, decoder self-, cross-attention, top-token and stack figures and the alignment
map and bars, built from core/encoder_decoder views of a small random-weight model (tests/fake_traces.py), read back:
escaped tokens, the look-ahead mask, the reference alignment marked, the stack's blocks, one bar per head."""

import functools

import pytest

from app import i18n
from core.encoder_decoder import alignment as al
from core.encoder_decoder import grammar
from core.encoder_decoder import view as edv
from tests.fake_traces import random_marian
from viz import encoder_decoder as figs


def test_figures_escape_tokens_and_mark_the_alignment():
    def t(key, **fmt):
        return key + "".join(f" {k}={v}" for k, v in fmt.items())

    model, tok = random_marian()
    run = edv.run_sentence(model, tok, "the cat sees the <script>", "ja")
    v = edv.step_view(run, "free", 2, 0, 1)
    assert v.source_tokens[-2:] == ["<script> → <unk>", "</s>"]  # the user's word beside the token it became
    enc = figs.encoder_figure(v, t)
    assert "<script>" not in enc.to_json() and "<2ja>" not in enc.to_json()
    assert "&lt;script&gt; → &lt;unk&gt;" in enc.data[0].x[-2] and enc.data[0].x[0].endswith("&lt;2ja&gt;")
    self_fig = figs.self_figure(v, t)
    assert self_fig.data[0].z.shape == (3, 3) and len(self_fig.data) == 2  # weights + the masked cells
    run = edv.run_sentence(model, tok, "the cat sees the dog", "ko")
    v = edv.step_view(run, "forced", 5, 0, 0)
    cross = figs.cross_figure(v, t)
    marks = [d for d in cross.data if d.type == "scatter"]
    assert len(marks) == 1 and len(marks[0].x) == len(v.alignment)
    # the marks' legend stands at the figure's foot, under the x axis's rotated labels and wrapped title (plotly
    # grows the bottom margin for it), not a share of the plot's height below the plot, where it met them on a phone
    legend = cross.layout.legend
    assert (legend.yref, legend.y, legend.yanchor) == ("container", 0, "bottom")
    top = figs.top_figure(v, t)
    assert list(top.data[0].x) == [round(p, 4) for _, p in v.top]
    stack = figs.stack_figure(edv.stack_blocks(model.config, 6, 5), 2, t)
    assert len(stack.layout.shapes) == 11 + 2  # a box per block, a frame per repeated layer
    data = {
        "layers": 2,
        "heads_per_layer": 4,
        **al.measure(model, tok, grammar.generate(2, 12, held_out=True)).to_dict(),
    }
    grid = figs.alignment_map(al.result_grid(data), t)
    assert grid.data[0].z.shape == (2, 4)
    assert (grid.layout.yaxis.title.text, grid.layout.xaxis.title.text) == ("axis_layer", "axis_head")
    assert len(figs.alignment_bars(data["heads"], data["diagonal"], data["chance"], t).data[0].x) == 8


@pytest.mark.parametrize("lang", ["en", "ja", "ko"])
def test_the_alignment_bars_say_what_their_columns_are(lang):
    # one bar per cross-attention head, named 'L1 H3' in every language under an untitled axis: nothing said that
    # L is the layer and H the head
    words = functools.partial(i18n.text, lang, "encoder_decoder.figure")
    heads = [{"layer": 1, "head": 3, "accuracy": 0.6, "low": 0.5, "high": 0.7}]
    fig = figs.alignment_bars(heads, {"accuracy": 0.4, "low": 0.3, "high": 0.5}, 0.1, words)
    assert fig.layout.xaxis.title.text == f"{words('axis_head_name')}<br>{words('head_name_key')}"
    assert "L" in words("head_name_key") and fig.layout.yaxis.title.text == words("accuracy")


# the bars on a 390 px phone (chromium, scripts/phone_layout_check.py --link encoder-decoder?part=alignment): a plot
# 267 px wide, its y axis's ticks ('100%') and title 81 px of the 358 left of it; the x axis's title centred on it
PHONE_BARS_PLOT_PX, PHONE_BARS_LEFT_PX = 267, 81


@pytest.mark.parametrize("lang", ["en", "ja", "ko"])
def test_the_alignment_bars_axis_title_fits_a_phone(lang):
    """'クロスアテンションのヘッド（L: 層、H: ヘッド）' on one line was drawn 306 px wide, centred on the bars' plot: 10 px
    past a phone's right edge. Each line of the title as a phone is sent it fits the room its centre leaves, by
    viz.labels' estimate of its width (a column COLUMN_EM of the 14 px type; the English title on one line, which
    chromium drew inside the figure, is estimated past it too)."""
    from viz.labels import COLUMN_EM, PHONE_FIGURE_PX, for_page, label_columns

    words = functools.partial(i18n.text, lang, "encoder_decoder.figure")
    heads = [
        {"layer": layer, "head": h, "accuracy": 0.6, "low": 0.5, "high": 0.7} for layer in (0, 1) for h in range(4)
    ]
    fig = figs.alignment_bars(heads, {"accuracy": 0.4, "low": 0.3, "high": 0.5}, 0.1, words)
    title = for_page(fig.to_dict(), PHONE_FIGURE_PX)["layout"]["xaxis"]["title"]
    centre = PHONE_BARS_LEFT_PX + PHONE_BARS_PLOT_PX / 2
    room = 2 * min(centre, PHONE_FIGURE_PX - centre)
    size = (title.get("font") or {}).get("size") or 14
    widths = [label_columns(line) * COLUMN_EM * size for line in title["text"].split("<br>")]
    assert max(widths) <= room, (title, widths, room)


@pytest.mark.parametrize("lang", ["en", "ja", "ko"])
def test_the_alignment_figures_draw_the_shares_in_percent_as_the_words_say_them(lang):
    # the page's sentences say 41.2% and [35.0%, 47.5%]; the map's cells, colour bar and hover and the bars' axis,
    # hover and lines drew the same shares as 0.41 .. 1.00
    words = functools.partial(i18n.text, lang, "encoder_decoder.figure")
    page = functools.partial(i18n.text, lang, "encoder_decoder")
    diagonal, chance = {"accuracy": 0.4123, "low": 0.35, "high": 0.475}, 0.0625
    grid = {"accuracy": [[0.6321, 0.2]], "low": [[0.581, 0.15]], "high": [[0.68, 0.26]]}
    heatmap = figs.alignment_map(grid, words).data[0]
    # each cell labelled to the decimal its hover and the page say (63.2%, not 63%), the interval on lines of its own
    # (a phone's four heads leave a cell 47 px: plotly shrinks a label's type to fit its longest line)
    assert heatmap.text[0][0] == "63.2%<br>[58.1%,<br>68.0%]" and heatmap.colorbar.tickformat == ".0%"
    assert "%{z:.1%}" in heatmap.hovertemplate and "63.2%" in page("head_result", l=0, h=0, a=0.6321, lo=0.581, hi=0.68)
    heads = [{"layer": 0, "head": 0, "accuracy": 0.6321, "low": 0.581, "high": 0.68}]
    bars = figs.alignment_bars(heads, diagonal, chance, words)
    assert bars.layout.yaxis.tickformat == ".0%" and "%{y:.1%}" in bars.data[0].hovertemplate
    said = page("baseline", a=diagonal["accuracy"], lo=diagonal["low"], hi=diagonal["high"], c=chance)
    lines = [a.text for a in bars.layout.annotations]
    assert "41.2%" in said and any("41.2%" in line for line in lines), (said, lines)
    assert "6.2%" in said and any("6.2%" in line for line in lines), (said, lines)


@pytest.mark.parametrize("lang", ["en", "ja", "ko"])
def test_the_stack_diagram_is_said_box_by_box(lang):
    """The stack diagram is shapes and labels, nothing a caption reads numbers from: /encoder-decoder showed it with
    no text alternative. stack_said names each side's boxes from the bottom with their shapes, in the reader's words."""
    t = functools.partial(i18n.text, lang, "encoder_decoder.figure")
    model, _ = random_marian()
    blocks = edv.stack_blocks(model.config, 6, 5)
    said = figs.stack_said(blocks, 2, t)
    names = [f"{t('block_' + b.key)} (" for b in blocks]
    at = [said.index(name) for name in dict.fromkeys(names)]
    assert at == sorted(at)  # the encoder's boxes first, each side from the bottom
    assert "H × S × S = " in said and "× 6 × 6" in said  # the encoder's self-attention weights: 6 source tokens
