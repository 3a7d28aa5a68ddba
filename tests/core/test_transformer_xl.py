"""Segment recurrence and its successors as masks (core/transformer_xl.py): hand-worked masks, the effective
context L x layers, and, on SmolLM2, the masked single pass against the real thing: XL = segment by segment with
the previous segment's keys/values in a DynamicCache, independent = separate passes, full = a plain pass."""

import json

import numpy as np
import pytest
import torch
from transformers import DynamicCache

from core import transformer_xl as tx
from core.models.hf import cache_keyword
from core.results import load_result
from tests.references import assert_close_in_scale


def rows(mask: torch.Tensor) -> list[str]:
    return ["".join("x" if v else "." for v in row) for row in mask.tolist()]


def test_masks_hand_worked():
    assert rows(tx.method_mask("independent", 5, segment=2)) == ["x....", "xx...", "..x..", "..xx.", "....x"]
    assert rows(tx.method_mask("xl", 6, segment=2)) == ["x.....", "xx....", "xxx...", "xxxx..", "..xxx.", "..xxxx"]
    assert rows(tx.method_mask("window", 5, window=2)) == ["x....", "xx...", ".xx..", "..xx.", "...xx"]
    assert rows(tx.method_mask("sinks_window", 5, window=2, sinks=1)) == ["x....", "xx...", "xxx..", "x.xx.", "x..xx"]
    assert rows(tx.method_mask("full", 3)) == ["x..", "xx.", "xxx"]
    for bad in (dict(segment=0), dict(window=0), dict(sinks=-1)):
        with pytest.raises(ValueError):
            tx.method_mask("xl", 4, **bad)
    with pytest.raises(ValueError):
        tx.method_mask("compressive", 4)


def test_an_xl_query_sees_at_most_2L_keys():
    """The last token of a segment sees the whole previous segment (L) and its own segment up to itself (L)."""
    for seg in (1, 3, 4):
        counts = tx.method_mask("xl", 5 * seg, segment=seg).sum(-1)
        assert int(counts.max()) == 2 * seg and int(counts[2 * seg - 1]) == 2 * seg


def test_window_and_sinks_are_the_kv_cache_eviction_rule():
    """One rule for /kv-cache and /transformer-xl: W keys, the query's own included, plus the first S."""
    from core.kv_cache.eviction import kept_positions, visible_positions

    for n, window, sinks in ((9, 1, 0), (9, 3, 2), (6, 8, 1)):
        for policy in ("window", "sinks_window"):
            mask = tx.method_mask(policy, n, window=window, sinks=sinks)
            for i in range(n):
                assert torch.nonzero(mask[i]).flatten().tolist() == visible_positions(policy, i, window, sinks)
                assert kept_positions(policy, i, window, sinks) == visible_positions(policy, i, window, sinks)[:-1]
        assert tx.method_mask("window", n, window=window).sum(-1).tolist() == [min(i + 1, window) for i in range(n)]


@pytest.mark.parametrize("layers", [1, 2, 3, 5])
def test_xl_effective_context_grows_as_segment_times_layers(layers):
    n, seg = 40, 4
    reach = tx.receptive_field(tx.method_mask("xl", n, segment=seg), layers)
    for i in range(n):
        s = i // seg
        expect = i + 1 if s <= layers else i + 1 - (s - layers) * seg  # segments s - layers .. s
        assert reach[i] == expect
    window = tx.receptive_field(tx.method_mask("window", n, window=4), layers)
    assert window.tolist() == [min(i + 1, layers * 3 + 1) for i in range(n)]


@pytest.fixture(scope="module")
def xl_input(smollm2):
    """SmolLM2 (the contract, from the shared session fixture), its transformers module for the references, and 48
    token ids of a repeated sentence."""
    ids = smollm2.encode("The quick brown fox jumps over the lazy dog. " * 8)
    return smollm2, smollm2.model, ids[:48]


def losses_of(logits: torch.Tensor, ids: list[int]) -> np.ndarray:
    return torch.nn.functional.cross_entropy(logits[:-1].float(), torch.tensor(ids[1:]), reduction="none").numpy()


