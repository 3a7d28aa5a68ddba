"""Loss per position of SmolLM2-135M (trained for 8,192 positions) on a long text, with no RoPE scaling and with
transformers' linear, dynamic NTK and YaRN scaling at several factors, without fine-tuning.

    python scripts/long_context_experiment.py --max-tokens 16384    # results/long_context.json, ~32 min on 2 CPU cores
    python scripts/long_context_experiment.py --max-tokens 32768    # results/long_context_32k.json, ~92 min

Writes the results file (command, date, device, versions, text source, per run: mean loss per bucket of
positions), saving after every run so a stopped job keeps what it finished; --resume picks it up again. Uses the
GPU when there is one.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import platform
import sys
import time
from pathlib import Path

import torch
import transformers

from core.device import default_device
from core.models.base import weights_record
from core.rope_scaling.long_context import (
    LONG_TEXT_PATH,
    LONG_TEXT_SOURCES,
    evaluate_scaling,
    load_long_text,
    run_configs,
    text_fingerprint,
)
from core.timing import device_record

ROOT = Path(__file__).resolve().parents[1]

DEFAULT_METHODS = ["default", "linear", "dynamic", "yarn"]
DEFAULT_FACTORS = [2.0, 4.0, 8.0]


def default_out(max_tokens: int) -> Path:
    """results/long_context.json for the 16k run the README's first table comes from, one file per other length
    (the page offers every long_context*.json)."""
    if max_tokens == 16384:
        return ROOT / "results" / "long_context.json"
    size = f"{max_tokens // 1024}k" if max_tokens % 1024 == 0 else str(max_tokens)
    return ROOT / "results" / f"long_context_{size}.json"


def reproducing_command(runs: list[dict], max_tokens: int, bucket: int, out: Path) -> str:
    """One command that redoes every run in a results file, however many resumed invocations filled it."""
    scaled = [r for r in runs if r["method"] != "default"]
    methods = sorted({r["method"] for r in runs}, key=lambda m: (DEFAULT_METHODS + [m]).index(m))
    factors = sorted({float(r["factor"]) for r in scaled})
    parts = ["python scripts/long_context_experiment.py", f"--max-tokens {max_tokens}"]
    if methods != DEFAULT_METHODS:
        parts.append("--methods " + " ".join(methods))
    if scaled and factors != DEFAULT_FACTORS:
        parts.append("--factors " + " ".join(f"{f:g}" for f in factors))
    if bucket != 1024:
        parts.append(f"--bucket {bucket}")
    if out.resolve() != default_out(max_tokens).resolve():
        parts.append(f"--out {out.relative_to(ROOT) if out.resolve().is_relative_to(ROOT) else out}")
    return " ".join(parts)


def load_model():
    """SmolLM2-135M-Instruct behind the model contract (weights de-quantised from the packaged GGUF)."""
    from core.models.smollm2 import load_smollm2

    return load_smollm2()


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--max-tokens", type=int, default=16384, help="tokens of the long text to evaluate")
    ap.add_argument("--methods", nargs="+", default=DEFAULT_METHODS)
    ap.add_argument("--factors", nargs="+", type=float, default=DEFAULT_FACTORS)
    ap.add_argument("--bucket", type=int, default=1024, help="positions per bucket of the loss curve")
    ap.add_argument(
        "--out",
        type=Path,
        default=None,
        help="results file (default: results/long_context.json at 16,384 tokens, "
        "results/long_context_32k.json at 32,768, ...)",
    )
    ap.add_argument(
        "--resume",
        action="store_true",
        help="keep the runs already in --out (same text, length and bucket) and do only the others",
    )
    args = ap.parse_args(argv)
    args.out = (args.out or default_out(args.max_tokens)).resolve()

    from tqdm.auto import tqdm

    device = default_device()
    model = load_model()
    model.to_device(device)
    text = load_long_text()
    all_ids = model.encode(text, special_tokens=True)
    ids = torch.tensor(all_ids[: args.max_tokens])
    runs = run_configs(args.methods, args.factors)
    original_context = model.max_positions
    invocation = {
        "command": "python scripts/long_context_experiment.py " + " ".join(sys.argv[1:] if argv is None else argv),
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }
    record = {
        "command": invocation["command"],
        "date": invocation["date"],
        "invocations": [invocation],
        **device_record(device),  # the page says it in the reader's words
        "transformers": transformers.__version__,
        "python": platform.python_version(),
        "model": "SmolLM2-135M-Instruct",
        "weights": weights_record(model.weights),  # the page says it in the reader's words
        "original_context": original_context,
        "rope_theta": model.capabilities.positions.rope_theta,
        "text": {
            "path": str(LONG_TEXT_PATH.relative_to(ROOT)),
            "sources": LONG_TEXT_SOURCES,
            "sha256_16": text_fingerprint(text),
            "tokens_available": len(all_ids),
        },
        "n_tokens": int(ids.numel()),
        "bucket": args.bucket,
        "complete": False,
        "runs": [],
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    if args.resume and args.out.exists():
        # A CPU run takes an hour or more; a stopped job should not redo what it finished.
        old = json.loads(args.out.read_text(encoding="utf-8"))
        same = (
            all(old.get(k) == record[k] for k in ("n_tokens", "bucket", "model"))
            and old.get("text", {}).get("sha256_16") == record["text"]["sha256_16"]
        )
        if same:
            done = {(r["method"], r["factor"]) for r in old["runs"]}
            record["runs"] = list(old["runs"])
            record["invocations"] = old.get("invocations", [{"command": old["command"], "date": old["date"]}]) + [
                invocation
            ]
            runs = [r for r in runs if (r[0], float(r[1])) not in done]

    def save(result=None):
        if result is not None:
            record["runs"].append(result)
            tqdm.write(
                f"{result['label']:>14}: loss within {result['mean_loss_within_context']:.3f}, beyond "
                f"{result['mean_loss_beyond_context'] if result['mean_loss_beyond_context'] is None else round(result['mean_loss_beyond_context'], 3)}"
                f" ({result['seconds']:.0f} s)"
            )
        if record["runs"]:
            record["command"] = reproducing_command(record["runs"], record["n_tokens"], args.bucket, args.out)
        args.out.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")

    bar = tqdm(total=1000, desc="runs", unit="‰")

    def progress(fraction, label):
        bar.set_postfix_str(label)
        bar.update(int(fraction * 1000) - bar.n)

    t0 = time.perf_counter()
    evaluate_scaling(
        model, ids, runs, bucket=args.bucket, original_context=original_context, progress=progress, on_result=save
    )
    bar.close()
    record["complete"] = True
    record["seconds_total"] = round(time.perf_counter() - t0, 1)
    save()
    print(
        f"wrote {args.out} ({len(record['runs'])} runs, {record['n_tokens']} tokens, {record['seconds_total']:.0f} s)"
    )


if __name__ == "__main__":
    main()
