"""Figure words come one way: a viz builder takes (view, words), and the words are the [<topic>.figure] catalog
section (`ui.texts("<topic>.figure")`), never the page's own T. Checked for every topic that has such a section,
so a topic is held to it as soon as its figure words move there."""

import ast
import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import plotly.colors
import pytest

import viz
from app import catalog, i18n

ROOT = Path(__file__).resolve().parents[1]
ENGLISH = i18n.catalog("en")
WITH_FIGURE_WORDS = [p.topic for p in catalog.PAGES if isinstance(ENGLISH.get(p.topic, {}).get("figure"), dict)]


def _page_files(topic: str) -> list[Path]:
    single = ROOT / "app" / "views" / f"{topic}.py"
    return [single] if single.is_file() else sorted((ROOT / "app" / "views" / topic).glob("*.py"))


def _viz_names(tree: ast.AST) -> set[str]:
    """Names a page module binds to viz modules (`from viz import x as y`, `import viz.x as y`)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "viz":
            names |= {a.asname or a.name for a in node.names}
        elif isinstance(node, ast.Import):
            names |= {a.asname for a in node.names if a.name.startswith("viz.") and a.asname}
    return names


@pytest.mark.parametrize("topic", WITH_FIGURE_WORDS)
def test_pages_hand_viz_the_figure_section_not_their_own_words(topic):
    for path in _page_files(topic):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        viz = _viz_names(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                owner = node.func.value
                if isinstance(owner, ast.Name) and owner.id in viz:
                    passed = [a.id for a in node.args if isinstance(a, ast.Name)]
                    assert "T" not in passed, f"{path.relative_to(ROOT)}:{node.lineno} hands the page's T to viz"


def test_the_five_view_rule_topics_have_figure_words():
    """The pages issue 24 moved to the view rule keep their figure words in [<topic>.figure]."""
    assert {"kv_cache", "transformer_xl", "logit_lens", "head_detectors", "ablation"} <= set(WITH_FIGURE_WORDS)


def _viz_functions():
    """Every function a viz module defines (its private helpers too: a default there reaches a figure just the same)."""
    for info in pkgutil.walk_packages(viz.__path__, "viz."):
        module = importlib.import_module(info.name)
        for name, function in inspect.getmembers(module, inspect.isfunction):
            if function.__module__ == module.__name__:
                yield f"{module.__name__}.{name}", function


COLOUR_SCALES = {name.lower() for name in plotly.colors.named_colorscales()}


def _words(default) -> list[str]:
    """The strings of a parameter's default that hold a word (two letters of any script in a row) and name no colour
    scale: a number format ('.3g'), a mark ('✕') or nothing ('') holds none."""
    strings = [default] if isinstance(default, str) else list(default) if isinstance(default, tuple | list) else []
    return [
        s
        for s in strings
        if isinstance(s, str) and re.search(r"[^\W\d_]{2}", s) and s.lower().removesuffix("_r") not in COLOUR_SCALES
    ]


def test_no_viz_builder_has_words_of_its_own():
    """A figure's words are the page's, in the reader's language: a builder's own default ('key token (columns)',
    'mean weight', 'chance', 'may attend') was English on a Japanese or Korean reader's figure wherever a caller left
    it out, as attention_heatmap's axes were on /positions' RoPE bands. The words are required arguments instead, so a
    caller that forgets one fails at once, in every test that draws its page."""
    found = [
        f"{name}({param.name}={param.default!r})"
        for name, function in _viz_functions()
        for param in inspect.signature(function).parameters.values()
        if param.default is not inspect.Parameter.empty and _words(param.default)
    ]
    assert found == []