@torch.no_grad()
def test_full_mask_equals_a_plain_pass(xl_input):
    wrapper, model, ids = xl_input
    plain = losses_of(model(input_ids=torch.tensor([ids]), use_cache=False).logits[0], ids)
    # losses reach ~15 on this text (float32 logits ~30): the tolerance follows their scale (tests/references.py)
    got = wrapper.next_token_losses(ids, mask=tx.method_mask("full", len(ids)), block=7).numpy()
    assert_close_in_scale(got, plain, what="full-mask losses")


@torch.no_grad()
def test_xl_mask_equals_the_recurrence_with_a_cache(xl_input):
    wrapper, model, ids = xl_input
    seg, logits, memory = 16, [], None
    for s in range(0, len(ids), seg):
        cache = DynamicCache(config=model.config)
        if memory is not None:  # the previous segment's keys and values only (the one before is dropped)
            cache = DynamicCache(
                ddp_cache_data=[(m.keys[:, :, -seg:], m.values[:, :, -seg:]) for m in memory.layers],
                config=model.config,
            )
        out = model(
            input_ids=torch.tensor([ids[s : s + seg]]),
            **{cache_keyword(): cache},
            position_ids=torch.arange(s, s + seg)[None],
            use_cache=True,
        )
        memory = getattr(out, cache_keyword())
        logits.append(out.logits[0])
    recurrence = losses_of(torch.cat(logits), ids)
    masked = tx.token_losses(wrapper, ids, tx.method_mask("xl", len(ids), segment=seg))
    assert_close_in_scale(masked, recurrence, what="XL-mask losses")
    full = tx.token_losses(wrapper, ids, tx.method_mask("full", len(ids)))
    assert np.abs(masked[2 * seg :] - full[2 * seg :]).max() > 1e-3  # the mask is really applied


@torch.no_grad()
def test_independent_mask_equals_separate_passes(xl_input):
    wrapper, model, ids = xl_input
    seg = 16
    separate = torch.cat([model(input_ids=torch.tensor([ids[s : s + seg]])).logits[0] for s in range(0, len(ids), seg)])
    masked = tx.token_losses(wrapper, ids, tx.method_mask("independent", len(ids), segment=seg))
    # positions restart at each segment: RoPE's float32 angles round differently, so 1e-4 of the scale
    assert_close_in_scale(masked, losses_of(separate, ids), relative=1e-4, what="independent-mask losses")


def test_comparison_summaries():
    losses = {m: np.arange(8, dtype=float) for m in tx.METHODS}
    c = tx.Comparison(n=9, segment=4, window=4, sinks=1, losses=losses)
    assert c.by_position_in_segment("xl").tolist() == [2.0, 3.0, 4.0, 5.0]
    assert c.by_block("full", 2).tolist() == [0.5, 2.5, 4.5, 6.5]
    assert c.mean("window", 4) == 5.5


def test_reach_by_layers_is_the_last_row_of_the_receptive_field():
    mask = tx.method_mask("sinks_window", 30, window=3, sinks=2)
    counts = tx.reach_by_layers(mask, 4)
    assert counts == [int(tx.receptive_field(mask, k)[-1]) for k in range(1, 5)]
    ctx = tx.effective_context(64, segment=8, window=8, sinks=1, layers=3)
    assert ctx["xl"] == [8 + 8, 8 * 3, 8 * 4] and ctx["independent"] == [8, 8, 8] and ctx["full"] == [64] * 3


def test_sinks_finding_rule():
    assert tx.sinks_finding_holds({"full": 3.0, "window": 3.7, "sinks_window": 3.1})
    assert not tx.sinks_finding_holds({"full": 3.0, "window": 3.2, "sinks_window": 3.15})
    assert not tx.sinks_finding_holds({"full": 3.0, "window": 2.9, "sinks_window": 3.0})


def test_xl_against_independent_rule():
    assert tx.xl_beats_independent({"xl": 3.1, "independent": 3.3})
    assert not tx.xl_beats_independent({"xl": 3.5, "independent": 3.3})


# --- the page's view objects ----------------------------------------------------------------------------------


def test_measured_view_is_the_committed_run_with_its_verdicts():
    from core.results import load_result

    data = load_result("transformer_xl")
    view = tx.measured_view()
    assert data is not None and view is not None
    past = data["mean_loss_past_window"]
    assert view.gap["window"] == past["window"] - past["full"] and view.gap["full"] == 0.0
    assert view.sinks_verdict == ("holds" if tx.sinks_finding_holds(past) else "fails")
    assert view.xl_verdict == ("xl_helps" if past["xl"] < past["independent"] else "xl_hurts")
    block = data["block"]
    assert view.by_block.x[:2] == (block / 2, 1.5 * block) and view.by_block.vlines == (data["window"],)
    assert view.by_block.series["xl"] == tuple(data["loss_by_block"]["xl"])
    assert len(view.by_segment.x) == data["segment"]


