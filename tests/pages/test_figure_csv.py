"""A figure's CSV download (app/ui.py to_csv) holds the visitor's own words where a page labels rows and columns with
the tokens of their text; a learner opens it in a spreadsheet, so no cell may start a formula (core/spreadsheet.py,
the rule the room's CSV follows too)."""

import csv
import io

import numpy as np
import pytest
from streamlit.runtime.media_file_manager import MediaFileManager

from app.ui import to_csv
from core.models import registry
from core.rnn_attention import model as rm
from core.rnn_attention import view as rv
from core.spreadsheet import FORMULA_STARTS, PLAIN_NUMBER
from tests.apptest_helpers import open_view

HOSTILE = "=cmd ＝HYPERLINK @SUM +x -y"


def downloads(monkeypatch, topic: str, params: dict) -> dict[str, str]:
    """Open a page and build each CSV its download buttons offer, as a click would (the data is deferred)."""
    made = {}
    real = MediaFileManager.add_deferred

    def keep(self, data_callable, *args, **kwargs):
        file_id = real(self, data_callable, *args, **kwargs)
        made[file_id] = data_callable
        return file_id

    monkeypatch.setattr(MediaFileManager, "add_deferred", keep)
    at = open_view(topic, params)
    return {str(b.proto.id): made[b.proto.deferred_file_id]() for b in at.get("download_button")}


def formulas(text: str) -> list[str]:
    cells = [c for row in csv.reader(io.StringIO(text)) for c in row]
    return [c for c in cells if c[:1] in FORMULA_STARTS and not PLAIN_NUMBER.fullmatch(c)]


def test_a_visitors_text_in_a_figures_csv_never_starts_a_formula(monkeypatch):
    """/encoder-decoder labels its maps with the source tokens as typed (lowercased): '=cmd', '＝hyperlink', '@sum'
    reach the CSV's header, quoted so that a spreadsheet shows them as text."""
    files = downloads(monkeypatch, "encoder_decoder", {"text": HOSTILE})
    assert files, "the page offers its figures' CSVs"
    for name, text in files.items():
        assert not formulas(text), name
    header = next(csv.reader(io.StringIO(next(t for n, t in files.items() if n.endswith("csv-fig-encoder")))))
    assert "'=cmd → <unk>" in header and "'＝hyperlink → <unk>" in header, header


def test_csv_cells_keep_numbers_and_quote_every_formula_start():
    text = to_csv(
        np.array([[-0.25, 1.0]]),
        row_labels=["\t=1+1"],
        col_labels=["-1+2", "＠x,\r\n=y"],
    )
    rows = list(csv.reader(io.StringIO(text)))
    assert rows == [["", "'-1+2", "'＠x,\r\n=y"], ["'\t=1+1", "-0.25", "1"]]
    assert to_csv({"name": ["＋1", "-3", "Ana"], "n": [-1.5, 2, np.float32(-0.5)]}).splitlines() == [
        "name,n",
        "'＋1,-1.5",
        "-3,2",
        "Ana,-0.5",
    ]


def test_the_rnn_alignments_csv_is_a_table_of_output_rows_and_source_columns(monkeypatch):
    """/rnn-attention's alignment CSV: one row per token the GRU wrote, one column per source token, named as the
    figure names them, each cell one weight (it was one cell per row holding a Python list of the whole row)."""
    if rm.status():
        pytest.skip(rm.status())
    text, language = "The big cat sees the cat.", "ja"
    files = downloads(monkeypatch, "rnn_attention", {"text": text, "target": language})
    rows = list(csv.reader(io.StringIO(next(t for n, t in files.items() if n.endswith("csv-fig-rnn-align")))))
    view = rv.sentence_view_of(*registry.shared(rm.RECORD.key, rm.RECORD), text, language)
    weights = np.asarray(view.attention)
    assert weights.ndim == 2 and weights.shape == (len(view.rows), len(view.source))
    assert len(rows) == 1 + len(view.rows) and all(len(r) == 1 + len(view.source) for r in rows), rows[:2]
    assert rows[0] == ["", *view.col_labels] and rows[0][4] == "3 cat" and rows[0][7] == "6 cat"  # a repeat too
    assert [r[0] for r in rows[1:]] == view.row_labels
    np.testing.assert_allclose([[float(c) for c in r[1:]] for r in rows[1:]], weights, rtol=1e-5, atol=1e-7)
