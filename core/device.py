"""Where tensors live: CUDA when present, CPU otherwise. Nothing in the tests needs a GPU."""

import torch


def default_device() -> torch.device:
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")
