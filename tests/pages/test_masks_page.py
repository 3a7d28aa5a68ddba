"""/masks driven through AppTest beyond 'no exception': what it computes is on screen, the masks read as
allowed and blocked, and the encoder-decoder demo chains its layers."""

from app import i18n
from tests.apptest_helpers import assert_no_exception, figure_traces, open_view

MODEL_FREE = True  # its tests (those not marked slow) load no model: tests/conftest.py checks it

MASKS = "masks"


def test_masks_page_masked_weights_are_exactly_zero_on_screen():
    at = open_view(MASKS)
    facts = " ".join(m.value for m in at.markdown if "Measured now" in m.value)
    assert "largest weight on a masked cell 0;" in facts
    assert any("Random weights" in w.value for w in at.warning)
    padded = at.dataframe[0].value
    assert padded.shape == (3, 10) and padded.iloc[1].tolist()[:3] == ["Dogs", "bark", "."]
    assert padded.iloc[1].tolist()[3:] == ["[PAD]"] * 7


def test_masks_page_line_rules():
    at = open_view(MASKS, {"text": "a b\nc\nd e f\ng\nh"})
    assert any("first 4 lines" in i.value for i in at.info)
    assert at.dataframe[0].value.shape == (4, 3)
    at = open_view(MASKS, {"text": "only one line"})
    assert any("at least two sentences" in i.value for i in at.info)
    assert not any(i.value == i18n.text("en", "masks", "empty") for i in at.info)
    at = open_view(MASKS, {"text": "word " * 40 + "\nshort"})
    assert any("has 40 tokens; the first 12 are used" in i.value for i in at.info)


def test_masks_page_asks_an_emptied_box_for_sentences_in_one_sentence():
    """A cleared box (typed, not a link) gets its own notice, not the one for a single sentence; the examples stand in."""
    at = open_view(MASKS)
    at.text_area(key="text").set_value(" \n\n ").run()
    assert_no_exception(at)
    notices = [i.value for i in at.info]
    assert i18n.text("en", "masks", "empty") in notices and not any("at least two" in n for n in notices), notices
    assert at.dataframe[0].value.shape == (3, 10)  # the example sentences, as the notice says


def test_masks_page_shows_user_text_as_text_only():
    at = open_view(MASKS, {"text": "<script>alert(1)</script>\n<b>bold</b> 猫 😴"})
    padded = at.dataframe[0].value
    assert padded.iloc[0].tolist()[:3] == ["<", "script", ">"] and "😴" in padded.iloc[1].tolist()
    assert not any("<script" in m.value or "<b>" in m.value for m in at.markdown)


def test_masks_page_cross_attention_shapes():
    at = open_view(MASKS, {"text": "a b c d e\nx y", "src": "0", "tgt": "1"})
    shapes = at.dataframe[1].value
    cross = shapes.iloc[2]
    assert cross["Q"] == "(1, 4, 2, 4)" and cross["K"] == "(1, 4, 5, 4)" and cross["softmax(QKᵀ/√d)"] == "(1, 4, 2, 5)"


def test_masks_page_mask_cells_read_apart_and_axes_name_rows_and_columns():
    at = open_view(MASKS)
    layout_titles = []
    for index in range(len(at.get("plotly_chart"))):
        traces = figure_traces(at, index)
        if traces[0].get("name") != "may attend":  # not a query x key mask
            continue
        heat = [t for t in traces if t["type"] == "heatmap"]
        for t in heat:
            marks = {c for row in (t.get("text") or []) for c in row if c}
            assert marks == ({"✕"} if t["name"] == "masked" else set()), (t["name"], marks)
        legend = [t["name"] for t in traces if t["type"] == "scatter"]
        assert legend == ["may attend", "masked (✕)"]
        layout_titles.append(index)
    assert len(layout_titles) == 4  # the three masks and the applied one
    shown = " ".join(str(c.proto.spec) for c in at.get("plotly_chart"))
    assert "queries (rows)" in shown and "keys (columns)" in shown


def test_masks_page_cross_attention_reads_the_encoder_output():
    at = open_view(MASKS, {"text": "a b c d e\nx y", "src": "0", "tgt": "1"})
    shapes = at.dataframe[1].value
    cross = shapes.iloc[2]
    assert cross["queries from (x)"] == "decoder self-attention output (1, 2, 16)"
    assert cross["keys/values from"] == "encoder output (1, 5, 16)"
    assert any("/encoder-decoder page" in i.value for i in at.info)
    flow = " ".join(c.value for c in at.code)
    assert "encoder output (1, 5, 16)" in flow and "decoder output (1, 2, 16)" in flow


def test_masks_page_pads_to_a_fixed_maximum_beside_the_longest():
    from core.masks import batch as mb
    from tests.apptest_helpers import shown_text

    lists = mb.read_sentences("\n".join(mb.EXAMPLES)).token_lists
    for link, fixed in (({}, 41), ({"pad_to": "20"}, 20)):
        text = shown_text(open_view("masks", link))
        c = mb.padding_comparison(lists, fixed)
        assert f"To the longest: n = {c.longest.length}, {c.longest.padding} of {c.longest.positions}" in text
        assert f'To a fixed {fixed} (a tokenizer called with padding="max_length"' in text
        assert f"computes {c.fixed.scores:,} scores instead of {c.longest.scores:,}" in text


def test_masks_page_shapes_table_names_its_columns_in_the_readers_words():
    """The shapes table's column of outputs was headed 'output' in English on every language's page; its symbols (Q, K, V,
    softmax(QKᵀ/√d)) read the same in every language, its words are the catalog's."""
    for lang in ("ja", "ko"):
        at = open_view(MASKS, {"text": "a b c d e\nx y", "src": "0", "tgt": "1", "lang": lang})
        columns = list(at.dataframe[1].value.columns)
        assert "output" not in columns, (lang, columns)
        assert i18n.text(lang, "masks", "col_output") in columns, (lang, columns)
        assert [c for c in columns if c.isascii() and c not in ("Q", "K", "V")] == [], (lang, columns)


def test_masks_page_shape_lines_wrap_in_their_narrow_blocks():
    """Each kind's shape line stands in a block a third of the page wide: drawn unwrapped, it stopped after
    'Q (1, 4, 7, 4) · K (1, 4, 7, 4) →' at 1280 px (ja), the weights and the output behind a scroll bar."""
    at = open_view(MASKS, {"lang": "ja"})
    start = i18n.text("ja", "masks", "shape_line").split("{")[0]
    lines = [c for c in at.code if c.value.startswith(start)]
    assert len(lines) == 3 and all(c.proto.wrap_lines for c in lines), [(c.value, c.proto.wrap_lines) for c in lines]
