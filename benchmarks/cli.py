"""The command-line tail every measuring benchmark shares: where it runs (--device, --threads), how long one
measurement may repeat (--budget-s), where the result goes (--out); and applying them before measuring."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch


def add_run_options(
    ap: argparse.ArgumentParser, out: Path, *, device: bool = True, budget_s: float | None = None
) -> None:
    """--device (cpu or cuda) unless device=False, --budget-s when budget_s is given (its default), --threads,
    --out (default `out`)."""
    if device:
        ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    if budget_s is not None:
        ap.add_argument(
            "--budget-s", type=float, default=budget_s, help="stop repeating one measurement after this long"
        )
    ap.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)")
    ap.add_argument("--out", type=Path, default=out)


def apply_run_options(args: argparse.Namespace) -> None:
    """Refuse --device cuda without a GPU; set the torch thread count when asked."""
    if getattr(args, "device", "cpu") == "cuda" and not torch.cuda.is_available():
        sys.exit("--device cuda: no CUDA device is available here")
    if args.threads:
        torch.set_num_threads(args.threads)
