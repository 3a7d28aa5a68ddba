"""Every page in the navigation runs headless without an exception, also with hostile input and links."""
import ast
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from app import catalog, ui

ROOT = Path(__file__).resolve().parents[1]
MAIN = str(ROOT / "app" / "main.py")
HOSTILE_TEXTS = {
    "empty": "",
    "huge": "The cat sat on the mat because it was tired. " * 450,   # ~20,000 characters
    "emoji": "The 🐱 sat on the 🧶 because it was 😴. 👍🏽👨‍👩‍👧",
    "cjk": "猫はマットの上に座った。なぜなら疲れていたからだ。我爱自然语言处理。",
    "korean": "고양이가 매트 위에 앉았다. 왜냐하면 피곤했기 때문이다.",
    "script": "<script>alert(1)</script> {{7*7}} <img src=x onerror=alert(2)>",
}
PAGE_URLS = [p["url"] for p in catalog.PAGES]


def run_page(url: str, query: dict | None = None, timeout: float = 120) -> AppTest:
    at = AppTest.from_file(MAIN, default_timeout=timeout)
    for k, v in (query or {}).items():
        at.query_params[k] = v
    at.run()
    page = next(p for p in catalog.PAGES if p["url"] == url)
    if url != "home":
        at.switch_page(f"pages/{page['file']}")
        at.run()
    return at


def assert_no_exception(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


@pytest.mark.parametrize("url", PAGE_URLS)
def test_page_runs(url):
    assert_no_exception(run_page(url))


@pytest.mark.parametrize("url", PAGE_URLS)
@pytest.mark.parametrize("kind", list(HOSTILE_TEXTS))
def test_page_survives_hostile_text(url, kind):
    at = run_page(url)
    if not at.text_area:
        pytest.skip("page has no text input")
    for area in at.text_area:
        area.set_value(HOSTILE_TEXTS[kind])
    at.run()
    assert_no_exception(at)
    shown = " ".join(str(m.value) for m in at.markdown)
    assert "<script>" not in shown or "&lt;script" in shown or "`" in shown


@pytest.mark.parametrize("url", PAGE_URLS)
def test_page_ignores_hostile_link_parameters(url):
    at = run_page(url, {"lang": "xx", "<script>": "1", "head": "-5", "layer": "99999999999999999999"})
    assert_no_exception(at)
    notices = " ".join(w.value for w in at.warning)
    assert "<script>" in notices or "lang" in notices


def _text_tables(path: Path) -> dict:
    """Every TEXT-like dict literal (a name in capitals bound to {key: {lang: str}}) in a page module."""
    tables = {}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            if name.isupper() and isinstance(node.value, ast.Dict):
                try:
                    value = ast.literal_eval(node.value)
                except ValueError:
                    continue
                if value and all(isinstance(v, dict) and "en" in v for v in value.values()):
                    tables[f"{path.name}:{name}"] = value
    return tables


def test_every_text_exists_in_every_language():
    tables = {}
    for path in sorted((ROOT / "app").rglob("*.py")):
        tables.update(_text_tables(path))
    tables["catalog.SECTIONS"] = catalog.SECTIONS
    tables["ui.COMMON"] = ui.COMMON
    for page in catalog.PAGES:
        tables[f"catalog:{page['url']}"] = {"title": page["title"], "teaches": page["teaches"]}
    assert len(tables) >= 3
    missing = [(t, k, lang) for t, table in tables.items() for k, entry in table.items()
               for lang in ui.LANGS if not str(entry.get(lang, "")).strip()]
    assert not missing, missing


def test_language_switch_changes_the_page():
    at = run_page("home", {"lang": "ja"})
    assert_no_exception(at)
    shown = " ".join(s.value for s in at.subheader) + " ".join(m.value for m in at.markdown)
    assert "ページ" in shown and "Pages" not in shown
