"""What the server sends for the figures of each page: headless (AppTest: the plotly_chart messages a browser would
get), each page of the catalog opened once at its default state, then one action a visitor takes (as
scripts/load_pages.py's visitor: a new text in the page's first text area, else the next value of its first
slider, else a rerun; Streamlit sends every element of a run again). The new text has as many lines (new
sentences) as the area's default text (scripts/load_test.typed_text, both scripts' rule): a page that takes one sentence per line (/masks' batch, /padded-batch)
answers one sentence with a note and no figures, which says nothing about what it sends. Per page and run: the figures, their bytes
(the JSON st.plotly_chart sends), and the bytes and share of those that are the figures' layout.template.

    python scripts/page_bytes.py --out results/page_bytes.json --label "main e7ef2a6"
    python scripts/page_bytes.py --pages attention,moe          # a few pages, printed only

Bytes do not depend on the machine's load; the JSON records it anyway, with the command, date and commit."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import time
from pathlib import Path

from core.results import add_run
from scripts.load_test import typed_text
from tests.apptest_helpers import run_view

SENTENCES = (
    "The committee reviewed the proposal before the vote.",
    "Rain fell all night.",
    "The old bridge over the river was closed for repairs in the spring.",
    "She smiled.",
)


def catalog_pages() -> list[str]:
    from app import catalog

    return [p.url for p in catalog.PAGES]


def sent(at) -> dict:
    """The figures of a run as sent: their number, JSON bytes, and the bytes of their layout.template (its JSON
    length in the sent spec: the spec's length less that of the spec without it, both as plotly writes them)."""
    total = template = 0
    charts = at.get("plotly_chart")
    for chart in charts:
        spec = chart.proto.spec
        total += len(spec.encode("utf-8"))
        parsed = json.loads(spec)
        layout = parsed.get("layout", {})
        if "template" in layout:
            whole = len(json.dumps(parsed, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))
            parsed["layout"] = {k: v for k, v in layout.items() if k != "template"}
            rest = len(json.dumps(parsed, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))
            template += whole - rest
    return {
        "figures": len(charts),
        "bytes": total,
        "template_bytes": template,
        "template_share": round(template / total, 3) if total else 0.0,
    }


def act(at) -> str:
    """One visitor's action on the page; says which."""
    if at.text_area:
        area = at.text_area[0]
        text = typed_text(area.value or "", lambda line: SENTENCES[line % len(SENTENCES)])
        area.input(text).run()
        lines = len(text.splitlines())
        return "text_area" if lines == 1 else f"text_area ({lines} lines)"
    slider = next((s for s in at.slider if isinstance(s.value, (int, float))), None)
    if slider is not None:
        step = slider.step or 1
        slider.set_value(slider.value + step if slider.value + step <= slider.max else slider.min).run()
        return "slider"
    at.run()
    return "rerun"


def measure(url: str) -> dict:
    start = time.perf_counter()
    at = run_view(url if url != "home" else "home")
    assert not at.exception, (url, [e.value for e in at.exception])
    first = sent(at)
    action = act(at)
    assert not at.exception, (url, action, [e.value for e in at.exception])
    return {
        "page": f"/{url}" if url != "home" else "/",
        "first_run": first,
        "action": action,
        "after_action": sent(at),
        "seconds": round(time.perf_counter() - start, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", default="catalog", help="comma-separated URLs, or 'catalog' (every page)")
    parser.add_argument("--out", type=Path, help="a JSON file: the run is added to what it holds, under --label")
    parser.add_argument("--label", default="", help="what the run measured (a commit, a change)")
    args = parser.parse_args()
    pages = catalog_pages() if args.pages == "catalog" else args.pages.split(",")
    uptime_before = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    rows = []
    for url in pages:
        row = measure(url)
        rows.append(row)
        f, a = row["first_run"], row["after_action"]
        print(
            f"{row['page']:20s} first {f['figures']:2d} figs {f['bytes']:8d} B (template {f['template_share']:.0%})"
            f"  {row['action']:9s} {a['figures']:2d} figs {a['bytes']:8d} B (template {a['template_share']:.0%})",
            flush=True,
        )
    totals = {
        run: {k: sum(r[run][k] for r in rows) for k in ("figures", "bytes", "template_bytes")}
        for run in ("first_run", "after_action")
    }
    for t in totals.values():
        t["template_share"] = round(t["template_bytes"] / t["bytes"], 3) if t["bytes"] else 0.0
    print("all pages:", json.dumps(totals))
    if args.out:
        add_run(
            args.out,
            args.label,
            f"python scripts/page_bytes.py --pages {args.pages} --out {args.out}",
            {
                "uptime_before": uptime_before,
                "uptime_after": subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip(),
                "load_1min_now": round(os.getloadavg()[0], 2),
                "totals": totals,
                "pages": rows,
            },
        )


if __name__ == "__main__":
    main()
