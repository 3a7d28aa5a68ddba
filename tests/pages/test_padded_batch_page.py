"""/padded-batch headless (MiniLM): every padded key gets exactly 0 weight, and a link moves the padding left or
takes the mask away."""

from tests.apptest_helpers import open_view, shown_text


def test_padded_batch_page_reports_exact_zeros_and_equality():
    at = open_view("padded_batch")
    text = shown_text(at)
    assert "every padded key gets exactly 0 weight" in text, text


def test_a_link_moves_the_padding_left_or_takes_the_mask_away():
    """MiniLM numbers positions from the first slot: left padding moves its real tokens' positions (no weight on
    padding, yet not equal to the run alone); without the mask its real queries weigh the padding."""
    at = open_view("padded_batch", {"pad": "left"})
    assert at.radio(key="pad").value == "left" and "the model numbered them from the padding" in shown_text(at)
    at = open_view("padded_batch", {"nomask": "1", "row": "2"})
    assert at.checkbox(key="nomask").value and "padding leaks into this batch" in shown_text(at)
    assert "Without the mask the model got all ones: the 14 padding tokens" in shown_text(at)
    assert "Rows of padding tokens are computed too but are never used" in shown_text(
        at
    )  # sentence 2's padding rows, though the model got no mask


def test_a_batch_is_one_model_pass_and_each_sentence_runs_alone_once(monkeypatch):
    """The check reads the page's own batch run (no second batch pass) and each sentence's run alone, kept per
    sentence: a sentence added to the batch runs alone by itself, the others' runs alone are kept."""
    from core.models import registry

    model = registry.shared("minilm")
    real, passes = model.run, []
    monkeypatch.setattr(model, "run", lambda batch, **kw: passes.append(len(batch.texts)) or real(batch, **kw))
    lines = ["Counting passes is cheap.", "The batch runs once.", "Each line runs alone once."]
    open_view("padded_batch", {"text": "\n".join(lines)})
    assert sorted(passes) == [1, 1, 1, 3]  # the batch of three, each sentence alone
    passes.clear()
    at = open_view("padded_batch", {"text": "\n".join([*lines, "One more line."])})
    assert sorted(passes) == [1, 4] and "every padded key gets exactly 0 weight" in shown_text(at)


def test_visitors_at_the_same_batch_share_its_mask_figure_and_token_table(monkeypatch):
    """The mask figure and the token table depend on the batch alone: built once per language for every visitor
    and for a lesson's step at the same batch, even after the run cache (a few runs for every page) dropped the
    batch run and it ran again."""
    from app import models
    from app.views import padded_batch as page
    from tests.apptest_helpers import count_builds, figure_by_key

    masks = count_builds(monkeypatch, page.figures, "mask_figure")
    tables = count_builds(monkeypatch, page, "tokens_table")
    first = open_view("padded_batch")
    models._light.clear()  # the class's other pages' runs took the run cache's places
    second = open_view("padded_batch")
    assert len(masks) == 1 and len(tables) == 1
    assert figure_by_key(first, "fig-mask") == figure_by_key(second, "fig-mask")
    assert first.dataframe[0].value.equals(second.dataframe[0].value)
    walk = open_view("lessons", {"lesson": "padded-batch", "lstep": "1"})  # its question asks about the padding
    assert len(masks) == 1 and figure_by_key(walk, "step-fig-0-0") == figure_by_key(first, "fig-mask")
    open_view("padded_batch", {"lang": "ko"})
    assert len(masks) == 2 and len(tables) == 2  # the reader's words: built once more in Korean


def test_the_token_tables_columns_are_the_masks_rows_in_the_readers_language():
    """The table of each sentence's tokens names its columns as the mask's figure names its rows ('文 0' in
    Japanese), one column a sentence, its cells the tokens as the batch holds them (padding included)."""
    import json

    for lang in ("en", "ja"):
        at = open_view("padded_batch", {"lang": lang, "text": "a cat\nthe cat sat"})
        spec = json.loads(next(c.proto.spec for c in at.get("plotly_chart") if c.proto.id.endswith("fig-mask")))
        rows = [str(r) for r in spec["data"][0]["y"]]
        table = at.dataframe[0].value
        assert list(table.columns) == rows and len(rows) == 2, (list(table.columns), rows)
        short, long = list(table[rows[0]]), list(table[rows[1]])
        assert len(short) == len(long) and short[-1] == "[PAD]" and "[PAD]" not in long, (short, long)
