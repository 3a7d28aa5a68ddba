"""A figure's CSV download (app/ui.py to_csv) holds the visitor's own words where a page labels rows and columns with
the tokens of their text; a learner opens it in a spreadsheet, so no cell may start a formula (core/spreadsheet.py,
the rule the room's CSV follows too)."""

import csv
import html
import io
import json

import numpy as np
import pytest
from streamlit.runtime.media_file_manager import MediaFileManager

from app import i18n
from app.ui import to_csv
from core import flash_attention as fa
from core import head_detectors as hd
from core import logit_lens as lens
from core.antecedents import view as antecedents
from core.encoder_decoder import alignment as ed_alignment
from core.kv_cache import state as kv_state
from core.kv_cache import views as kv_views
from core.models import registry
from core.positions import alibi, learned, relative, rope, sinusoidal
from core.results import load_result
from core.rnn_attention import model as rm
from core.rnn_attention import view as rv
from core.spreadsheet import FORMULA_STARTS, PLAIN_NUMBER
from tests.apptest_helpers import open_view, plotted_values

HOSTILE = "=cmd ＝HYPERLINK @SUM +x -y"


def downloads(monkeypatch, topic: str, params: dict) -> dict[str, str]:
    """Open a page and build each CSV its download buttons offer, as a click would (the data is deferred)."""
    return page_downloads(monkeypatch, topic, params)[1]


def page_downloads(monkeypatch, topic: str, params: dict):
    """The opened page and its CSVs by button id, each built as a click would build it."""
    made = {}
    real = MediaFileManager.add_deferred

    def keep(self, data_callable, *args, **kwargs):
        file_id = real(self, data_callable, *args, **kwargs)
        made[file_id] = data_callable
        return file_id

    monkeypatch.setattr(MediaFileManager, "add_deferred", keep)
    at = open_view(topic, params)
    return at, {str(b.proto.id): made[b.proto.deferred_file_id]() for b in at.get("download_button")}


def csv_rows(files: dict[str, str], key: str) -> list[list[str]]:
    """The CSV of the figure drawn with `key`, read as a spreadsheet reads it."""
    return list(csv.reader(io.StringIO(next(t for n, t in files.items() if n.endswith(f"csv-{key}")))))


def axis_labels(at, key: str, trace: int = 0) -> tuple[list[str], list[str]]:
    """(rows, columns) of a figure's heatmap as the page sent them (y and x, plotly's entities decoded)."""
    spec = json.loads(next(c.proto.spec for c in at.get("plotly_chart") if c.proto.id.endswith(key)))
    drawn = spec["data"][trace]
    return [html.unescape(str(v)) for v in drawn["y"]], [html.unescape(str(v)) for v in drawn["x"]]


def assert_table(rows: list[list[str]], numbers, row_labels, col_labels, corner: str | None = None) -> None:
    """A CSV of a matrix: a header of column labels after the corner (what the rows and columns are), one labelled
    row per matrix row, the numbers as written (6 significant digits)."""
    numbers = np.asarray(numbers, dtype=np.float64)
    assert numbers.ndim == 2, numbers.shape
    assert len(rows) == 1 + numbers.shape[0] and all(len(r) == 1 + numbers.shape[1] for r in rows), rows[:2]
    assert rows[0][1:] == list(col_labels), rows[0]
    assert corner is None or rows[0][0] == corner, rows[0][0]
    assert [r[0] for r in rows[1:]] == list(row_labels)
    written = [[float(c) if c else np.nan for c in r[1:]] for r in rows[1:]]  # an empty cell: one the figure leaves out
    np.testing.assert_allclose(written, numbers, rtol=1e-5, atol=1e-7)


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
    assert "1 =cmd → <unk>" in header and "2 ＝hyperlink → <unk>" in header, header
    assert to_csv(np.zeros((1, 1)), ["=cmd → <unk>"], ["＝hyperlink"]).splitlines() == [
        ",'＝hyperlink",
        "'=cmd → <unk>,0",
    ]


