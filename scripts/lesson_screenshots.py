"""Screenshots of a lesson step with its figure above its question, in Debian's chromium at a laptop's 1366 x 768
and a phone's 390 x 844 (where a room's QR code lands): the window scrolled to the step's figure, so each picture
is one screen. Writes docs/screenshots/lesson-step-{1366,390}.png (the README shows them); --name another prefix,
e.g. a step whose figure runs a model (the README's lesson-model-step pictures):

    .venv/bin/python scripts/lesson_screenshots.py [--lesson masks --step 4]
    .venv/bin/python scripts/lesson_screenshots.py --lesson kv-cache --step 5 --name lesson-model-step
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scripts.app_server import CHROMIUM, free_port, start_server, stop_server  # noqa: E402
from scripts.phone_layout_check import PHONE_AGENT  # noqa: E402

SIZES = {"1366": (1366, 768), "390": (390, 844)}
HEADER = 72  # px of Streamlit's header over the page: the figure's top goes just under it
# the figure's title (page text just above it, app/ui.show_figure) to the window's top, else the figure's own top
TITLE_INTO_VIEW = """e => {
  const above = [...document.querySelectorAll('.lab-figure-title')]
    .filter(t => t.compareDocumentPosition(e) & Node.DOCUMENT_POSITION_FOLLOWING);
  (above.length ? above[above.length - 1] : e).scrollIntoView({block: 'start'});
}"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lesson", default="masks")
    parser.add_argument("--step", type=int, default=3)
    parser.add_argument("--out", default=str(ROOT / "docs" / "screenshots"))
    parser.add_argument("--name", default="lesson-step", help="the pictures' file name before -1366.png, -390.png")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    port = free_port()
    with tempfile.TemporaryFile("w+") as log:
        server = start_server(port, log)
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
                for name, (width, height) in SIZES.items():
                    phone = {"user_agent": PHONE_AGENT} if width < 768 else {}  # the page fits figures to it
                    page = browser.new_page(viewport={"width": width, "height": height}, **phone)
                    page.goto(f"http://127.0.0.1:{port}/lessons?lesson={args.lesson}&lstep={args.step}")
                    page.locator("[data-testid=stForm]").first.wait_for(
                        timeout=180_000
                    )  # the question (after its figure)
                    held_back = page.locator("[data-testid=stExpander] summary").first
                    if held_back.count():  # the view waits closed until an answer: opened as a learner would
                        held_back.click()
                    figure = page.locator(f".st-key-step-fig-{args.step - 1}-0, .stPlotlyChart").first
                    figure.wait_for(timeout=180_000)  # a model's first load and pass included
                    page.wait_for_timeout(1500)  # plotly draws after the element appears
                    figure.evaluate(TITLE_INTO_VIEW)
                    page.mouse.move(width // 2, height // 2)
                    page.mouse.wheel(0, -HEADER)
                    page.mouse.move(4, 4)  # off the figure: its tool bar shows while the pointer is on it
                    page.wait_for_timeout(800)
                    path = Path(args.out) / f"{args.name}-{name}.png"
                    page.screenshot(path=str(path))
                    print(path)
                    page.close()
                browser.close()
        finally:
            stop_server(server)


if __name__ == "__main__":
    main()
