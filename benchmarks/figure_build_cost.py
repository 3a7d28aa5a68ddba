"""CPU a page's figure builders take on every rerun, per builder, on the views the page builds by default: /kv-cache's
(SmolLM2, its default prompt and settings: the last step at the last layer, the memory curves, the eviction KL) and
/logit-lens' (its default text). The views are made once through core as the pages make them; only the viz builder
is timed (its thread's CPU, median of --reps calls after one untimed), then, apart, the builder and fig.to_json()
(what the page's st.plotly_chart serialises).

    flock /tmp/attention-lab-measure.lock python benchmarks/figure_build_cost.py --label before
    # -> a table, and a run (label, command, date, commit, load before and after) added to --out

The machine is shared: the load average is recorded before and after."""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import sys
import time
from pathlib import Path

from app import i18n
from core import logit_lens as lens
from core.kv_cache import views
from core.kv_cache.state import STATE as KV_CACHE
from core.results import RESULTS_DIR, add_run
from viz import kv_cache as kv
from viz import logit_lens as lens_figures

KV_STEP_COLS = 96  # the page's columns of a pooled attention row (app/views/kv_cache/show.py MAX_COLS)


def cpu_ms(fn, reps: int) -> float:
    """Median thread CPU of fn() in ms over `reps` calls, after one untimed call."""
    fn()
    spent = []
    for _ in range(reps):
        start = time.thread_time()
        fn()
        spent.append(time.thread_time() - start)
    return 1000 * statistics.median(spent)


def builders(lang: str) -> dict:
    """{name: a call that builds one figure}: the pages' builders on their default views."""
    kv_words = functools.partial(i18n.text, lang, "kv_cache.figure")
    s = KV_CACHE.read({})
    gen = s.generation
    step = views.step_attention(gen, s.step, s.layer, KV_STEP_COLS)
    top = views.next_tokens(gen, s.step)
    memory = views.memory(gen)
    eviction = views.eviction(gen)
    history = views.history(gen, s.hlayer, None, KV_STEP_COLS)
    lens_state = lens.STATE.read({})
    lens_view = lens.logit_lens(lens_state.model_object, lens_state.text)
    lens_words = functools.partial(i18n.text, lang, "logit_lens.figure")
    return {
        "kv_cache.step_figure": lambda: kv.step_figure(step, kv_words),
        "kv_cache.top_figure": lambda: kv.top_figure(top, kv_words),
        "kv_cache.memory_figure": lambda: kv.memory_figure(memory, kv_words),
        "kv_cache.kl_figure": lambda: kv.kl_figure(eviction, kv_words),
        "kv_cache.history_figure": lambda: kv.history_figure(history, kv_words),
        "logit_lens.lens_figure": lambda: lens_figures.lens_figure(lens_view, lens_words),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--label", default="run", help="what this run measures (before, after, ...)")
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--lang", default="en", choices=["en", "ja", "ko"])
    ap.add_argument("--out", type=Path, default=RESULTS_DIR / "figure_build_cost.json")
    args = ap.parse_args()
    calls = builders(args.lang)
    load_before = os.getloadavg()[0]
    rows = {}
    for name, build in calls.items():
        rows[name] = {
            "build_ms": round(cpu_ms(build, args.reps), 2),
            "build_and_json_ms": round(cpu_ms(lambda b=build: b().to_json(), args.reps), 2),
        }
        print(
            f"{name:28s} build {rows[name]['build_ms']:7.2f} ms   + to_json {rows[name]['build_and_json_ms']:7.2f} ms"
        )
    load_after = os.getloadavg()[0]
    kv_total = sum(r["build_ms"] for n, r in rows.items() if n.startswith("kv_cache."))
    print(f"kv_cache total build {kv_total:.1f} ms; load {load_before:.2f} -> {load_after:.2f}")
    add_run(
        args.out,
        args.label,
        "python " + " ".join(sys.argv),
        {
            "lang": args.lang,
            "reps": args.reps,
            "cpu": "thread_time, median",
            "load_1min": [load_before, load_after],
            "kv_cache_total_build_ms": round(kv_total, 1),
            "figures": rows,
        },
    )


if __name__ == "__main__":
    main()
