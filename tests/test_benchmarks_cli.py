"""benchmarks/cli.py: the options every measuring benchmark shares, parsed and applied the same way."""

import argparse
from pathlib import Path

import pytest
import torch

from benchmarks.cli import add_run_options, apply_run_options


def test_options_parse_and_apply():
    ap = argparse.ArgumentParser()
    add_run_options(ap, Path("results/x.json"), budget_s=2.5)
    args = ap.parse_args(["--threads", "1"])
    assert (args.device, args.budget_s, args.out) == ("cpu", 2.5, Path("results/x.json"))
    before = torch.get_num_threads()
    try:
        apply_run_options(args)
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)
    plain = argparse.ArgumentParser()
    add_run_options(plain, Path("y.json"), device=False)
    assert not hasattr(plain.parse_args([]), "device") and not hasattr(plain.parse_args([]), "budget_s")


@pytest.mark.skipif(torch.cuda.is_available(), reason="only meaningful without a GPU")
def test_cuda_without_a_gpu_is_refused():
    ap = argparse.ArgumentParser()
    add_run_options(ap, Path("x.json"))
    with pytest.raises(SystemExit):
        apply_run_options(ap.parse_args(["--device", "cuda"]))
