"""Every figure drawn with its numbers has a text alternative (app/ui.py text_alternative): a sentence naming the
figure, its axes and its largest cells as the figure plots them, and the numbers as a table on demand."""

import numpy as np
import pytest

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
