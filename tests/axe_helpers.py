"""axe-core (vendored in tests/axe/) run on a page open in chromium: what the browser tests check for accessibility.

A page passes when axe finds no serious or critical violation of WCAG 2.1 A/AA, Streamlit's own markup included
(what the app cannot mend there is moderate or minor, and listed in the README's known limits), and no
heading-order or empty-table-header violation (moderate and minor, but the app's own headings and tables: mended).
"""

from __future__ import annotations

import json
from pathlib import Path

AXE = Path(__file__).resolve().parent / "axe" / "axe.min.js"
SERIOUS = ("critical", "serious")
MENDED = ("heading-order", "empty-table-header")  # best-practice rules, enabled beside the WCAG tags
# app/main.py's page script has run: it sets the document's language and mends Streamlit's navigation lists and
# code blocks. A page whose run has finished can still be drawing its sidebar, where that script lives.
PAGE_SCRIPT_RAN = "lang => window.__labCodeReachable === true && document.documentElement.lang === lang"


def figure_states() -> dict[str, dict[str, str]]:
    """Per page (its catalog url), the query parameters of a state reached after input, with a figure: the first
    lesson step that opens the page at a state (the link a learner follows), and /lessons at the first step with a
    question, answered (its figure drawn open, the answer judged). The landing page and /room, which no lesson opens
    at a state, are absent: their default state is the one checked."""
    from core.lessons import load_lessons

    states: dict[str, dict[str, str]] = {}
    for lesson in load_lessons().values():
        for i, step in enumerate(lesson.steps):
            if step.state:
                states.setdefault(step.page, dict(step.state))
            if step.question is not None and "lessons" not in states:
                states["lessons"] = {"lesson": lesson.id, "lstep": str(i + 1), f"a.{step.question.id}": "1"}
    return states


def wait_for_page_script(page, lang: str, timeout_ms: float) -> None:
    page.wait_for_function(PAGE_SCRIPT_RAN, arg=lang, timeout=timeout_ms, polling=100)


def violations(page) -> list[dict]:
    """axe's serious and critical violations of WCAG 2.1 A/AA on the page as drawn, and any heading-order or
    empty-table-header, with the elements they name."""
    page.add_script_tag(path=str(AXE))
    return page.evaluate(
        """async ([serious, mended]) => {
          const r = await axe.run(document, {
            runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']},
            rules: Object.fromEntries(mended.map(id => [id, {enabled: true}])), resultTypes: ['violations']});
          return r.violations.filter(v => serious.includes(v.impact) || mended.includes(v.id)).map(v => ({
            id: v.id, impact: v.impact, nodes: v.nodes.map(n => ({target: n.target.join(' '),
              html: n.html.slice(0, 160), summary: (n.failureSummary || '').slice(0, 300)}))}));
        }""",
        [list(SERIOUS), list(MENDED)],
    )


def report(found: list[dict]) -> str:
    return json.dumps(found, ensure_ascii=False, indent=1)
