"""A padded batch through a real model: the attention mask, padded keys at exactly zero weight, and each
sentence's attention in the batch equal to its run alone; then the padding moved to the left, or the mask taken
away, to see what each one protects. Data from core/padded_batch.py (its STATE: the page's link), figures from
viz/padded_batch.py."""

from types import SimpleNamespace

import pandas as pd
import streamlit as st

from app import models, shared, ui
from core import padded_batch
from viz import padded_batch as figures

F = padded_batch.STATE  # the page's link, declared in core
# sentences run alone, shared by sessions: four batches' worth, as many tokens as models.RUN_CACHE_ENTRIES' batches
ALONE_ENTRIES = 16
_alone = shared.Kept(ALONE_ENTRIES)  # (model, its load, text, max_tokens) -> that text's run alone
_reports = shared.Kept(shared.ENTRIES)  # the batch run's key -> its check (a few numbers a sentence)
_masks = shared.Kept(shared.ENTRIES)  # the batch run's key -> its mask and tokens (shared.figures keys on it)


def batch_key(key: str, lines: list[str], limit: int, side: str, masked: bool) -> tuple:
    """What a batch run depends on (the arguments it is computed with, the model's load): the key of what is kept
    of it beyond the run cache, for every session asking the same."""
    return (key, models.kept_serial(key), tuple(lines), limit, side, masked)


def mask_of(key: str, batch_run, lines: list[str], limit: int):
    """The batch's mask view, one object for every session at the same batch (its figure and token table are
    then built once per language: shared.figures, shared.table), however often the run cache made the run again."""
    job = batch_key(key, lines, limit, batch_run.side, batch_run.masked)
    return _masks.get(job, lambda: padded_batch.mask_view(batch_run.trace))


def tokens_table(mask, t, position: str) -> pd.DataFrame:
    """Each sentence's tokens in the batch, a column a sentence (named as the mask's rows), a row a position."""
    return pd.DataFrame(dict(zip(figures.mask_rows(mask, t), mask.tokens))).rename_axis(position)


def run_alone(key: str, model, text: str, limit: int):
    """`text` run alone, once for every session and every batch it is in: a sentence added to a batch does not run
    the others alone again."""
    return _alone.get((key, models.kept_serial(key), text, limit), lambda: padded_batch.run_alone(model, text, limit))


def batch_report(key: str, model, batch_run, lines: list[str], limit: int) -> list[dict]:
    """The check of the batch the page ran (its one batch pass), each sentence against its run alone; kept per
    batch as the batch run is (the same arguments), so a rerun at another layer or head computes nothing."""
    job = batch_key(key, lines, limit, batch_run.side, batch_run.masked)

    def made() -> list[dict]:
        return padded_batch.batch_report(batch_run, [run_alone(key, model, text, limit) for text in lines])

    return _reports.get(job, made)


def sentence_head(T, batch_run, rows: list[str]) -> None:
    """One sentence's head inside the batch, padded rows and columns included."""
    trace = batch_run.trace
    c1, c2, c3 = st.columns(3)
    with c1:
        i = int(
            ui.field(F["row"], T("pick"), SimpleNamespace(n_sentences=len(rows)), format_func=lambda k: rows[int(k)])
        )
    with c2:
        layer = ui.field(F["layer"], T("layer"), trace, widget="number")
    with c3:
        head = ui.field(F["head"], T("head"), trace, widget="number")
    view = padded_batch.sentence_view(batch_run, i, layer, head)
    fig = figures.sentence_figure(view, ui.texts("padded_batch.figure"), i)
    ui.show_figure(
        fig,
        f"padded-sentence{i}-layer{layer}-head{head}",
        data=view.weights,
        row_labels=view.labels,
        col_labels=view.labels,
        key="fig-padded-head",
        caption_data=view.real_query_weights,  # padded queries' rows are no finding (the caption below says why)
    )
    if view.has_padding:
        st.caption(T("pad_rows"))


def check(T, key: str, model, batch_run, lines: list[str], rows: list[str]) -> None:
    """Each sentence in the batch against its run alone."""
    st.header(T("check"))
    report = batch_report(key, model, batch_run, lines, padded_batch.page_tokens(model))
    st.dataframe(
        {
            T("sentence"): rows,
            T("col_tokens"): [r["tokens"] for r in report],
            T("col_padding"): [r["padding"] for r in report],
            T("col_pad_weight"): [r["max_pad_weight"] for r in report],
            T("col_diff"): [r["max_diff_alone"] for r in report],
        }
    )
    result = padded_batch.verdict(report, batch_run.trace)
    (st.success if result.ok else st.warning)(
        T(f"verdict_{result.kind}", heads=result.heads, pad=result.pad, diff=result.diff)
    )


def page() -> None:
    T = ui.page_setup("padded_batch")
    st.title(T("title"))
    st.markdown(T("intro"))
    key = models.pick_model(
        options=padded_batch.SHIPPED_MODELS, needs=models.PAGE_NEEDS["padded-batch"], field=F["model"]
    )
    model = models.load(key)
    if model is not None:
        raw = ui.field(F["text"], T("texts"), height=120)
        lines, cut = padded_batch.split_lines(raw, padded_batch.MAX_SENTENCES)
        if cut:
            st.info(T("too_many", k=padded_batch.MAX_SENTENCES))
        c1, c2 = st.columns(2)
        with c1:
            side = ui.field(F["pad"], T("side"), widget="radio", format_func=lambda s: T(f"side_{s}"), horizontal=True)
        with c2:
            masked = not ui.field(F["nomask"], T("nomask"), help=T("nomask_help"))
        if len(lines) < 2:
            st.info(T("need_two"))
        else:
            limit = padded_batch.page_tokens(model)
            batch_run = models.computed(key, padded_batch.run_batch, tuple(lines), limit, side, masked)
            models.say_cut(key, model, lines, batch_run.trace.batch.truncated, limit)
            mask = mask_of(key, batch_run, lines, limit)
            rows = figures.mask_rows(mask, ui.texts("padded_batch.figure"))
            fig = shared.figures(figures.mask_figure, mask, "padded_batch.figure")
            ui.show_figure(fig, "attention-mask", data=mask.mask, row_labels=rows, col_labels=mask.positions,
                           key="fig-mask")  # fmt: skip
            if not masked:
                st.caption(T("unmasked_note", n=batch_run.padding))
            st.caption(T("tokens_table"))
            position = ui.t("padded_batch.figure", "position")  # the index column named: no empty header cell
            ui.table(shared.table(tokens_table, mask, "padded_batch.figure", position), hide_index=False)
            sentence_head(T, batch_run, rows)
            check(T, key, model, batch_run, lines, rows)
    ui.page_end()
