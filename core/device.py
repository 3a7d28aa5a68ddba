"""Where the server computes: CUDA when present, the CPU otherwise. ATTENTION_LAB_DEVICE=cpu keeps everything on the
CPU on a machine with a GPU (an operator's choice, and the CPU half of scripts/gpu_pages.py's comparison). Nothing in
the tests needs a GPU."""

import os

import torch

DEVICE_ENV = "ATTENTION_LAB_DEVICE"


def default_device() -> torch.device:
    if os.environ.get(DEVICE_ENV, "").strip().lower() == "cpu":
        return torch.device("cpu")
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")
