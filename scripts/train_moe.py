"""Train the two shipped MoE checkpoints (balanced and collapsed) from scratch, deterministically.

    python scripts/train_moe.py                 # both variants, in parallel, one CPU thread each
    python scripts/train_moe.py --variant balanced --steps 200 --out /tmp/moe

Each variant goes to <out>/<variant>/: model.safetensors (float16), config.json, the tokenizer files and
report.json (loss curve, held-out loss, expert load per layer, category counts per expert, timings).
<out>/REPORT.md summarises both. The two variants differ only in the load-balancing loss coefficient.

Determinism: the same seed gives the same data (Python's random) and the same initial weights (torch's
generator); with one thread per process the arithmetic order is fixed too, so a rerun on the same machine
reproduces the weights. One thread each also lets the two runs share two cores without contention.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

AUX_COEF = {"balanced": 0.01, "collapsed": 0.0}  # Switch Transformer used alpha = 0.01


def train_variant(variant: str, args) -> dict:
    import torch
    import transformers

    from core.models import moe_model
    from core.moe import training as moe_training

    torch.set_num_threads(args.threads)
    torch.use_deterministic_algorithms(True)
    out_dir = Path(args.out) / variant
    out_dir.mkdir(parents=True, exist_ok=True)
    cpu0 = time.process_time()

    def on_log(entry):
        print(
            f"[{variant}] step {entry['step']:5d}  lm {entry['lm_loss']:.4f}  balance {entry['balance_loss']:.4f}"
            f"  {entry['seconds']:.0f}s",
            flush=True,
        )

    result = moe_training.train(
        args.steps,
        args.seed,
        AUX_COEF[variant],
        batch_size=args.batch,
        seq_len=args.seq_len,
        lr=args.lr,
        log_every=args.log_every,
        on_log=on_log,
    )
    cpu_seconds = time.process_time() - cpu0

    # Ship float16 (half the bytes); the report's numbers come from the shipped file, reloaded in float32.
    result.model.config.router_aux_loss_coef = AUX_COEF[variant]
    result.model.to(torch.float16).save_pretrained(out_dir)
    moe_model.build_tokenizer().save_pretrained(out_dir)
    shipped = transformers.MixtralForCausalLM.from_pretrained(
        out_dir, dtype=torch.float32, experts_implementation="eager"
    )
    metrics = moe_model.evaluate(shipped, moe_training.held_out_batch())
    loads = [layer["expert_load"] for layer in metrics["layers"]]
    report = {
        "variant": variant,
        "aux_coef": AUX_COEF[variant],
        "aux_loss": "Switch Transformer N * sum_i f_i P_i per layer, mean over layers (core/moe.py)",
        "seed": args.seed,
        "steps": args.steps,
        "batch_size": args.batch,
        "seq_len": args.seq_len,
        "lr": args.lr,
        "threads": args.threads,
        "n_params": sum(p.numel() for p in shipped.parameters()),
        "architecture": {k: getattr(shipped.config, k) for k in moe_model.ARCHITECTURE},
        "train_wall_seconds": round(result.seconds, 1),
        "train_cpu_seconds": round(cpu_seconds, 1),
        "steps_per_second_wall": round(args.steps / result.seconds, 3),
        "cpu_seconds_per_step": round(cpu_seconds / args.steps, 4),
        "machine": f"{platform.machine()}, {os.cpu_count()} logical CPUs, torch {torch.__version__}, "
        f"transformers {transformers.__version__}",
        "loss_curve": result.log,
        "held_out": {"seed": moe_training.HELD_OUT_SEED, "tokens": metrics["held_out_tokens"]},
        "held_out_loss": round(metrics["held_out_loss"], 5),
        "category_names": moe_model.category_names(),
        "layers": metrics["layers"],
        "min_expert_share": min(min(x) for x in loads),
        "max_expert_share": max(max(x) for x in loads),
        "weights_bytes": (out_dir / "model.safetensors").stat().st_size,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }
    (out_dir / "report.json").write_text(json.dumps(report, indent=1), encoding="utf-8")
    print(
        f"[{variant}] held-out loss {report['held_out_loss']:.4f}; expert shares "
        f"{report['min_expert_share']:.3f}..{report['max_expert_share']:.3f}; "
        f"{result.seconds:.0f}s wall, {cpu_seconds:.0f}s CPU",
        flush=True,
    )
    return report


def write_summary(out: Path) -> None:
    lines = [
        "# Training report: the two MoE checkpoints",
        "",
        "Written by `scripts/train_moe.py`; every number below is read from `<variant>/report.json`.",
        "",
    ]
    reports = {
        v: json.loads((out / v / "report.json").read_text())
        for v in ("balanced", "collapsed")
        if (out / v / "report.json").exists()
    }
    lines += [
        "| variant | aux coef | steps | held-out loss (nats/token) | min / max expert share | "
        "train wall s | train CPU s |",
        "|---|---|---|---|---|---|---|",
    ]
    for v, r in reports.items():
        lines.append(
            f"| {v} | {r['aux_coef']} | {r['steps']} | {r['held_out_loss']:.4f} | "
            f"{r['min_expert_share']:.3f} / {r['max_expert_share']:.3f} | {r['train_wall_seconds']} | "
            f"{r['train_cpu_seconds']} |"
        )
    for v, r in reports.items():
        lines += [
            "",
            f"## {v}: expert load per layer (share of top-{r['architecture']['num_experts_per_tok']} "
            f"assignments on {r['held_out']['tokens']} held-out tokens; uniform = "
            f"{1 / r['architecture']['num_local_experts']:.3f})",
            "",
        ]
        n = r["architecture"]["num_local_experts"]
        lines += ["| layer | " + " | ".join(f"e{i}" for i in range(n)) + " | Switch loss |", "|---" * (n + 2) + "|"]
        for i, layer in enumerate(r["layers"]):
            lines.append(
                f"| {i} | " + " | ".join(f"{x:.3f}" for x in layer["expert_load"]) + f" | {layer['switch_loss']:.3f} |"
            )
        lines += ["", "Loss curve (training batches):", "", "| step | LM loss | balance loss |", "|---|---|---|"]
        lines += [f"| {e['step']} | {e['lm_loss']:.4f} | {e['balance_loss']:.4f} |" for e in r["loss_curve"]]
    (out / "REPORT.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--variant", choices=["balanced", "collapsed", "both"], default="both")
    p.add_argument("--steps", type=int, default=1200)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--seq-len", type=int, default=128)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--log-every", type=int, default=25)
    p.add_argument("--out", default=str(ROOT / "data" / "moe"))
    args = p.parse_args()
    if args.variant != "both":
        train_variant(args.variant, args)
        return
    start = time.perf_counter()
    own = [
        f"--steps={args.steps}",
        f"--seed={args.seed}",
        f"--batch={args.batch}",
        f"--seq-len={args.seq_len}",
        f"--lr={args.lr}",
        f"--threads={args.threads}",
        f"--log-every={args.log_every}",
        f"--out={args.out}",
    ]
    procs = [subprocess.Popen([sys.executable, __file__, "--variant", v, *own]) for v in ("balanced", "collapsed")]
    codes = [proc.wait() for proc in procs]
    if any(codes):
        sys.exit(f"training failed: exit codes {codes}")
    write_summary(Path(args.out))
    print(f"both variants: {time.perf_counter() - start:.0f}s wall; summary in {Path(args.out) / 'REPORT.md'}")


if __name__ == "__main__":
    main()
