"""Claim cards: remove the heads a claim is about, against a placebo of random heads -> results/ablation.json.

    python scripts/ablation.py                       # SmolLM2, every claim, top 5 heads, zero ablation, 20 draws
    python scripts/ablation.py --claims induction --modes zero mean --draws 20

Needs results/head_detectors.json (scripts/head_detectors.py) for the induction and previous-token heads and
results/antecedents.json (scripts/antecedent_eval.py) for the antecedent heads. One torch thread, as in
scripts/head_detectors.py. The /ablation page shows these cards; other settings it computes live.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os

import torch

from core import ablation as ab
from core.models import registry
from core.results import save_result
from core.timing import machine_info


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--claims", nargs="*", default=list(ab.CLAIMS))
    parser.add_argument("--modes", nargs="*", default=["zero"])
    parser.add_argument("--heads", type=int, default=ab.DEFAULT_HEADS)
    parser.add_argument("--draws", type=int, default=ab.DEFAULT_DRAWS)
    parser.add_argument("--seed", type=int, default=ab.DEFAULT_SEED)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    model = registry.RECORDS[args.model].load()
    cards = []
    for claim in args.claims:
        evalset = ab.eval_set_for(model, claim)
        for mode in args.modes:
            card = ab.claim_card(args.model, model, claim, args.heads, mode, args.draws, args.seed, evalset=evalset)
            entry = card.to_json() | {"model_key": args.model, "k": args.heads, "draws": args.draws}
            entry["command"] = "python scripts/ablation.py " + " ".join(
                f"--{k} {' '.join(map(str, v)) if isinstance(v, list) else v}" for k, v in vars(args).items()
            )
            entry["load_average"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
            cards.append(entry)
            if card.verdict == "no_candidates":  # no head above chance (SmolLM2's antecedents): nothing was run
                print(f"{claim} ({mode}): no candidate heads above chance, no claim tested")
                continue
            lo, hi = card.placebo_interval or (float("nan"), float("nan"))
            print(
                f"{claim} ({mode}): heads {card.heads} score {card.detector_score:.3f}  "
                f"{card.metric} {card.clean['value']:.3f} -> {card.ablated['value']:.3f} (harm {card.harm:+.3f})  "
                f"placebo mean {card.placebo_mean:+.3f} [{lo:+.3f}, {hi:+.3f}]  -> {card.verdict} {card.notes}  "
                f"({card.seconds:.0f} s)"
            )
    result = {
        "command": "python scripts/ablation.py "
        + " ".join(f"--{k} {' '.join(map(str, v)) if isinstance(v, list) else v}" for k, v in vars(args).items()),
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "device": machine_info(),
        "eval_settings": ab.EVAL_SETTINGS,
        "definitions": "core/ablation.py",
        "cards": cards,
    }
    # Cards of other settings from an earlier run are kept (e.g. --claims antecedent leaves the induction cards).
    same = {(c["claim"], c["mode"], c["k"], c["draws"], c["seed"], c["model_key"]) for c in cards}
    for old in (ab.load_results() or {}).get("cards", []):
        if (old["claim"], old["mode"], old["k"], old["draws"], old["seed"], old["model_key"]) not in same:
            result["cards"].append(old)
    print("wrote", save_result(ab.RESULT_NAME, result))


if __name__ == "__main__":
    main()
