"""Head detector maps for every installed pretrained model -> results/head_detectors.json.

    python scripts/head_detectors.py                  # minilm and smollm2, settings of core.head_detectors
    python scripts/head_detectors.py --models minilm --threads 2

Each model: B repeated random-token sequences (seeded), one forward pass, the five detectors of
core/head_detectors.py on every head. The seconds printed and recorded are the whole map (inputs, forward pass,
every head's weights and scores), model loading excluded. One torch thread by default: on this project's shared
2-core machine, two threads spinning against the other processes ran the same map about five times slower.
"""

from __future__ import annotations

import argparse
import datetime as dt

import torch

from core import head_detectors as hd
from core.models import registry
from core.results import load_result, save_result
from core.timing import machine_info

PRETRAINED = ("minilm", "smollm2")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="*", default=None, help="model keys (default: every installed one)")
    parser.add_argument("--sequences", type=int, default=hd.SCRIPT_SETTINGS["n_sequences"])
    parser.add_argument("--half", type=int, default=hd.SCRIPT_SETTINGS["half_length"])
    parser.add_argument("--seed", type=int, default=hd.SCRIPT_SETTINGS["seed"])
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    status = registry.model_status()
    keys = args.models or [k for k in PRETRAINED if status.get(k) is None]
    previous = load_result(hd.RESULT_NAME) or {}
    result = {
        "command": "python scripts/head_detectors.py"
        + (f" --models {' '.join(args.models)}" if args.models else "")
        + (f" --threads {args.threads}" if args.threads != 1 else ""),
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "device": machine_info(),
        "torch_threads": args.threads,
        "definitions": "core/head_detectors.py",
        "models": {},
    }
    for key in keys:
        if status.get(key):
            print(f"{key}: skipped ({status[key]})")
            continue
        model = registry.RECORDS[key].load()
        found = hd.detector_map(model, args.sequences, args.half, args.seed)
        entry = found.to_json()
        entry["load_average"] = _loadavg()
        result["models"][key] = entry
        print(f"{key}: full detector map in {found.seconds:.1f} s (load average {entry['load_average']})")
        for name in hd.DETECTORS:
            top = ", ".join(f"L{layer}H{h} {s:.2f}" for layer, h, s in found.top(name, 3))
            print(f"  {name:16s} uniform {found.uniform[name]:.3f}  top {top}")
    for key, entry in previous.get("models", {}).items():
        result["models"].setdefault(key, entry)  # a model not run this time keeps its earlier entry
    print("wrote", save_result(hd.RESULT_NAME, result))


def _loadavg() -> str | None:
    try:
        return " ".join(open("/proc/loadavg").read().split()[:3])
    except OSError:
        return None


if __name__ == "__main__":
    main()
