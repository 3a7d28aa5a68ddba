"""Train the GRU encoder-decoder with additive attention (core/rnn_attention/model.py) on the shipped Transformer's
task (the same generated pairs, seeds and held-out side as scripts/train_encoder_decoder.py), deterministically.

    nice -n 5 python scripts/train_rnn_attention.py                      # the shipped model: data/rnn_attention/
    python scripts/train_rnn_attention.py --pairs 2000 --epochs 1 --out /tmp/rnn   # a quick smoke run

Writes to --out: model.safetensors (float16), config.json, report.json and REPORT.md. The held-out scores and the
alignment are computed from the SAVED weights loaded back (so tests/core/test_rnn_attention_report.py recomputes them
exactly): exact match and chrF on the 1,000 held-out pairs of seed + 1 (as the Transformer's report), alignment on
the 500 held-out pairs of seed 2 (as scripts/encoder_decoder_alignment.py). One thread, CPU time recorded.
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
from core.rnn_attention import model as rm
from core.rnn_attention import translate as rt
from core.timing import machine_info

ALIGNMENT_SEED, ALIGNMENT_PAIRS = 2, 500  # scripts/encoder_decoder_alignment.py's sample


def evaluate(folder: Path, held_out, alignment_pairs) -> dict:
    """Scores of the saved weights: exact match, chrF, samples, alignment (one attention: layer 0, head 0)."""
    model, tokenizer = rm.load(folder)
    hyps = rt.greedy_outputs(model, tokenizer, held_out)
    out = rt.scores(hyps, held_out)
    out["samples"] = [{"source": p.source_text, "reference": p.target_text, "output": hyps[i],
                       "alignment": p.alignment} for i, p in enumerate(held_out[:8])]  # fmt: skip
    report = rt.measure_alignment(model, tokenizer, alignment_pairs).to_dict(best=1)
    return {"held_out": out, "alignment": {"seed": ALIGNMENT_SEED, **report}}


def markdown(report: dict) -> str:
    s = report["shape"]
    a = report["alignment"]
    head, diag = a["heads"][0], a["diagonal"]
    lines = [
        "# The GRU encoder-decoder with additive attention",
        "",
        f"`{report['command']}` on {report['date']} ({report['device'].get('device_name', '?')}, "
        f"torch {report['device'].get('torch')}).",
        "",
        f"- {report['parameters']:,} parameters, {report['weights_bytes'] / 1e6:.2f} MB (float16): embeddings {s['embed']}, "
        f"bidirectional GRU encoder {s['hidden']} per direction (annotations {2 * s['hidden']}), GRU decoder "
        f"{s['decoder']}, additive attention {s['attention']}",
        f"- {report['train_pairs']:,} training pairs, {report['epochs_run']} epochs, {report['threads']} thread: "
        f"{report['train_cpu_seconds']:.0f} s CPU, {report['train_seconds']:.0f} s wall (load average "
        f"{report['load_average_before'][0]:.1f} before, {report['load_average_after'][0]:.1f} after; wall time on a "
        "shared machine is inflated: CPU time is what the run costs)",
        f"- held-out loss per epoch: {', '.join(f'{x:.3f}' for x in report['held_out_curve']['loss'])}",
    ]
    for language in ("all", *grammar.LANGUAGES):
        x = report["held_out"][language]
        lines.append(
            f"- held-out {language}: exact match {x['exact_match']:.1%}, chrF {x['chrf']:.1f} ({x['pairs']} pairs)"
        )
    lines.append(
        f"- alignment ({a['pairs']} held-out pairs of seed {a['seed']}, {a['words']} aligned words): largest "
        f"attention weight on the aligned source word {head['accuracy']:.1%} [{head['low']:.1%}, {head['high']:.1%}]; "
        f"diagonal baseline {diag['accuracy']:.1%}, chance {a['chance']:.1%}; verdict {a['verdict']}"
    )
    if "off_diagonal" in a:
        off = a["off_diagonal"]["best_head"]
        lines.append(
            f"- on the {off['words']} words whose aligned source word is not the diagonal guess: {off['accuracy']:.1%} "
            f"[{off['low']:.1%}, {off['high']:.1%}], chance {a['off_diagonal']['chance']:.1%}"
        )
    lines += ["", "Samples (held out):", "", "| source | reference | output |", "|---|---|---|"]
    lines += [f"| {x['source']} | {x['reference']} | {x['output']} |" for x in report["held_out"]["samples"]]
    return "\n".join(lines) + "\n"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=24000)
    parser.add_argument("--held-out", type=int, default=1000)
    parser.add_argument("--epochs", type=int, default=12)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cpu-budget", type=float, default=540.0, help="stop training after this much CPU time (s)")
    parser.add_argument("--out", type=Path, default=rm.WEIGHTS_DIR)
    parser.add_argument("--rewrite-report", action="store_true", help="only rewrite REPORT.md from report.json")
    parser.add_argument("--rescore", action="store_true",
                        help="no training: score the saved weights again (held-out scores, alignment) into report.json")  # fmt: skip
    args = parser.parse_args(argv)
    if args.rescore:
        report = json.loads((args.out / "report.json").read_text(encoding="utf-8"))
        held_out = grammar.generate(report["held_out_pairs"], report["seed"] + 1, held_out=True)
        report.update(evaluate(args.out, held_out, grammar.generate(ALIGNMENT_PAIRS, ALIGNMENT_SEED, held_out=True)))
        report["rescored"] = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d")
        (args.out / "report.json").write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        args.rewrite_report = True
    if args.rewrite_report:
        report = json.loads((args.out / "report.json").read_text(encoding="utf-8"))
        (args.out / "REPORT.md").write_text(markdown(report), encoding="utf-8")
        return
    torch.set_num_threads(1)
    load_before = os.getloadavg()
    train_pairs = grammar.generate(args.pairs, args.seed)
    held_out = grammar.generate(args.held_out, args.seed + 1, held_out=True)

    def on_log(step, loss, cpu):
        print(f"step {step:5d}  loss {loss:.4f}  {cpu:.0f}s CPU", flush=True)

    model, _, log = rm.train(train_pairs, held_out, args.seed, args.epochs, args.batch, args.lr, on_log=on_log,
                             cpu_budget=args.cpu_budget)  # fmt: skip
    rm.save(model, args.out)
    cpu0 = time.process_time()
    scores = evaluate(args.out, held_out, grammar.generate(ALIGNMENT_PAIRS, ALIGNMENT_SEED, held_out=True))
    report = {
        "command": "python scripts/train_rnn_attention.py " + shlex.join(sys.argv[1:] if argv is None else argv),
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d"),
        "device": machine_info(),
        "seed": args.seed,
        "train_pairs": len(train_pairs),
        "held_out_pairs": len(held_out),
        "parameters": sum(p.numel() for p in model.parameters()),
        "shape": model.shape.__dict__,
        "epochs": args.epochs,
        "epochs_run": len(log.held_out_loss),
        "loss_curve": {"steps": log.steps, "train": log.train_loss},
        "held_out_curve": {"steps": log.held_out_steps, "loss": log.held_out_loss},
        **scores,
        "threads": 1,
        "train_seconds": round(log.seconds, 1),
        "train_cpu_seconds": round(log.cpu_seconds, 1),
        "evaluation_cpu_seconds": round(time.process_time() - cpu0, 1),
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
