"""Two folders of screenshots of the same pages (e.g. scripts/phone_layout_check.py's, before and after a change),
compared pixel by pixel: per file, the pixels whose colour differs by more than --tolerance (of 255, in any channel),
their share and the box around them, to look at (a changed number in the page's text differs too).

    python scripts/compare_screenshots.py /tmp/shots_before /tmp/shots_after --out results/template_look.json
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
from pathlib import Path

import numpy as np
from PIL import Image


def compare(before: Path, after: Path, tolerance: int) -> dict:
    a = np.asarray(Image.open(before).convert("RGB"), dtype=np.int16)
    b = np.asarray(Image.open(after).convert("RGB"), dtype=np.int16)
    if a.shape != b.shape:
        return {"file": before.name, "size_before": list(a.shape), "size_after": list(b.shape)}
    diff = np.abs(a - b).max(axis=2)
    ys, xs = np.nonzero(diff > tolerance)
    box = [int(xs.min()), int(ys.min()), int(xs.max()), int(ys.max())] if len(ys) else None
    return {
        "file": before.name,
        "size": [int(a.shape[1]), int(a.shape[0])],
        "max_difference": int(diff.max()),
        "pixels_over_tolerance": int(len(ys)),
        "share": round(len(ys) / diff.size, 6),
        "box_x0_y0_x1_y1": box,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--tolerance", type=int, default=8)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--note", default="", help="what was compared and what the differences are")
    args = parser.parse_args()
    rows = [compare(p, args.after / p.name, args.tolerance) for p in sorted(args.before.glob("*.png"))]
    for row in rows:
        print(json.dumps(row))
    if args.out:
        record = {
            "command": f"python scripts/compare_screenshots.py {args.before} {args.after} --tolerance {args.tolerance}",
            "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "load_1min": round(os.getloadavg()[0], 2),
            "note": args.note,
            "files": rows,
        }
        args.out.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
