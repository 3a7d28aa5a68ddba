"""What a learner sees after switching language, in chromium: on each page with a picker whose option labels are
words, an option is chosen in English, the sidebar's language switched to Japanese, and what each picker then shows
is read from the page (a select box's shown value, a radio's checked label, a multiselect's chips).

    python scripts/language_switch_check.py            # prints one line per picker; exit status 1 if any is stale
    python scripts/language_switch_check.py --pages    # every page: switched vs opened in Japanese by its link

A picker is stale when it shows a label that is not among its own options in the new language, or shows nothing
where the learner had chosen something.
"""

from __future__ import annotations

import sys
from urllib.parse import urlparse

from scripts.a11y_axe_all import served_chromium
from scripts.app_server import COUNT_RUNS
from tests import axe_helpers
from tests.test_browser import PAGE_RUN_MS, PAGES_IN_TEST_ORDER, VIEWPORT, page_path, wait_for_run

# The page's lines of text (main block and sidebar), figures' text included
LINES = r"""() => Array.from(document.querySelectorAll('[data-testid="stMain"], [data-testid="stSidebarUserContent"]'))
  .flatMap(e => e.innerText.split('\n')).map(l => l.trim()).filter(l => l)"""

# What each picker shows, and the option labels it offers (read after opening it where it is a list box)
SHOWN = r"""(sel) => Array.from(document.querySelectorAll(sel)).map(w => {
  const radio = w.querySelector('input[type=radio]:checked');
  if (w.dataset.testid === 'stRadio') return radio ? radio.closest('label').innerText.trim() : '';
  const input = w.querySelector('input[role=combobox]');
  if (w.dataset.testid === 'stMultiSelect') return w.innerText.split('\n').slice(1).join(' | ');
  return input ? input.value : '';
})"""


def settle(page, lang: str) -> None:
    wait_for_run(page)
    axe_helpers.wait_for_page_script(page, lang, PAGE_RUN_MS)
    page.wait_for_timeout(500)


def choose_in_list(page, box, nth: int) -> None:
    box.locator("input").first.click()
    page.keyboard.press("ArrowDown")  # opens the list
    page.get_by_role("option").nth(nth).click()
    page.keyboard.press("Escape")


def switch_to(page, name: str, lang: str) -> None:
    for attempt in range(3):  # a page still drawing may redraw the sidebar's list under the click
        try:
            box = page.locator('[data-testid="stSidebar"] [data-testid="stSelectbox"]').first
            box.locator("input").first.click()
            page.keyboard.press("ArrowDown")  # opens the list
            page.get_by_role("option", name=name).click(timeout=5000)
            break
        except Exception:
            if attempt == 2:
                raise
            page.keyboard.press("Escape")
            page.wait_for_timeout(1000)
    settle(page, lang)


# (link, picker's selector in the main block, how to choose: ('radio'|'list', nth option))
CASES = [
    ("/room", '[data-testid="stSelectbox"]:has(input[aria-label="Lesson"])', ("list", 2)),
    ("/lessons?lesson=scaling&lstep=3", '[data-testid="stRadio"]', ("radio", 1)),
    ("/lessons?lesson=masks&lstep=4", '[data-testid="stMultiSelect"]', ("list", 1)),
    ("/antecedents", '[data-testid="stSelectbox"]:has(input[aria-label^="Start from"])', ("list", 0)),
    (
        "/encoder-decoder?part=steps",
        '[data-testid="stSelectbox"]:has(input[aria-label^="Pick a held-out"])',
        ("list", 0),
    ),
]


def every_page(base: str, browser) -> int:
    """Each page opened in English and switched to Japanese, against the same link opened in Japanese: a line the
    switched page shows that the fresh one does not is the old language's (or state the switch left behind)."""
    stale = 0
    context = browser.new_context(viewport=VIEWPORT, locale="en-US")
    context.add_init_script(COUNT_RUNS)
    page, fresh = context.new_page(), context.new_page()
    for entry in PAGES_IN_TEST_ORDER:
        page.goto(f"{base}{page_path(entry)}?lang=en")
        settle(page, "en")
        switch_to(page, "日本語", "ja")
        page.wait_for_timeout(1500)
        switched = page.evaluate(LINES)
        link = urlparse(page.url)
        fresh.goto(f"{base}{link.path}?{link.query}")
        settle(fresh, "ja")
        fresh.wait_for_timeout(1500)
        left = [line for line in switched if line not in set(fresh.evaluate(LINES))]
        stale += bool(left)
        print(f"{'STALE' if left else 'ok   '} /{entry.url}: {left[:6]}", flush=True)
    return stale


def main() -> int:
    if "--pages" in sys.argv:
        with served_chromium() as (base, browser):
            return 1 if every_page(base, browser) else 0
    stale = 0
    with served_chromium() as (base, browser):
        context = browser.new_context(viewport=VIEWPORT, locale="en-US")
        context.add_init_script(COUNT_RUNS)
        page = context.new_page()
        for link, selector, (how, nth) in CASES:
            page.goto(base + link + ("&" if "?" in link else "?") + "lang=en")
            settle(page, "en")
            box = page.locator('[data-testid="stMain"] ' + selector).first
            if how == "radio":
                box.locator("label").nth(nth).click()
            else:
                if "aria-label" in selector:  # an example first, then back to one's own text
                    choose_in_list(page, box, 1)
                    settle(page, "en")
                choose_in_list(page, box, nth)
            page.wait_for_timeout(300)
            settle(page, "en")
            kind = selector.split(":has")[0]  # the picker by its place among its kind (its label is translated)
            place = page.evaluate(
                "([kind, sel]) => Array.from(document.querySelectorAll(kind)).indexOf(document.querySelector(sel))",
                ['[data-testid="stMain"] ' + kind, '[data-testid="stMain"] ' + selector],
            )
            before = page.evaluate(SHOWN, '[data-testid="stMain"] ' + kind)[place]
            switch_to(page, "日本語", "ja")
            after = page.evaluate(SHOWN, '[data-testid="stMain"] ' + kind)[place]
            latin = after and all(ord(c) < 0x3000 for c in after.replace(" | ", ""))
            bad = not after or (latin and after == before)
            stale += bad
            print(f"{'STALE' if bad else 'ok   '} {link}: en {before!r} -> ja {after!r}", flush=True)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