def test_the_encoder_decoders_csvs_name_each_token_by_its_position_as_the_maps_do(monkeypatch):
    """/encoder-decoder's three maps (the encoder's, the decoder's masked self-attention, cross-attention): rows and
    columns named as the figures' axes, '1 the' and '4 the' apart where a word repeats (the CSVs had bare tokens: two
    columns 'the'); the cells the look-ahead mask hides are empty, not the text 'nan'."""
    from core.encoder_decoder import model as ed_model
    from core.encoder_decoder import view as edv

    if ed_model.status():
        pytest.skip(ed_model.status())
    text, step = "the cat sees the dog", 3
    at, files = page_downloads(monkeypatch, "encoder_decoder", {"text": text, "step": str(step)})
    run = edv.run_sentence(*registry.shared(registry.ENCODER_DECODER), text, "ja")
    view = edv.step_view(run, "free", step, 0, 0)
    for key, numbers in (("fig-encoder", view.encoder), ("fig-self", view.self_attention), ("fig-cross", view.cross)):
        rows, cols = axis_labels(at, key)
        assert len(set(rows)) == len(rows) and len(set(cols)) == len(cols), (key, rows, cols)
        table = csv_rows(files, key)
        assert_table(table, numbers, rows, cols)
    assert sum(c.endswith(" the") for c in axis_labels(at, "fig-encoder")[1]) == 2
    hidden = csv_rows(files, "fig-self")[1:]
    assert len(hidden) == step + 1 and all(r[j + 2 :] == [""] * (step - j) for j, r in enumerate(hidden))


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
    assert rows[0][1:] == view.col_labels and rows[0][4] == "3 cat" and rows[0][7] == "6 cat"  # a repeat too
    corner = "written token (query: decoder state) \\ source token (key and value: encoder state)"
    assert rows[0][0] == corner  # what the rows are and what the columns are, as the figure's axes say
    assert [r[0] for r in rows[1:]] == view.row_labels
    np.testing.assert_allclose([[float(c) for c in r[1:]] for r in rows[1:]], weights, rtol=1e-5, atol=1e-7)


def test_the_flash_tiles_csvs_name_their_queries_keys_and_dimensions(monkeypatch):
    """/flash-attention: the tiles' weights by query (rows) and key (columns), the partial output by the walked
    tile's queries and the value dimensions, named as the figures' axes name them (they were bare numbers)."""
    params = {"n": "6", "d": "3", "br": "4", "bc": "3", "causal": "1", "qtile": "1", "step": "0"}
    at, files = page_downloads(monkeypatch, "flash_attention", params)
    view = fa.walk(6, 3, 4, 3, q_tile=1, causal=True)
    rows, cols = axis_labels(at, "fig-tiles")
    assert rows == cols == [str(i) for i in range(6)]
    assert_table(csv_rows(files, "fig-tiles"), view.weights, rows, cols, corner="query \\ key")
    rows, cols = axis_labels(at, "fig-out")
    assert rows == ["4", "5"] and cols == ["0", "1", "2"]
    assert_table(csv_rows(files, "fig-out"), view.steps[0].output, rows, cols, corner="query \\ dimension")


def test_a_matrix_csvs_corner_says_what_its_rows_and_columns_are_in_the_visitors_language(monkeypatch):
    """Numbered rows and columns ('0', '1', ..) say nothing of which is the query and which the key: the corner
    cell above the row labels names them as the figure's axes do (common.csv_corner), in the page's language;
    a CSV of columns keeps its own header."""
    params = {"n": "4", "lang": "ja"}
    files = downloads(monkeypatch, "flash_attention", params)
    assert csv_rows(files, "fig-tiles")[0][:3] == ["クエリ＼キー", "0", "1"]
    assert csv_rows(files, "fig-tr")[0][0] == "n"
    ko = csv_rows(downloads(monkeypatch, "flash_attention", {"n": "4", "lang": "ko"}), "fig-tiles")[0][0]
    assert ko == i18n.text("ko", "common", "csv_corner", rows=i18n.text("ko", "flash_attention.figure", "query_axis"),
                           cols=i18n.text("ko", "flash_attention.figure", "key_axis"))  # fmt: skip
    assert to_csv(np.eye(2), ["0", "1"], ["0", "1"], corner="=query \\ key").splitlines()[0] == "'=query \\ key,0,1"