def test_measured_view_reads_its_file_once_until_the_file_changes(tmp_path, monkeypatch):
    """Every run of /transformer-xl shows part 3: the results file is read once per process, and again when it is
    rewritten (a new measurement committed while the server runs)."""
    path = tmp_path / "transformer_xl.json"
    path.write_text(tx.results_path(tx.RESULT_NAME).read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.setattr(tx, "results_path", lambda name: path)
    reads = []
    monkeypatch.setattr(tx, "load_result", lambda p, required: reads.append(p) or load_result(p, required=required))
    first = tx.measured_view()
    assert first is not None and tx.measured_view() is first and len(reads) == 1
    data = json.loads(path.read_text(encoding="utf-8"))
    data["tokens"] += 1
    path.write_text(json.dumps(data), encoding="utf-8")
    assert tx.measured_view().tokens == first.tokens + 1 and len(reads) == 2
    path.unlink()
    assert tx.measured_view() is None


def test_reach_view_counts_hand_worked():
    """Window W = 3 keys: each layer adds W - 1 = 2 positions; XL with L = 4 reaches 4 x (layers + 1) at most."""
    view = tx.reach_view(64, 4, 3, 0, 3)
    assert view.lines.series["window"] == (3, 5, 7) and view.window == 7
    assert view.lines.series["xl"] == (8, 12, 16) and view.xl == 16  # the last token closes a segment: 2L keys
    assert view.lines.table()["layers"] == [1, 2, 3]


def test_live_view_of_too_short_a_text_says_so(smollm2):
    view = tx.live_view(smollm2, "Hi", 4, 4, 1, 16)
    assert view.status == "too_short" and view.by_block is None


def test_live_view_reads_no_more_tokens_than_the_models_position_table(tmp_path):
    """A learner's GPT-2 with a 64-position table, on a text of more tokens than that: the first 64 are used (the
    table has no row for a 65th: an IndexError before)."""
    from core.models import local
    from tests.tiny_models import TEXTS, build

    build("gpt2", tmp_path)
    gpt2 = local.load_folder(tmp_path)
    text = " ".join([TEXTS[0]] * 8)
    assert len(gpt2.encode(text)) > gpt2.max_positions == 64
    view = tx.live_view(gpt2, text, 4, 4, 1, 256)
    assert view.status == "ok" and view.n == 64 and view.cut and view.total == len(gpt2.encode(text))


def test_lines_binned_hand_worked():
    """Means over bins of 2 points, the last bin holding what is left, each at its points' mean x."""
    view = tx.LinesView("by_segment", (0, 1, 2, 3, 4), {"full": (1.0, 3.0, 2.0, 6.0, 5.0)}, {}, bin=2)
    assert view.binned() == ((0.5, 2.5, 4.0), {"full": (2.0, 4.0, 5.0)})


def test_measured_view_bins_its_lines_and_says_what_a_segments_start_costs():
    """The text's 64-token blocks are drawn as means a segment (256 tokens) at a time, the 256 positions within a
    segment as 16 means of 16; the note's numbers are the committed losses' excess over full attention."""
    from core.results import load_result

    data, view = load_result("transformer_xl"), tx.measured_view()
    assert (data["segment"], data["block"]) == (256, 64)
    assert view.by_block.bin == 4 and view.by_block.note_fields == {"span": 256, "block": 64}
    assert view.by_segment.bin == 16
    in_segment = data["loss_by_position_in_segment"]
    full = np.array(in_segment["full"])
    excess = np.array(in_segment["independent"]) - full
    note = view.by_segment.note_fields
    assert note["span"] == 16
    assert note["first"] == pytest.approx(excess[:16].mean()) and note["rest"] == pytest.approx(excess[16:].mean())
    assert note["first"] > 1.0 > 0.5 > note["rest"]  # a segment that starts from nothing pays at its start
    assert note["sinks"] == pytest.approx((np.array(in_segment["sinks_window"]) - full).mean())
