"""What the /rnn-attention page draws, ready to draw (lists and numbers, verdicts included):

    sentence_view   one sentence: the GRU's greedy output with its alignment (target x source), beside the shipped
                    Transformer's output and the grammar's reference
    scores_view     the two models side by side: held-out exact match and chrF (their training reports), alignment
                    (the GRU's one attention, the Transformer's best cross-attention head, measured the same way)
    gradient_view   results/rnn_attention.json's gradient by distance, with and without attention
    timing_view     results/rnn_attention.json's time per sentence against length
(compare.cost_view: path length and cost per layer, computed live.)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..encoder_decoder import alignment as al
from ..pooling import indexed_labels
from ..stats import wilson_interval
from . import model as rm
from .translate import translate_batch

RESULT = "rnn_attention"  # results/rnn_attention.json (scripts/rnn_attention_compare.py)


@dataclass(frozen=True)
class SentenceView:
    source: list[str]  # encoder tokens: language tag, words, </s>
    output: list[str]  # the GRU's written tokens
    rows: list[str]  # output tokens and </s>: the rows of `attention`
    attention: list[list[float]]  # (len(rows), len(source))
    marks: list[tuple[int, int]]  # (row, source column) the grammar aligns, when the GRU wrote the reference
    reference: list[str] | None
    transformer_output: list[str]
    verdict: str  # both_right, gru_only, transformer_only, neither, no_reference
    state_width: int  # 2H: one encoder state h_j (forward and backward), what attention reads per source token
    final_width: int  # H: the forward encoder's last state, the one vector a decoder without attention starts from
    attended_numbers: int  # S x 2H: what the decoder may read from the encoder at each step with attention

    @property
    def row_labels(self) -> list[str]:
        """The rows of `attention` as the figure and its CSV name them: '0 猫' (unique when a token repeats)."""
        return indexed_labels(self.rows)

    @property
    def col_labels(self) -> list[str]:
        """The source tokens, the columns of `attention`, named as the rows are."""
        return indexed_labels(self.source)


def sentence_view_of(model: rm.RNNSearch, tokenizer, sentence: str, language: str) -> SentenceView:
    """sentence_view of `sentence` beside the shipped Transformer's translation of it (the process's one copy of
    the encoder-decoder: core.models.registry.shared)."""
    from ..encoder_decoder.view import run_sentence
    from ..models import registry

    transformer, its_tokenizer = registry.shared(registry.ENCODER_DECODER)
    return sentence_view(model, tokenizer, run_sentence(transformer, its_tokenizer, sentence, language))


def sentence_view(model: rm.RNNSearch, tokenizer, run) -> SentenceView:
    """run: core.encoder_decoder.view.SentenceRun of the same sentence (the Transformer's translation, the
    grammar's reference and alignment)."""
    from ..encoder_decoder.translate import source_text

    t = translate_batch(model, tokenizer, [source_text(run.sentence, run.language)])[0]
    rows = t.output + (["</s>"] if t.finished else [])
    gru_ok = run.reference is not None and t.output == run.reference
    tr_ok = run.reference is not None and run.free.output == run.reference
    if run.reference is None:
        verdict = "no_reference"
    else:
        verdict = {(True, True): "both_right", (True, False): "gru_only", (False, True): "transformer_only",
                   (False, False): "neither"}[(gru_ok, tr_ok)]  # fmt: skip
    marks = [(tgt, src) for src, tgt in run.alignment] if gru_ok else []
    return SentenceView(t.source_tokens, t.output, rows, t.attention[: len(rows)].tolist(), marks, run.reference,
                        list(run.free.output), verdict, model.shape.state_width, model.shape.hidden,
                        model.shape.attended_numbers(len(t.source_tokens)))  # fmt: skip


@dataclass(frozen=True)
class ScoreRow:
    key: str  # which number: exact_all, exact_ja, exact_ko, chrf, alignment, alignment_off (when measured for both),
    # diagonal, chance, parameters, cpu
    gru: float
    transformer: float
    gru_interval: tuple[float, float] | None = None  # 95 % Wilson interval of a rate
    transformer_interval: tuple[float, float] | None = None


@dataclass(frozen=True)
class ScoresView:
    rows: list[ScoreRow]
    held_out_pairs: int
    alignment_pairs: int
    alignment_words: int
    transformer_head: tuple[int, int]  # (layer, head) of the Transformer's best head
    transformer_heads: int  # cross-attention heads the best was chosen from
    exact: str  # "similar" (intervals overlap) or "gru_better" / "transformer_better"
    alignment: str  # the same for the alignment accuracy
    gru_alignment_verdict: str  # aligns / diagonal / none, core.encoder_decoder.alignment's rule
    off_diagonal: str | None  # the same comparison on the off-diagonal words; None when not measured for both


def _compare(a: tuple[float, float], b: tuple[float, float]) -> str:
    """'gru_better' when the GRU's interval lies above the Transformer's, 'transformer_better' when below."""
    if a[0] > b[1]:
        return "gru_better"
    if b[0] > a[1]:
        return "transformer_better"
    return "similar"


def scores_view(gru_report: dict, transformer_report: dict, transformer_alignment: dict) -> ScoresView:
    """From data/rnn_attention/report.json, data/encoder_decoder/report.json and results/encoder_decoder_alignment.json."""
    rows = []
    for language in ("all", "ja", "ko"):
        g, t = gru_report["held_out"][language], transformer_report["held_out"][language]
        gi = wilson_interval(round(g["exact_match"] * g["pairs"]), g["pairs"])
        ti = wilson_interval(round(t["exact_match"] * t["pairs"]), t["pairs"])
        rows.append(ScoreRow(f"exact_{language}", g["exact_match"], t["exact_match"], gi, ti))
    rows.append(ScoreRow("chrf", gru_report["held_out"]["all"]["chrf"], transformer_report["held_out"]["all"]["chrf"]))
    ga = gru_report["alignment"]
    g_head, t_head = ga["heads"][0], transformer_alignment["best"][0]
    rows.append(ScoreRow("alignment", g_head["accuracy"], t_head["accuracy"], (g_head["low"], g_head["high"]),
                         (t_head["low"], t_head["high"])))  # fmt: skip
    g_off = ga.get("off_diagonal", {}).get("best_head")
    t_off = al.off_diagonal_result(transformer_alignment)
    if g_off is not None and t_off is not None:  # the words whose aligned source is not the diagonal guess
        rows.append(ScoreRow("alignment_off", g_off["accuracy"], t_off["head"]["accuracy"],
                             (g_off["low"], g_off["high"]), (t_off["head"]["low"], t_off["head"]["high"])))  # fmt: skip
    gd, td = ga["diagonal"], transformer_alignment["diagonal"]
    rows.append(ScoreRow("diagonal", gd["accuracy"], td["accuracy"], (gd["low"], gd["high"]), (td["low"], td["high"])))
    rows.append(ScoreRow("chance", ga["chance"], transformer_alignment["chance"]))
    rows.append(ScoreRow("parameters", gru_report["parameters"], transformer_report["parameters"]))
    rows.append(ScoreRow("cpu", gru_report["train_cpu_seconds"], transformer_report["train_cpu_seconds"]))
    return ScoresView(
        rows, gru_report["held_out"]["all"]["pairs"], ga["pairs"], ga["words"], (t_head["layer"], t_head["head"]),
        len(transformer_alignment["heads"]), _compare(rows[0].gru_interval, rows[0].transformer_interval),
        _compare(rows[4].gru_interval, rows[4].transformer_interval), ga["verdict"],
        _compare(rows[5].gru_interval, rows[5].transformer_interval) if rows[5].key == "alignment_off" else None,
    )  # fmt: skip


def committed_scores() -> tuple[ScoresView, dict] | None:
    """scores_view of the committed reports (and the GRU's report, for its command and date), or None when one of
    them is missing or of another shape."""
    from ..encoder_decoder import model as ed
    from ..results import load_result

    gru = load_result(rm.WEIGHTS_DIR / "report.json")
    transformer = load_result(ed.WEIGHTS_DIR / "report.json")
    alignment = load_result("encoder_decoder_alignment", required=al.is_result)
    if gru is None or transformer is None or alignment is None:
        return None
    try:
        return scores_view(gru, transformer, alignment), gru
    except (KeyError, TypeError, IndexError):
        return None


def is_result(data: dict) -> bool:
    """Has results/rnn_attention.json the shape the page reads? (core.results.load_result's check)"""
    g, rows = data["gradient"], data["timing"]["rows"]
    return (
        len(g["distances"]) == len(g["with_attention"]) == len(g["recurrence_only"]) > 1
        and all(isinstance(r[k], (int, float)) for r in rows for k in ("n", "gru_ms", "torch_gru_ms", "transformer_ms"))
        and len(rows) > 1
    )


@dataclass(frozen=True)
class GradientPanel:
    distances: list[int]
    with_attention: list[float]
    recurrence_only: list[float]
    decay: float  # recurrence only: farthest / nearest
    decay_attention: float
    pairs: int
    length: int | None  # source length of the long-input measurement, None for held-out sentences
    verdict: str  # "vanishes" (recurrence-only decays at least 10x more than with attention), "weaker", "flat"


def _gradient_panel(g: dict, length: int | None) -> GradientPanel:
    ratio = g["decay_attention"] / g["decay"] if g["decay"] > 0 else math.inf
    verdict = "vanishes" if ratio >= 10 else ("weaker" if g["decay"] < g["decay_attention"] else "flat")
    return GradientPanel(g["distances"], g["with_attention"], g["recurrence_only"], g["decay"], g["decay_attention"],
                         g["pairs"], length, verdict)  # fmt: skip


def gradient_panels(data: dict) -> list[GradientPanel]:
    """Held-out sentences first, then the long random inputs when measured."""
    panels = [_gradient_panel(data["gradient"], None)]
    if isinstance(data.get("gradient_long"), dict):
        panels.append(_gradient_panel(data["gradient_long"], data["gradient_long"]["length"]))
    return panels


@dataclass(frozen=True)
class TimingView:
    lengths: list[int]
    gru_ms: list[float]  # core's GRU encoder (a Python loop over the cell)
    torch_gru_ms: list[float | None]  # torch.nn.GRU with the same weights (the loop in C++); None if not measured
    transformer_ms: list[float]
    gru_steps: list[int]  # cell steps one after another (both directions)
    transformer_steps: list[int]  # layers one after another
    device: str
    cpu_time: bool  # CPU time per call (one thread) rather than wall time
    ratio_at_longest: float  # core's GRU time / Transformer time at the longest length
    torch_ratio_at_longest: float | None  # torch.nn.GRU's time / Transformer time
    faster_at_longest: str  # "transformer" or "gru" (by torch.nn.GRU when measured: the fairer recurrent timing)
    torch_ratio_at_shortest: float | None  # torch.nn.GRU's time / Transformer time at the shortest length
    faster_at_shortest: str  # "transformer" or "gru", by torch.nn.GRU when measured


def timing_view(data: dict) -> TimingView:
    """CPU time per call when the results hold it (one thread: what the call costs, whatever else the machine
    runs), wall time otherwise."""
    rows = data["timing"]["rows"]
    cpu = all("gru_cpu_ms" in r and "transformer_cpu_ms" in r for r in rows)
    suffix = "_cpu_ms" if cpu else "_ms"
    gru = [r["gru" + suffix] for r in rows]
    tr = [r["transformer" + suffix] for r in rows]
    tg = [r.get("torch_gru" + suffix) for r in rows]
    ratio = gru[-1] / tr[-1]
    torch_ratio = tg[-1] / tr[-1] if tg[-1] is not None else None
    deciding = torch_ratio if torch_ratio is not None else ratio
    shortest = tg[0] / tr[0] if tg[0] is not None else None
    short_deciding = shortest if shortest is not None else gru[0] / tr[0]
    return TimingView([r["n"] for r in rows], gru, tg, tr, [r["gru_sequential_steps"] for r in rows],
                      [r["transformer_sequential_steps"] for r in rows], data["timing"]["device"], cpu, ratio,
                      torch_ratio, "transformer" if deciding > 1 else "gru", shortest,
                      "transformer" if short_deciding > 1 else "gru")  # fmt: skip