@pytest.mark.slow  # SmolLM2 generates
def test_the_kv_cache_csvs_name_heads_steps_and_positions(monkeypatch):
    """/kv-cache: one step's map by head (and their mean, as the figure draws it) and position, every step's map by
    step and position, the KL curves beside the step they belong to; named as the figures' axes name them."""
    if registry.model_status()["smollm2"] is not None:
        pytest.skip("SmolLM2 is not installed")
    params = {"prompt": "The cat sat on the mat.", "new": "3", "step": "1", "layer": "2", "hlayer": "1"}
    at, files = page_downloads(monkeypatch, "kv_cache", params)
    gen = kv_state.STATE.read(params).generation
    step = kv_views.step_attention(gen, 1, 2, 96)
    rows, cols = axis_labels(at, "fig-step")
    heads = [i18n.text("en", "kv_cache.figure", "head", h=h) for h in range(step.weights.shape[0])]
    assert rows == [*heads, i18n.text("en", "kv_cache.figure", "mean")] and cols[:2] == ["0 The", "1  cat"], cols
    assert_table(csv_rows(files, "fig-step"), np.vstack([step.weights, step.mean]), rows, cols)
    hist = kv_views.history(gen, 1, None, 96)
    rows, cols = axis_labels(at, "fig-hist")
    assert len(rows) == len(gen.steps) and rows == hist.row_labels and cols == hist.col_labels
    assert_table(csv_rows(files, "fig-hist"), hist.weights, rows, cols)
    kl = csv_rows(files, "fig-kl")
    curves = kv_views.eviction(gen)
    assert kl[0] == ["query", *curves.kl] and [r[0] for r in kl[1:]] == curves.step_labels
    assert curves.step_labels == axis_labels(at, "fig-kl")[1]
    kl_numbers = np.array(list(curves.kl.values())).T  # another run of the model: float32 rounding apart
    np.testing.assert_allclose([[float(c) for c in r[1:]] for r in kl[1:]], kl_numbers, rtol=1e-5, atol=1e-7)


def test_the_head_detector_csv_is_a_table_of_layers_and_heads(monkeypatch):
    """/head-detectors: the committed map's scores, one row per layer and one column per head, numbered as the
    figure's axes number them (it went out as bare numbers)."""
    view = hd.committed_view("minilm", "previous_token")
    if view is None:
        pytest.skip("no committed head-detector map")
    at, files = page_downloads(monkeypatch, "head_detectors", {"model": "minilm", "detector": "previous_token"})
    rows, cols = axis_labels(at, "fig-previous_token")
    assert rows == [str(i) for i in range(6)] and cols == [str(h) for h in range(12)]  # MiniLM: 6 layers x 12 heads
    assert_table(csv_rows(files, "fig-previous_token"), view.scores, rows, cols)


@pytest.mark.slow  # SmolLM2 reads the text
def test_the_logit_lens_csv_is_a_table_of_stages_and_positions(monkeypatch):
    """/logit-lens: the final prediction's probability, one row per stage ('embeddings', 'after layer 0', ..) and
    one column per position and token ('1: cmd'), as the figure names them."""
    if registry.model_status()["smollm2"] is not None:
        pytest.skip("SmolLM2 is not installed")
    text = "=cmd one two one"
    at, files = page_downloads(monkeypatch, "logit_lens", {"text": text})
    view = lens.logit_lens(registry.shared("smollm2"), text)
    rows, cols = axis_labels(at, "fig-lens")
    assert rows[:2] == ["embeddings", "after layer 0"] and len(rows) == 31 and cols == view.position_labels
    assert cols[:2] == ["0: =", "1: cmd"]  # a position before each token: no label starts a formula
    assert_table(csv_rows(files, "fig-lens"), view.final_prob.numpy(), rows, cols)


def axis_numbers(at, key: str) -> tuple[np.ndarray, np.ndarray]:
    """(rows, columns) of a figure's heatmap on numeric axes (positions, dimensions), as the page sent them."""
    spec = json.loads(next(c.proto.spec for c in at.get("plotly_chart") if c.proto.id.endswith(key)))
    return plotted_values(spec["data"][0]["y"]), plotted_values(spec["data"][0]["x"])


def numbered_table(rows: list[list[str]], numbers, at, key: str) -> None:
    """A CSV of a matrix drawn on numeric axes: its labels are the figure's positions or dimensions."""
    y, x = axis_numbers(at, key)
    assert [float(c) for c in rows[0][1:]] == x.tolist() and [float(r[0]) for r in rows[1:]] == y.tolist(), key
    assert_table(rows, numbers, rows_of(rows), rows[0][1:])


def rows_of(rows: list[list[str]]) -> list[str]:
    return [r[0] for r in rows[1:]]


POSITION_PARTS = {
    "sinusoidal": {"d": "16", "n": "16", "base": "4"},
    "relative": {"rel_n": "5", "rel_d": "4", "clip": "1", "seed": "3"},
    "alibi": {"heads": "4", "al_n": "6", "al_head": "2"},
    "rope": {"rope_d": "8", "rope_base": "4", "m": "2", "rope_n": "16", "rope_pair": "1"},
    "learned": {"npos": "64"},
}


