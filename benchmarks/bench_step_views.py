"""What a lesson step's figure costs on this machine -> results/bench_step_views.json.

    python benchmarks/bench_step_views.py [--threads 1]

For each step whose figure runs a model (app/step_views: the page's helpers, the heavy-work queue): the first draw
(the model's pass, the model already loaded, as on a server that has served the page once), then a redraw (what
every later rerun and every room learner's poll pays: the figure built again from the queue's kept result, median
of 5); beside them a step drawn from the step views' own cache (/masks, no model). Outside a Streamlit run the
caches are Streamlit's in-memory ones, the queue the process's. The machine is shared: the load average is recorded
before and after.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from app import step_views
from app.views.lessons import progress
from benchmarks.bench_heads import median_s
from benchmarks.cli import add_run_options, apply_run_options
from core.models import registry
from core.results import RESULTS_DIR, save_result
from core.timing import machine_info

STEPS = [("logit-lens", 2), ("kv-cache", 5), ("why-head", 2), ("why-head", 5), ("long-maps", 5), ("masks", 3)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_run_options(parser, RESULTS_DIR / "bench_step_views.json", device=False)
    args = parser.parse_args()
    apply_run_options(args)
    for key in ("smollm2", "minilm"):
        registry.shared(key)  # loaded once per process by the first page that needs it: not a step's cost
    lessons = progress.load_lessons()
    before = machine_info()
    rows = []
    for lesson, index in STEPS:
        step = lessons[lesson].steps[index - 1]
        t0 = time.perf_counter()
        drawn = step_views.figures(step)
        first = time.perf_counter() - t0
        assert drawn, f"{lesson} step {index} drew nothing"
        redraw = median_s(lambda step=step: step_views.figures(step), reps=5)
        rows.append(
            {
                "step": f"{lesson}:{index}",
                "page": step.page,
                "model_pass": step.page in step_views.MODEL_PASSES,
                "first_s": round(first, 3),
                "redraw_s": round(redraw, 4),
            }
        )
        print(rows[-1])
    out = {
        "command": "python benchmarks/bench_step_views.py" + (f" --threads {args.threads}" if args.threads else ""),
        "device": before,
        "loadavg_1min_after": machine_info()["loadavg_1min"],
        "steps": rows,
    }
    save_result(Path(args.out), out)
    print(out)


if __name__ == "__main__":
    main()
