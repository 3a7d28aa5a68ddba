"""Every figure drawn with its numbers has a text alternative (app/ui.py text_alternative): a sentence naming the
figure, its axes and its largest cells as the figure plots them, and the numbers as a table on demand."""

import copy
import re

import numpy as np
import pytest
import torch

from tests.apptest_helpers import heatmap_by_key, open_view, shown_text


def test_sdpa_steps_weights_are_told_and_tabled():
    """/sdpa-steps' default preset (classic): the largest softmax weight the figure plots is named with its query
    and key, and the table holds the plotted matrix."""
    at = open_view("sdpa_steps")
    z, keys, queries = heatmap_by_key(at, "fig-weights")
    i, j = np.unravel_index(np.nanargmax(z), z.shape)
    line = next(c.value for c in at.caption if f"` {queries[i]} ` → ` {keys[j]} `: {z[i, j]:.3g}" in c.value)
    assert "Largest values" in line
    at.toggle(key="table-fig-weights").set_value(True).run()
    tables = [d.value for d in at.dataframe if d.value.shape == z.shape]
    assert tables and np.allclose(tables[0].to_numpy(dtype=float), z, atol=1e-4)  # the figure plots 4 decimals


@pytest.mark.slow
@pytest.mark.parametrize("lang,word", [("en", "Largest values"), ("ja", "最も大きい値"), ("ko", "가장 큰 값")])
def test_attention_head_is_told_in_the_readers_language(lang, word):
    """/attention's head view: 'query → key: weight' of the map's strongest cell, in the chosen language."""
    at = open_view(
        "attention", {"view": "head", "text": "The cat sat on the mat because it was tired."}, {"lang": lang}
    )
    z, keys, queries = heatmap_by_key(at, "fig-head")
    i, j = np.unravel_index(np.nanargmax(z), z.shape)
    text = shown_text(at)
    assert word in text
    assert f"` {queries[i]} ` → ` {keys[j]} `: {z[i, j]:.3g}" in text


@pytest.mark.slow
def test_attention_thumbnails_name_the_strongest_tile_and_its_tokens(minilm):
    """/attention's grid of 6 × 12 thumbnails (9 tokens: one cell per token pair): the caption names the tile and
    the query → key of the largest weight, which is the largest of transformers' own eager attention over every
    layer and head (the thumbnails keep 3 decimals)."""
    text = "The cat sat on the mat."
    at = open_view("attention", {"view": "grid", "text": text})
    ref = copy.deepcopy(minilm.model)
    ref.set_attn_implementation("eager")
    batch = minilm.tokenize([text])
    with torch.no_grad():
        eager = ref.eval()(input_ids=batch.input_ids, attention_mask=batch.attention_mask, output_attentions=True)
    weights = torch.stack([a[0] for a in eager.attentions]).numpy()  # (layers, heads, 9, 9)
    told = re.search(r"layer (\d+), head (\d+), ` (\d+) (\S+) ` → ` (\d+) (\S+) `: ([0-9.e+-]+)", shown_text(at))
    assert told, "no tile named"
    layer, head, q, k = (int(told.group(i)) for i in (1, 2, 3, 5))
    assert (told.group(4), told.group(6)) == (batch.tokens[0][q], batch.tokens[0][k])
    assert round(float(weights[layer, head, q, k]), 3) == round(float(weights.max()), 3)
    assert told.group(7) == f"{round(float(weights.max()), 3):.3g}"


@pytest.mark.parametrize("lang", ["ja", "ko"])
@pytest.mark.parametrize("topic,params", [("ablation", {"card": "induction-zero"}), ("positions", {"part": "alibi"})])
def test_a_figures_table_names_its_columns_in_the_readers_words(topic, params, lang):
    """A figure handed with a dict of columns showed them under the page's identifiers ('placebo_harm', 'slope'),
    English to every reader; the table names them in the reader's words ([figure_columns]), the CSV keeps them."""
    at = open_view(topic, {"lang": lang, **params})
    toggles = [t.key for t in at.toggle if t.key and t.key.startswith("table-")]
    assert toggles, topic
    for key in toggles:
        at.toggle(key=key).set_value(True)
    at.run()
    columns = [str(c) for d in at.dataframe for c in d.value.columns]
    english = [c for c in columns if re.fullmatch(r"[a-z][a-z_]+", c)]
    assert not english, (english, columns)