@pytest.mark.parametrize("part", POSITION_PARTS)
def test_the_positions_csvs_name_their_positions_and_dimensions(monkeypatch, part):
    """/positions: every matrix's CSV names its rows and columns (query and key positions, positions and
    dimensions, dimensions in and out, positions and pairs) as its figure's axes do; they went out as bare
    numbers, so a learner could not tell a row's position from a column's."""
    if part == "learned" and registry.model_status()["minilm"] is not None:
        pytest.skip("MiniLM is not installed")
    at, files = page_downloads(monkeypatch, "positions", {"part": part, **POSITION_PARTS[part]})
    if part == "sinusoidal":
        enc = sinusoidal.encoding_view(16, 16, 1e4)
        numbered_table(csv_rows(files, "fig-pe"), enc.pe, at, "fig-pe")
        numbered_table(csv_rows(files, "fig-dot"), enc.dots, at, "fig-dot")
        pooled = sinusoidal.pooled_encoding(*sinusoidal.MATERIAL_SIZE, 1e4)
        numbered_table(csv_rows(files, "fig-pe-pooled"), pooled.pe, at, "fig-pe-pooled")
        assert rows_of(csv_rows(files, "fig-pe"))[:2] == ["0", "1"] and len(csv_rows(files, "fig-pe")[0]) == 17
    elif part == "relative":
        view = relative.shaw_view(5, 4, 1, 3)
        for key, matrix in (("fig-offsets", view.offsets), ("fig-s", view.relative), ("fig-shaw-w", view.weights)):
            rows, cols = axis_labels(at, key)
            assert rows == cols == ["0", "1", "2", "3", "4"], key
            assert_table(csv_rows(files, key), matrix, rows, cols)
    elif part == "alibi":
        view = alibi.alibi_view(4, 6, 2)
        for key, matrix in (("fig-bias", view.bias), ("fig-alibi-w", view.weights)):
            rows, cols = axis_labels(at, key)
            assert rows == cols == [str(i) for i in range(6)], key
            assert_table(csv_rows(files, key), matrix, rows, cols)
    elif part == "rope":
        rot = rope.rotation_view(8, 1e4, 2)
        rows, cols = axis_labels(at, "fig-rot")
        assert rows == cols == [str(i) for i in range(8)]
        assert_table(csv_rows(files, "fig-rot"), rot.rotation, rows, cols)
        numbered_table(csv_rows(files, "fig-angles"), rope.angles_view(rot.inv_freq, 16, 1).angles, at, "fig-angles")
        big = rope.pooled_angles(*sinusoidal.MATERIAL_SIZE, base=1e4)
        numbered_table(csv_rows(files, "fig-angles-pooled"), big.angles, at, "fig-angles-pooled")
        numbered_table(csv_rows(files, "fig-check"), rope.check_view(rot.inv_freq, 16, 2).scores, at, "fig-check")
    else:
        view = learned.similarity_view(registry.shared("minilm"), 64)
        numbered_table(csv_rows(files, "fig-sim"), view.shown, at, "fig-sim")


def test_the_per_head_maps_csvs_are_tables_of_layers_and_heads(monkeypatch):
    """/antecedents' per-head accuracy ('0'.. by '0'..) and /encoder-decoder's alignment map ('layer 0' by
    'head 0'): one row per layer and one column per head, named as the figures' axes (they went out bare); the
    alignment map's cells in % as it draws them."""
    results = antecedents.load_results()
    measured = load_result("encoder_decoder_alignment", required=ed_alignment.is_result)
    if results is None or "minilm" not in results["models"] or measured is None:
        pytest.skip("no committed results")
    at, files = page_downloads(monkeypatch, "antecedents", {"model": "minilm"})
    rows, cols = axis_labels(at, "fig-per-head")
    grid = antecedents.per_head_accuracy(results["models"]["minilm"])
    assert rows == [str(i) for i in range(grid.shape[0])] and cols == [str(h) for h in range(grid.shape[1])]
    assert_table(csv_rows(files, "fig-per-head"), grid, rows, cols)
    at, files = page_downloads(monkeypatch, "encoder_decoder", {"part": "alignment"})
    rows, cols = axis_labels(at, "fig-align-map")
    assert rows[0] == "layer 0" and cols[:2] == ["head 0", "head 1"], (rows, cols)
    # the map draws its accuracies in % (cells and hover 63.2%): its CSV writes them so ('63.21%'), as a spreadsheet reads them
    table = csv_rows(files, "fig-align-map")
    assert all(c.endswith("%") for r in table[1:] for c in r[1:] if c), table[1]
    in_percent = [table[0]] + [[r[0]] + [c.removesuffix("%") for c in r[1:]] for r in table[1:]]
    assert_table(in_percent, np.asarray(ed_alignment.result_grid(measured)["accuracy"]) * 100, rows, cols)


