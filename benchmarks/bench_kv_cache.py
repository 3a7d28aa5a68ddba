"""Milliseconds per generated token of SmolLM2-135M with the KV cache at a 512-token context (the target:
p50 <= 150 ms on the 2-core CPU), as the /kv-cache page generates them.

    python benchmarks/bench_kv_cache.py                  # writes results/bench_kv_cache.json
    python benchmarks/bench_kv_cache.py --context 512 --tokens 16 --trials 3

The prompt is the first `context - 1` tokens of data/licence_texts.txt, read in one untimed prefill pass; each
generated token is then one step of core.kv_cache.generate (the token fed on top of the cache, so the first step
attends to exactly `context` positions): forward with the cache, every layer's attention weights recomputed from
the recorded q and k, top-5, greedy pick. Reported: the median (p50) and p90 over all steps of all trials of
  - page_step: that step, as the page runs it;
  - plain_step: transformers' own forward with the same cache and nothing recorded (the floor);
  - with_eviction: page_step plus its share of the two eviction comparisons (window and sinks + window), which
    the page also runs: one pass after the last step with a row per step and policy, so each step's share is
    that pass's time over the steps (eviction_only).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import torch
from transformers import DynamicCache

from benchmarks.cli import add_run_options, apply_run_options
from core import kv_cache as kc
from core.models import registry
from core.results import results_path, save_result
from core.timing import machine_info

ROOT = Path(__file__).resolve().parents[1]
TEXT = ROOT / "data" / "licence_texts.txt"
RESULT_NAME = "bench_kv_cache"
TARGET_MS = 150.0


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


@torch.no_grad()
def plain_steps(model, ids: list[int], tokens: int) -> list[float]:
    """ms per token of transformers' forward with a DynamicCache, greedy, nothing recorded."""
    cache = DynamicCache(config=model.config)
    model(input_ids=torch.tensor([ids[:-1]]), past_key_values=cache, use_cache=True)
    token, times = ids[-1], []
    for _ in range(tokens):
        start = time.perf_counter()
        out = model(input_ids=torch.tensor([[token]]), past_key_values=cache, use_cache=True)
        token = int(out.logits[0, -1].argmax())
        times.append((time.perf_counter() - start) * 1000)
    return times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--context", type=int, default=512, help="positions the first generated token attends to")
    ap.add_argument("--tokens", type=int, default=16, help="generated tokens per trial")
    ap.add_argument("--trials", type=int, default=3)
    add_run_options(ap, results_path(RESULT_NAME), device=False)
    args = ap.parse_args()
    apply_run_options(args)
    wrapper = registry.RECORDS["smollm2"].load()
    ids = wrapper.tokenizer(TEXT.read_text(encoding="utf-8"), add_special_tokens=False)["input_ids"][: args.context]
    if len(ids) < args.context:
        sys.exit(f"{TEXT} has only {len(ids)} tokens")
    before = machine_info("cpu")
    print(f"SmolLM2 at a {args.context}-token context, {args.tokens} tokens x {args.trials} trials; load {before}")
    kc.generate(wrapper, ids, 2, policies=())  # warm-up
    page, plain, evict, policy = [], [], [], []
    for trial in range(args.trials):
        gen = kc.generate(wrapper, ids, args.tokens, policies=())
        page += [s.ms for s in gen.steps]
        plain += plain_steps(wrapper.model, ids, args.tokens)
        gen = kc.generate(wrapper, ids, args.tokens, window=64, sinks=4)
        share = gen.eviction_ms / len(gen.steps)
        evict += [s.ms + share for s in gen.steps]
        policy += [share] * len(gen.steps)
        print(f"  trial {trial}: page p50 {statistics.median(page):.1f} ms", file=sys.stderr, flush=True)
    after = machine_info("cpu")

    def summary(values):
        return {
            "p50_ms": round(percentile(values, 0.5), 2),
            "p90_ms": round(percentile(values, 0.9), 2),
            "n": len(values),
        }

    out = {
        "command": " ".join(["python benchmarks/bench_kv_cache.py", *sys.argv[1:]]),
        "date": before["date"],
        "device": "cpu",
        "device_name": before["device_name"],
        "torch": before["torch"],
        "torch_threads": before["torch_threads"],
        "cpu_count": before["cpu_count"],
        "loadavg_1min_before": before["loadavg_1min"],
        "loadavg_1min_after": after["loadavg_1min"],
        "model": wrapper.name,
        "context": args.context,
        "tokens_per_trial": args.tokens,
        "trials": args.trials,
        "target_p50_ms": TARGET_MS,
        "page_step": summary(page),
        "plain_step": summary(plain),
        "with_eviction": summary(evict),
        "eviction_only": summary(policy),
        "meets_target": percentile(page, 0.5) <= TARGET_MS,
    }
    for name in ("page_step", "plain_step", "with_eviction"):
        print(f"{name:>14}: p50 {out[name]['p50_ms']:8.1f} ms  p90 {out[name]['p90_ms']:8.1f} ms")
    print(f"load average before {before['loadavg_1min']}, after {after['loadavg_1min']}")
    print(f"wrote {os.path.relpath(save_result(args.out, out), ROOT)}")


if __name__ == "__main__":
    main()
