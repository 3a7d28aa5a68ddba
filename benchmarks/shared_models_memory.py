"""Resident memory of one server process that opens the pages loading MiniLM, the MoE and the encoder-decoder and
answers one lesson question using each: one copy of each model per process (core.models.registry.shared), against
the tree before it (the pages' st.cache_resource copies beside the lessons' lru_cache copies).

    nice -n 5 python benchmarks/shared_models_memory.py --before a246867~1 --repeats 3
        # -> results/shared_models_memory.json (a246867~1: the tree before the shared cache)
    python benchmarks/shared_models_memory.py --root DIR   # one process, one tree: prints its steps as JSON

--before REV: `git worktree add --detach` of REV in a temporary folder (removed afterwards; /work/main itself is
never stashed or reset), then this script with --root in a fresh process for that tree and for this one. Each step
records VmRSS/VmHWM from /proc and how many copies of each model's transformers module are alive (gc). One torch
thread, as app/serving.py sets for the server.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODULES = {"MiniLM": "BertModel", "MoE": "MixtralForCausalLM", "encoder-decoder": "MarianMTModel"}
# (topic, query parameters) a visitor opens, then (answer function, params, state) of a lesson step on that page
STEPS = [
    ("attention", {"model": "minilm"}, "attention.top_key", {"query": "it"}, {"model": "minilm", "layer": 2}),
    ("moe", {}, "moe.dropped_change", {"ckpt": "collapsed"}, {"ckpt": "balanced", "layer": 1}),
    (
        "encoder-decoder",
        {},
        "encoder_decoder.source_length",
        {},
        {"part": "steps", "text": "The dog makes the teacher in the school.", "target": "ja", "step": 1},
    ),
]


def memory_mib() -> dict:
    status = Path("/proc/self/status").read_text()  # kB (KiB) in /proc
    return {f"{k}_MiB": round(int(re.search(rf"{k}:\s+(\d+)", status).group(1)) / 1024, 1) for k in ("VmRSS", "VmHWM")}


def copies() -> dict:
    """{model: live instances of its transformers module}: 2 where the pages and the lessons hold one each."""
    gc.unfreeze()  # the app freezes what it loaded (app/serving.py): frozen objects are not in gc.get_objects()
    gc.collect()
    names = [type(o).__name__ for o in gc.get_objects()]
    return {model: names.count(cls) for model, cls in MODULES.items()}


def measure(root: Path) -> dict:
    """Every step in this process, on the tree at `root`."""
    os.chdir(root)
    sys.path.insert(0, str(root))
    import torch

    torch.set_num_threads(1)
    steps = []

    def step(name: str, fn) -> None:
        t0 = time.perf_counter()
        fn()
        steps.append({"step": name, "seconds": round(time.perf_counter() - t0, 2), **memory_mib(), **copies()})
        print(json.dumps(steps[-1]), file=sys.stderr, flush=True)

    def imports():
        from streamlit.testing.v1 import AppTest  # noqa: F401

        from core.lessons import answers  # noqa: F401

    step("imports (streamlit, the lessons' answers)", imports)
    from streamlit.testing.v1 import AppTest

    from core.lessons import answers

    def open_page(topic: str, params: dict):
        at = AppTest.from_file(str(root / "app" / "main.py"), default_timeout=300)
        at.run()
        url = topic.replace("_", "-")
        pages = {info.get("url_pathname"): h for h, info in at._registered_pages.items()}
        assert url in pages, f"no page at /{url}: {sorted(pages)}"
        at._page_hash = pages[url]
        for k, v in params.items():
            at.query_params[k] = v
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        assert not at.error, [e.value for e in at.error]

    answers_given = {}
    for topic, params, answer, q_params, state in STEPS:
        step(f"open /{topic}", lambda: open_page(topic, params))
        step(f"answer {answer}", lambda: answers_given.setdefault(answer, answers.compute(answer, q_params, state)))
    return {
        "root": str(root),
        "commit": subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True).stdout.strip(),
        "steps": steps,
        "answers": {k: str(a.correct) for k, a in answers_given.items()},
    }


def run_tree(root: Path) -> dict:
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    env["PYTHONPATH"] = str(root)
    out = subprocess.run(
        [sys.executable, __file__, "--root", str(root)], env=env, capture_output=True, text=True, check=False
    )
    if out.returncode:
        raise SystemExit(f"measuring {root} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout)


def compare(before_rev: str, out_path: Path, repeats: int) -> dict:
    """Both trees, `repeats` fresh processes each (alternating); the first pair's steps are kept in full."""
    sys.path.insert(0, str(ROOT))
    from statistics import median

    from core.timing import machine_info

    commit = subprocess.run(
        ["git", "rev-parse", before_rev], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.strip()
    load_before = os.getloadavg()
    runs = {"before": [], "after": []}
    with tempfile.TemporaryDirectory(prefix="shared-models-before-") as tmp:
        tree = Path(tmp) / "tree"
        subprocess.run(["git", "worktree", "add", "--detach", str(tree), commit], cwd=ROOT, check=True)
        try:
            for _ in range(repeats):
                runs["before"].append(run_tree(tree))
                runs["after"].append(run_tree(ROOT))
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, check=False)
    final = {side: [r["steps"][-1] for r in rs] for side, rs in runs.items()}
    rss = {side: [s["VmRSS_MiB"] for s in steps] for side, steps in final.items()}
    result = {
        "command": f"nice -n 5 python benchmarks/shared_models_memory.py --before {before_rev} --repeats {repeats}",
        "what": "one process opens /attention (MiniLM), /moe (both checkpoints), /encoder-decoder headless and "
        "answers one lesson question on each page's model; resident memory and live model copies after each step "
        "(MoE counts the two checkpoints, balanced and collapsed)",
        "machine": machine_info("cpu")
        | {"measured_torch_threads": 1, "loadavg_before": [round(x, 2) for x in load_before]},
        "VmRSS_MiB": {side: {"median": median(v), "runs": v} for side, v in rss.items()},
        "saved_MiB": round(median(rss["before"]) - median(rss["after"]), 1),
        "copies": {side: {k: steps[0][k] for k in MODULES} for side, steps in final.items()},
        "same_answers": all(b["answers"] == a["answers"] for b, a in zip(runs["before"], runs["after"])),
        "before": {"rev": before_rev, **runs["before"][0]},
        "after": runs["after"][0],
    }
    result["machine"]["loadavg_after"] = [round(x, 2) for x in os.getloadavg()]
    from core.results import save_result

    print("wrote", save_result(out_path, result))
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", type=Path, help="measure this tree in this process, print JSON")
    parser.add_argument("--before", help="git revision to compare this tree with (a temporary worktree)")
    parser.add_argument("--repeats", type=int, default=3, help="fresh processes per tree (compare)")
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "shared_models_memory.json")
    args = parser.parse_args()
    if args.root:
        print(json.dumps(measure(args.root.resolve())))
        return 0
    if not args.before:
        parser.error("give --before REV (compare) or --root DIR (one tree)")
    result = compare(args.before, args.out, args.repeats)
    print(json.dumps({k: result[k] for k in ("VmRSS_MiB", "saved_MiB", "copies", "same_answers")}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
