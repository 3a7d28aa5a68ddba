"""Short tables are drawn whole (app/ui.table): in Streamlit's default ten rows, /models' twelve capabilities,
/multi-head's dropout row of thirteen keys, /padded-batch's fourteen positions and /logit-lens' nineteen hid their
last rows (the experts; the [SEP] the row belongs to; the padding a sentence ends in, what the page is about; the last
positions, which the sentence under the table counts) behind the table's own scroll bar."""

import pytest
import streamlit as st

from tests.apptest_helpers import open_view


@pytest.fixture()
def tables(monkeypatch):
    """(rows, height) of every st.dataframe a run draws."""
    drawn = []
    original = st.dataframe

    def recording(data=None, width="stretch", height="auto", **kwargs):
        drawn.append((max(map(len, data.values())) if isinstance(data, dict) else len(data), height))
        return original(data, width, height, **kwargs)

    monkeypatch.setattr(st, "dataframe", recording)
    return drawn


@pytest.mark.parametrize("topic", ["models", "padded_batch", "multi_head", "logit_lens"])
def test_tables_of_more_than_ten_rows_are_drawn_whole(tables, topic):
    open_view(topic)
    long = [(rows, height) for rows, height in tables if rows > 10]
    assert long, tables  # the page has one: 12 capabilities, 14 positions, 13 keys, 19 positions
    assert all(height == "content" for _, height in long), long
