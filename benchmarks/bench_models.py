"""Load and compute times of the pretrained models on CPU, at 16 / 128 / 512 tokens.

    bash scripts/dev.sh bench benchmarks/bench_models.py            # -> table + results/bench_models.json
    python benchmarks/bench_models.py --models minilm --reps 5      # quicker

Per model it prints
  load cold     first load in this process; SmolLM2 with an EMPTY cache (a temporary ATTENTION_LAB_CACHE), so
                it includes de-quantising the GGUF file and writing the float32 copy (python, torch and
                transformers are already imported: their ~5 s of import time is not counted)
  load warm     a second load (SmolLM2 from the cached copy)
and per length (p50 of --reps runs, after one warm-up):
  run           model.run(batch): one forward pass with logits and hidden states (the default)
  run lean      model.run(batch, logits=False, hidden_states=False): what the attention views need
  displayed     the arrays on screen, from a Trace: one full head (last layer, head 0) + block-mean thumbnails
                of every head (core.attention.thumbnails, 24 px tiles, 16 when there are > 100 heads, as the
                grid view draws them) + attention rollout through all layers (core.attention.rollout)
  text->arrays  tokenize + run lean + displayed: everything before the figure is built
Targets (2-core CPU, text -> figures at 128 tokens): MiniLM <= 300 ms, SmolLM2 <= 1.5 s. The figure
building and browser bytes are measured by benchmarks/bench_views.py, which can reuse `text_to_arrays`.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import torch

from core import attention
from core.models import registry
from core.timing import time_ms

ROOT = Path(__file__).resolve().parents[1]

LENGTHS = (16, 128, 512)
TARGET_MS_128 = {"minilm": 300, "smollm2": 1500}
TEXT = (
    "The cat sat on the mat because it was tired. Study groups paste sentences like this one and look "
    "inside the model, head by head, to see which words each token attends to. "
)


def p50(fn: Callable[[], object], reps: int) -> float:
    """Median wall time of fn() in ms over `reps` runs, after one warm-up run."""
    return time_ms(fn, reps=reps, warmup=1)


def thumb_size(trace) -> int:
    """The grid view's tile size (core/attention.py): 24, or 16 when there are more than 100 heads."""
    return attention.TILE if trace.n_layers * trace.n_heads <= attention.MANY_HEADS else attention.TILE_MANY


def displayed_arrays(trace, index: int = 0) -> dict[str, torch.Tensor]:
    """What the attention page shows by default, computed from a Trace:
    head (n, n) of the last layer's head 0, thumbs (L, H, s, s), rollout (m, m)."""
    tokens = attention.select_tokens(trace, index)
    return {
        "head": trace.attention(trace.n_layers - 1, 0, index),
        "thumbs": attention.thumbnails(trace, tokens, thumb_size(trace)),
        "rollout": attention.rollout(trace, tokens),
    }


def text_to_arrays(model, text: str, n_tokens: int) -> dict[str, torch.Tensor]:
    """Text in, displayed arrays out: tokenize (cut to n_tokens) + one lean forward pass + displayed_arrays."""
    trace = model.run(model.tokenize([text], n_tokens), logits=False, hidden_states=False)
    return displayed_arrays(trace)


def timed_load(key: str) -> tuple[object, float]:
    t = time.perf_counter()
    model = registry.RECORDS[key].load()
    return model, time.perf_counter() - t


def load_times(key: str) -> tuple[object, dict]:
    """(model, {"load_cold_s", "load_warm_s"}); SmolLM2's cold load uses a fresh, temporary cache folder."""
    previous = os.environ.get("ATTENTION_LAB_CACHE")
    with tempfile.TemporaryDirectory(prefix="attention-lab-bench-") as empty:
        if key == "smollm2":
            os.environ["ATTENTION_LAB_CACHE"] = empty
        try:
            _, cold = timed_load(key)
            model, warm = timed_load(key)
        finally:
            if previous is None:
                os.environ.pop("ATTENTION_LAB_CACHE", None)
            else:
                os.environ["ATTENTION_LAB_CACHE"] = previous
    return model, {"load_cold_s": round(cold, 2), "load_warm_s": round(warm, 2)}


def bench_model(key: str, reps: int, lengths=LENGTHS) -> list[dict]:
    model, loads = load_times(key)
    print(f"{key}: load cold {loads['load_cold_s']:.2f} s, warm {loads['load_warm_s']:.2f} s")
    rows = []
    text = TEXT * 40
    for n in lengths:
        batch = model.tokenize([text], n)
        assert batch.input_ids.shape[1] == n, (key, n, batch.input_ids.shape)
        trace = model.run(batch, logits=False, hidden_states=False)
        row = {
            "model": key,
            "tokens": n,
            **loads,
            "run_ms": round(p50(lambda: model.run(batch), reps), 1),
            "run_lean_ms": round(p50(lambda: model.run(batch, logits=False, hidden_states=False), reps), 1),
            "displayed_ms": round(p50(lambda: displayed_arrays(trace), reps), 1),
            "text_to_arrays_ms": round(p50(lambda: text_to_arrays(model, text, n), reps), 1),
        }
        rows.append(row)
        print(format_row(row))
    return rows


def format_row(row: dict) -> str:
    line = (
        f"{row['model']:8s} {row['tokens']:4d} tok | run {row['run_ms']:7.1f} ms | run lean "
        f"{row['run_lean_ms']:7.1f} ms | displayed {row['displayed_ms']:6.1f} ms | text->arrays "
        f"{row['text_to_arrays_ms']:7.1f} ms"
    )
    target = TARGET_MS_128.get(row["model"])
    if row["tokens"] == 128 and target:
        verdict = "within" if row["text_to_arrays_ms"] <= target else "OVER"
        line += f"  ({verdict} the {target} ms target, figure building not included)"
    return line


def conditions() -> dict:
    cpu = "unknown CPU"
    try:
        cpu = next(
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        )
    except (OSError, StopIteration):
        pass
    one, five, _ = os.getloadavg()
    return {
        "cpu": cpu,
        "cpu_count": os.cpu_count(),
        "torch": torch.__version__,
        "torch_threads": torch.get_num_threads(),
        "loadavg_1min": round(one, 2),
        "loadavg_5min": round(five, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="*", default=None, help="model keys (default: every installed one)")
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "bench_models.json")
    args = parser.parse_args()
    status = registry.model_status()
    keys = args.models or [k for k, reason in status.items() if reason is None]
    before = conditions()
    print(
        f"{before['cpu']}, {before['cpu_count']} cores, torch {before['torch']} ({before['torch_threads']} "
        f"threads), load average {before['loadavg_1min']}"
    )
    rows = []
    for key in keys:
        if status.get(key):
            print(f"{key}: skipped ({status[key]})")
            continue
        rows += bench_model(key, args.reps)
    after = conditions()
    print(
        f"load average at the end: {after['loadavg_1min']} (a value above the core count means other "
        f"processes shared the CPU and the times above are inflated)"
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        json.dumps(
            {
                "command": "python benchmarks/bench_models.py " + " ".join(sys.argv[1:]),
                "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
                "reps": args.reps,
                "conditions_before": before,
                "conditions_after": after,
                "rows": rows,
            },
            indent=1,
        )
        + "\n"
    )
    print("wrote", args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out)


if __name__ == "__main__":
    main()
