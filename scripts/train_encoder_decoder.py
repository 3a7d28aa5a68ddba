"""Train the shipped encoder-decoder (English -> Japanese and Korean) from scratch, deterministically.

    python scripts/train_encoder_decoder.py                       # the shipped model: data/encoder_decoder/
    python scripts/train_encoder_decoder.py --pairs 2000 --epochs 1 --out /tmp/ed   # a quick smoke run

Writes to --out: model.safetensors (float16 halves the size; loaded back as float32), config.json, the tokenizer
files, report.json (loss curves, held-out exact match and chrF with sacrebleu, sample translations with the
generator's word alignments, timings, command, date, device) and REPORT.md.

Determinism: the same seed gives the same pairs (Python's random) and the same initial weights and batch order
(torch's generator, one thread), so a rerun on the same machine reproduces the weights.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shlex
import sys
import time
from pathlib import Path

import torch

from core.encoder_decoder import grammar
from core.encoder_decoder import model as ed
from core.encoder_decoder.translate import greedy_translate
from core.timing import machine_info

ROOT = Path(__file__).resolve().parents[1]


def evaluate(model, tokenizer, pairs: list[grammar.Pair]) -> dict:
    """Held-out exact match (whole sentence, token for token) and chrF (sacrebleu), per language and overall."""
    import sacrebleu

    hyps = [" ".join(greedy_translate(model, tokenizer, p.source_text)) for p in pairs]
    out = {}
    for language in (None, *grammar.LANGUAGES):
        idx = [i for i, p in enumerate(pairs) if language in (None, p.language)]
        refs = [pairs[i].target_text for i in idx]
        hyp = [hyps[i] for i in idx]
        exact = sum(h == r for h, r in zip(hyp, refs)) / len(idx)
        chrf = sacrebleu.corpus_chrf(hyp, [refs]).score
        out[language or "all"] = {"pairs": len(idx), "exact_match": exact, "chrf": chrf}
    out["samples"] = [
        {"source": p.source_text, "reference": p.target_text, "output": hyps[i], "alignment": p.alignment}
        for i, p in enumerate(pairs[:8])
    ]
    return out


def markdown(report: dict) -> str:
    """REPORT.md from report.json (also rewritable alone: --rewrite-report)."""
    device = report["device"]
    lines = [
        "# The shipped encoder-decoder",
        "",
        f"`{report['command']}` on {report['date']} ({device.get('device_name', '?')}, torch {device.get('torch')}).",
        "",
        f"- {report['parameters']:,} parameters, {report['weights_bytes'] / 1e6:.1f} MB (float16), shape "
        + ", ".join(f"{k} {v}" for k, v in report["shape"].items()),
        f"- {report['train_pairs']:,} training pairs, {report['epochs']} epochs, {report.get('threads', '?')} thread(s): "
        f"{report.get('train_cpu_seconds', float('nan')):.0f} s CPU, {report['train_seconds']:.0f} s wall "
        f"(load average {report['load_average_before'][0]:.1f} before, {report['load_average_after'][0]:.1f} after;"
        " wall time on a shared, loaded machine is inflated: CPU time is what the run costs)",
        f"- held-out loss per epoch: {', '.join(f'{x:.3f}' for x in report['held_out_curve']['loss'])}",
        "- training loss (step: loss): "
        + ", ".join(f"{s}: {x:.3f}" for s, x in list(zip(*report["loss_curve"].values()))[::5]),
    ]
    scores = report["held_out"]
    for language in ("all", *grammar.LANGUAGES):
        s = scores[language]
        lines.append(
            f"- held-out {language}: exact match {s['exact_match']:.1%}, chrF {s['chrf']:.1f} ({s['pairs']} pairs)"
        )
    lines += ["", "Samples (held out), with the generator's word alignments (source word = target word):", ""]
    lines += ["| source | reference | output | alignment |", "|---|---|---|---|"]
    for s in scores["samples"]:
        src, ref = s["source"].split(), s["reference"].split()
        pairs = " ".join(f"{src[i]}={ref[j]}" for i, j in s["alignment"])
        lines.append(f"| {s['source']} | {s['reference']} | {s['output']} | {pairs} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=24000, help="training pairs (half ja, half ko)")
    parser.add_argument("--held-out", type=int, default=1000)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--threads", type=int, default=1, help="1: deterministic, and no spin-waiting on a shared machine"
    )
    parser.add_argument("--out", type=Path, default=ed.WEIGHTS_DIR)
    parser.add_argument("--rewrite-report", action="store_true", help="only rewrite REPORT.md from report.json")
    args = parser.parse_args(argv)
    if args.rewrite_report:
        report = json.loads((args.out / "report.json").read_text(encoding="utf-8"))
        (args.out / "REPORT.md").write_text(markdown(report), encoding="utf-8")
        return
    torch.set_num_threads(args.threads)
    t0, cpu0, load_before = time.perf_counter(), time.process_time(), os.getloadavg()
    train_pairs = grammar.generate(args.pairs, args.seed)
    held_out = grammar.generate(args.held_out, args.seed + 1, held_out=True)

    def on_log(step, loss, seconds):
        print(f"step {step:5d}  loss {loss:.4f}  {seconds:.0f}s", flush=True)

    model, tokenizer, log = ed.train(train_pairs, held_out, args.seed, args.epochs, args.batch, args.lr, on_log=on_log)
    scores = evaluate(model, tokenizer, held_out)
    args.out.mkdir(parents=True, exist_ok=True)
    model.save(args.out)  # float16 on disk
    tokenizer.save(args.out)
    report = {
        "command": "python scripts/train_encoder_decoder.py " + shlex.join(sys.argv[1:] if argv is None else argv),
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d"),
        "device": machine_info(),
        "seed": args.seed,
        "train_pairs": len(train_pairs),
        "held_out_pairs": len(held_out),
        "parameters": sum(p.numel() for p in model.parameters()),
        "shape": ed.Shape().__dict__,
        "epochs": args.epochs,
        "loss_curve": {"steps": log.steps, "train": log.train_loss},
        "held_out_curve": {"steps": log.held_out_steps, "loss": log.held_out_loss},
        "held_out": scores,
        "threads": args.threads,
        "train_seconds": round(log.seconds, 1),
        "train_cpu_seconds": round(log.cpu_seconds, 1),
        "total_seconds": round(time.perf_counter() - t0, 1),
        "total_cpu_seconds": round(time.process_time() - cpu0, 1),
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "weights_bytes": (args.out / "model.safetensors").stat().st_size,
    }
    (args.out / "report.json").write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    text = markdown(report)
    (args.out / "REPORT.md").write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
