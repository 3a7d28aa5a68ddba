"""Where app/ui.show_figure's CPU goes, per figure, on a page's reruns: headless (AppTest), one visitor rerunning the
page at its default state, each part's thread CPU summed over the runs and divided by runs x figures. Parts nest
(st.plotly_chart holds Figure.to_dict and for_page; text_alternative holds _caption and st.caption); the st.* rows
count the page's own calls too (its captions and markdown), so they are upper bounds for what show_figure adds.

    python scripts/show_figure_cost.py --pages moe,linear-attention --runs 30 --out results/show_figure_cost.json

Run it under the measure lock (`flock /tmp/attention-lab-measure.lock ...`); the JSON records the date and load."""

from __future__ import annotations

import argparse
import collections
import os
import time
from pathlib import Path

import plotly.basedatatypes
import plotly.io._json

from app import ui
from core.results import add_run
from tests.apptest_helpers import run_view

try:
    from core import figure_text
except ImportError:  # a tree from before the text alternatives
    figure_text = None

PARTS = [
    (ui, "show_figure", "show_figure"),
    (ui, "_title", "_title"),
    (ui, "for_page", "for_page"),
    (ui, "text_alternative", "text_alternative"),
    (ui, "_caption", "_caption"),
    (ui, "_traces", "_traces"),
    (ui.st, "plotly_chart", "st.plotly_chart"),
    (ui.st, "markdown", "st.markdown"),
    (ui.st, "caption", "st.caption"),
    (ui.st, "toggle", "st.toggle"),
    (ui.st, "download_button", "st.download_button"),
    (plotly.basedatatypes.BaseFigure, "to_dict", "Figure.to_dict"),
    (plotly.basedatatypes.BasePlotlyType, "to_plotly_json", "to_plotly_json"),
    (plotly.io._json, "to_json_plotly", "plotly to_json"),
    (figure_text, "describe", "figure_text.describe"),
]
PARTS = [(owner, name, label) for owner, name, label in PARTS if owner is not None]


def measure(page: str, runs: int) -> dict:
    spent: dict[str, float] = collections.defaultdict(float)
    timing = [False]
    originals = []

    def timed(owner, name: str, label: str) -> None:
        real = getattr(owner, name)
        originals.append((owner, name, real))

        def part(*args, **kwargs):
            if not timing[0]:
                return real(*args, **kwargs)
            start = time.thread_time()
            try:
                return real(*args, **kwargs)
            finally:
                spent[label] += time.thread_time() - start

        setattr(owner, name, part)

    for owner, name, label in PARTS:
        if hasattr(owner, name):  # (an older tree, measured for comparison, has fewer)
            timed(owner, name, label)
    try:
        at = run_view(page)
        assert not at.exception, [e.value for e in at.exception]
        figures = len(at.get("plotly_chart"))
        at.run()
        at.run()  # warm: what a page keeps per session is made
        timing[0] = True
        for _ in range(runs):
            at.run()
    finally:
        for owner, name, real in originals:
            setattr(owner, name, real)
    per_figure = {
        k: round(v / runs / max(figures, 1) * 1e3, 3) for k, v in sorted(spent.items(), key=lambda kv: -kv[1])
    }
    return {"page": page, "figures": figures, "runs": runs, "ms_thread_cpu_per_figure": per_figure}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", default="moe,linear-attention")
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--out", type=Path, help="a JSON file: the run is added to what it holds, under --label")
    parser.add_argument("--label", default="", help="what the run measured (a commit, a change)")
    args = parser.parse_args()
    load = os.getloadavg()
    rows = [measure(page, args.runs) for page in args.pages.split(",")]
    for row in rows:
        print(f"{row['page']}: {row['figures']} figures, per figure (ms thread CPU):")
        for part, ms in row["ms_thread_cpu_per_figure"].items():
            print(f"  {part:22s} {ms:7.3f}")
    if args.out:
        command = f"python scripts/show_figure_cost.py --pages {args.pages} --runs {args.runs} --out {args.out}"
        add_run(
            args.out,
            args.label,
            command,
            {
                "load_before_after": [round(load[0], 2), round(os.getloadavg()[0], 2)],
                "pages": rows,
            },
        )


if __name__ == "__main__":
    main()
