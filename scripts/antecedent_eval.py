"""Antecedent heads on held-out minimal pairs, for every installed model -> results/antecedents.json.

    bash scripts/dev.sh bench scripts/antecedent_eval.py            # all installed models
    python scripts/antecedent_eval.py --models minilm               # one model

For each model: pick the head that best separates correct from wrong antecedent on the selection half of
data/antecedent_pairs.json, score it on the held-out half, and (decoders) score the model's own next-token
answer to "<sentence> In this sentence, '<pronoun>' refers to the". The antecedents page shows this file;
tests/core/test_antecedents.py recomputes MiniLM's numbers and compares them with it.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import time
from pathlib import Path

from core import antecedents
from core.models import registry
from core.models.base import weights_record
from core.results import DEVICE_FIELDS
from core.timing import device_record

ROOT = Path(__file__).resolve().parents[1]

OUT = ROOT / "results" / "antecedents.json"
PRETRAINED = ("minilm", "smollm2")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="*", default=None, help="model keys (default: every installed one)")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    status = registry.model_status()
    # The pretrained models only: the repo's tiny MoE knows ~270 words and most pair words would be [UNK].
    keys = args.models or [k for k, message in status.items() if message is None and k in PRETRAINED]
    data = antecedents.load_pairs()
    pairs_bytes = antecedents.PAIRS_PATH.read_bytes()
    result = {
        "command": "python scripts/antecedent_eval.py" + (f" --models {' '.join(args.models)}" if args.models else ""),
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        **device_record(),  # the page says it in the reader's words
        "pairs_file": "data/antecedent_pairs.json",
        "pairs_sha256": hashlib.sha256(pairs_bytes).hexdigest(),
        "n_pairs": len(data["pairs"]),
        "choice_prompt": antecedents.CHOICE_PROMPT,
        "models": {},
    }
    previous = json.loads(args.out.read_text()) if args.out.exists() else {}
    for key in keys:
        if status.get(key):
            print(f"{key}: skipped ({status[key]})")
            continue
        t0 = time.perf_counter()
        model = registry.RECORDS[key].load()
        t1 = time.perf_counter()
        res = antecedents.evaluate(model, data["pairs"])
        res["seconds"] = {"load": round(t1 - t0, 1), "evaluate": round(time.perf_counter() - t1, 1)}
        res |= {k: result[k] for k in ("date", *DEVICE_FIELDS)} | {"weights": weights_record(model.weights)}
        result["models"][key] = res
        held = res["halves"]["held_out"]
        line = (
            f"{key}: best head L{res['best_head'][0]} H{res['best_head'][1]}  "
            f"selection {res['halves']['selection']['head_accuracy']:.1%}  "
            f"held-out {held['head_accuracy']:.1%} "
            f"[{held['head_interval'][0]:.1%}, {held['head_interval'][1]:.1%}]  "
            f"first-mentioned picks {held['head_first_mentioned_share']:.1%}"
        )
        if "choice_accuracy" in held:
            line += f"  own choice held-out {held['choice_accuracy']:.1%}"
        print(line, f"({res['seconds']['evaluate']} s)")
    # Models not run this time keep their earlier entry (e.g. --models minilm leaves smollm2 as it was).
    for key, res in previous.get("models", {}).items():
        if key not in result["models"] and previous.get("pairs_sha256") == result["pairs_sha256"]:
            result["models"][key] = res
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print("wrote", args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out)


if __name__ == "__main__":
    main()