def bar_chart(at, key: str) -> list[dict]:
    """A figure's traces as the page sent them."""
    return json.loads(next(c.proto.spec for c in at.get("plotly_chart") if c.proto.id.endswith(key)))["data"]


def test_the_padded_batch_mask_csv_names_its_positions(monkeypatch):
    """/padded-batch's attention_mask: one row per sentence ('sentence 0'), and now a header of positions as the
    figure's x axis numbers them (its columns had no names)."""
    at, files = page_downloads(monkeypatch, "padded_batch", {"text": "a cat\nthe cat sat on the mat"})
    rows, cols = axis_labels(at, "fig-mask")
    assert rows == ["sentence 0", "sentence 1"] and cols[:3] == ["0", "1", "2"], (rows, cols)
    table = csv_rows(files, "fig-mask")
    # the figure draws the two kinds of cell as two layers, a token's (1 where a real token) and padding's
    tokens, padding = (plotted_values(t["z"]) for t in bar_chart(at, "fig-mask") if t["type"] == "heatmap")
    assert np.array_equal(np.isnan(tokens), ~np.isnan(padding))  # every cell is of one kind
    assert_table(table, np.where(np.isnan(tokens), 0.0, 1.0), rows, cols)  # the 0/1 the figure draws
    assert table[1][-1] == "0" and set(table[2][1:]) == {"1"}  # the short sentence is padded


@pytest.mark.slow  # SmolLM2 reads the text
def test_the_why_head_share_and_kept_csvs_name_each_head(monkeypatch):
    """/why-head: the band shares by head ('H0' ..) and band (named as the legend names it), the kept shares with
    the head each row belongs to (that CSV had no head column: ten rows of three numbers)."""
    if registry.model_status()["smollm2"] is not None:
        pytest.skip("SmolLM2 is not installed")
    at, files = page_downloads(monkeypatch, "why_head", {"layer": "1", "head": "2", "split": "equal", "bands": "4"})
    bars = bar_chart(at, "fig-shares")
    heads, bands = bars[0]["x"], [html.unescape(b["name"]) for b in bars]
    assert heads[:2] == ["H0", "H1"] and len(bands) == 4
    shares = np.array([plotted_values(b["y"]) for b in bars]).T
    assert_table(csv_rows(files, "fig-shares"), shares, heads, bands)
    kept = csv_rows(files, "fig-kept")
    assert kept[0] == ["head", "position_only", "content_only", "uniform"] and [r[0] for r in kept[1:]] == heads
    bars = bar_chart(at, "fig-kept")
    drawn = np.array([plotted_values(b["y"]) for b in bars]).T
    np.testing.assert_allclose([[float(c) for c in r[1:]] for r in kept[1:]], drawn, rtol=1e-5, atol=1e-7)


def test_csvs_of_figures_drawn_in_percent_write_their_shares_in_percent(monkeypatch):
    """/moe's expert load and dropped share and /antecedents' accuracy bars draw shares in % (axes 0% .. 100%, hovers
    63.2%): their CSVs wrote 0.632 beside them; a share column now says 63.2%, a count or a capacity factor stays
    a plain number."""

    def shares(rows: list[list[str]], name: str) -> list[str]:
        return [r[rows[0].index(name)] for r in rows[1:]]

    files = downloads(monkeypatch, "moe", {"layer": "1"})
    load, dropped = csv_rows(files, "load"), csv_rows(files, "dropped")
    assert all(c.endswith("%") for c in shares(load, "share")), load
    assert not any(c.endswith("%") for c in shares(load, "count")), load
    assert abs(sum(float(c.removesuffix("%")) for c in shares(load, "share")) - 100) < 1e-4  # the shares of all
    assert all(c.endswith("%") for c in shares(dropped, "dropped_share")), dropped
    assert not any(c.endswith("%") for c in shares(dropped, "capacity_factor")), dropped
    results = antecedents.load_results()
    if results is None or "minilm" not in results["models"]:
        pytest.skip("no committed results")
    accuracy = csv_rows(downloads(monkeypatch, "antecedents", {"model": "minilm"}), "fig-accuracy")
    for name in ("accuracy", "low", "high"):
        assert all(c.endswith("%") for c in shares(accuracy, name)), accuracy
