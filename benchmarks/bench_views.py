"""Speed and payload of the attention views, on CPU, at 16 / 128 / 512 tokens.

    bash scripts/dev.sh bench benchmarks/bench_views.py          # -> table + results/bench_views.json
    python benchmarks/bench_views.py --models minilm --reps 5    # quicker

Per model and length it prints:
  model ms      p50 of `model.run(batch)` (warm)
  <view> ms     p50 of text -> figure JSON for that view, the page's own path: tokenize + run + the view's data
                (core/attention.py: select_tokens, then the view) + its figure (viz/attention.py) +
                fig.to_json() (what Streamlit serialises and sends), warm
  <view> KB     bytes of that JSON: what the browser receives for the view's figure
Targets (2-core CPU): <= 300 ms p50 at 128 tokens for MiniLM, <= 1.5 s for SmolLM2 (the slowest view
counts), <= 1 MB per view at 512 tokens.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import time
import tomllib
from pathlib import Path

from core import attention
from core.models import registry
from core.timing import machine_info, time_ms
from viz import attention as figures

ROOT = Path(__file__).resolve().parents[1]

LENGTHS = (16, 128, 512)
TARGET_MS_128 = {"minilm": 300, "smollm2": 1500}
TARGET_BYTES = 1_000_000
TEXT = (
    "The cat sat on the mat because it was tired. Study groups paste sentences like this one and look "
    "inside the model, head by head, to see which words each token attends to. "
)


with open(ROOT / "app" / "locales" / "en.toml", "rb") as f:
    WORDS = tomllib.load(f)["attention"]["figure"]  # the page's English words: the same bytes as on the page


def english(key: str, /, **fmt) -> str:
    return WORDS[key].format(**fmt)


def views(trace, model):
    """Every view of the attention page, as the page builds it (default settings): the shown tokens once, then
    one core call for the view's data and one viz call for its figure."""
    last = trace.n_layers - 1
    query = trace.length(0) // 2
    tokens = attention.select_tokens(trace, 0)
    make = {
        "grid": lambda: attention.grid_view(trace, tokens, highlight=(last, 0)),
        "head": lambda: attention.head_view(trace, tokens, last, 0),
        "token": lambda: attention.token_view(trace, tokens, query),
        "mean": lambda: attention.mean_view(trace, tokens, last),
        "rollout": lambda: attention.rollout_view(trace, tokens, last),
        "entropy": lambda: attention.entropy_view(trace, tokens),
    }
    return {name: (lambda build=build: figures.figure(build(), english)) for name, build in make.items()}


def p50(fn, reps: int) -> float:
    """Median ms over `reps` warm runs."""
    return time_ms(fn, reps=reps, warmup=1)


def bench_model(key: str, reps: int) -> list[dict]:
    t = time.perf_counter()
    model = registry.RECORDS[key].load()
    print(f"{key}: loaded in {time.perf_counter() - t:.1f} s")
    rows = []
    text = TEXT * 40
    for n in LENGTHS:
        if n > model.max_positions:  # the tiny MoE reads 128 positions
            print(f"{key}: {n} tokens skipped (the model reads at most {model.max_positions})")
            continue
        batch = model.tokenize([text], n)
        assert batch.input_ids.shape[1] == n, (key, n, batch.input_ids.shape)
        row = {"model": key, "tokens": n, "model_ms": round(p50(lambda: model.run(batch), reps), 1)}
        names = list(views(model.run(batch), model))
        for name in names:

            def text_to_figure(name=name):
                trace = model.run(model.tokenize([text], n))
                return views(trace, model)[name]().to_json()

            row[f"{name}_ms"] = round(p50(text_to_figure, reps), 1)
            row[f"{name}_bytes"] = len(text_to_figure())
        rows.append(row)
        print(format_row(row, names))
    return rows


def format_row(row: dict, names: list[str]) -> str:
    cells = [f"{row['model']:8s} {row['tokens']:4d} tok  model {row['model_ms']:7.1f} ms"]
    cells += [f"{n} {row[n + '_ms']:7.1f} ms {row[n + '_bytes'] / 1000:6.0f} KB" for n in names]
    return " | ".join(cells)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="*", default=None)
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "bench_views.json")
    args = parser.parse_args()
    status = registry.model_status()
    keys = args.models or [k for k, message in status.items() if message is None]
    before = machine_info()
    rows = []
    for key in keys:
        if status.get(key):
            print(f"{key}: skipped ({status[key]})")
            continue
        rows += bench_model(key, args.reps)
    checks = []
    for r in rows:
        slowest = max(v for k, v in r.items() if k.endswith("_ms") and k != "model_ms")
        biggest = max(v for k, v in r.items() if k.endswith("_bytes"))
        if r["tokens"] == 128 and r["model"] in TARGET_MS_128:
            checks.append(
                f"{r['model']} @128: slowest view {slowest:.0f} ms (target <= {TARGET_MS_128[r['model']]})"
                f" {'OK' if slowest <= TARGET_MS_128[r['model']] else 'MISSED'}"
            )
        if r["tokens"] == 512:
            checks.append(
                f"{r['model']} @512: largest view {biggest / 1000:.0f} KB (target <= 1000 KB) "
                f"{'OK' if biggest <= TARGET_BYTES else 'MISSED'}"
            )
    print("\n".join(checks))
    result = {
        "command": "python benchmarks/bench_views.py"
        + (f" --models {' '.join(args.models)}" if args.models else "")
        + f" --reps {args.reps}",
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "load_before": before,
        "load_after": machine_info(),
        "rows": rows,
        "checks": checks,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print("wrote", args.out)


if __name__ == "__main__":
    main()
