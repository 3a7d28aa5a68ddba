"""The house rules, checked: one name per topic in every layer, one direction of flow, thin pages."""

import ast
import re
from pathlib import Path

import pytest

from app import catalog

ROOT = Path(__file__).resolve().parents[1]
TOPICS = [p.topic for p in catalog.PAGES if p.topic != "home"]  # the landing page has no math of its own


def _exists(folder: str, topic: str) -> bool:
    return (ROOT / folder / f"{topic}.py").is_file() or (ROOT / folder / topic / "__init__.py").is_file()


@pytest.mark.parametrize("topic", TOPICS)
def test_a_topic_has_one_name_in_every_layer(topic):
    assert _exists("app/views", topic), f"page app/views/{topic}"
    assert _exists("core", topic), f"math core/{topic}"
    assert _exists("viz", topic), f"figures viz/{topic}"
    assert list((ROOT / "tests").rglob(f"test_{topic}*.py")), f"tests tests/test_{topic}*.py"


@pytest.mark.parametrize("topic", TOPICS)
def test_the_readme_topic_table_names_each_layer(topic):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    url = topic.replace("_", "-")
    row = next((line for line in readme.splitlines() if line.startswith(f"| `/{url}`")), None)
    assert row, f"README topic table has no row for /{url}"
    assert f"core/{topic}" in row and f"viz/{topic}.py" in row and f"test_{topic}" in row, row


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_core_is_pure_and_viz_draws_only():
    core = {str(p.relative_to(ROOT)): _imports(p) & {"streamlit", "plotly", "app", "viz"}
            for p in (ROOT / "core").rglob("*.py")}  # fmt: skip
    assert not {k: v for k, v in core.items() if v}
    viz = {str(p.relative_to(ROOT)): _imports(p) & {"streamlit", "app"} for p in (ROOT / "viz").rglob("*.py")}
    assert not {k: v for k, v in viz.items() if v}


def test_pages_are_thin():
    """A page file reads widgets and calls core and viz: no torch, about 200 lines at most."""
    for path in (ROOT / "app" / "views").rglob("*.py"):
        lines = len(path.read_text(encoding="utf-8").splitlines())
        assert lines <= 220, f"{path.relative_to(ROOT)} has {lines} lines"
        assert "torch" not in _imports(path), f"{path.relative_to(ROOT)} imports torch"


ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.MatMult)


def _builds_text(node: ast.AST, text_names: set[str]) -> bool:
    """Is this operand text: a string or f-string literal, a module-level name bound to one, or a `+` or
    conditional expression with such a part?"""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _builds_text(node.left, text_names) or _builds_text(node.right, text_names)
    if isinstance(node, ast.IfExp):
        return _builds_text(node.body, text_names) or _builds_text(node.orelse, text_names)
    return isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Name) and node.id in text_names)


def _page_arithmetic(source: str) -> list[str]:
    """The numeric arithmetic (+ - * / // % ** @, also augmented) in a page's source, as 'line: expression'.
    The one allowance is presentation: a `+` that builds text, and adding or taking 1 (a 0-based index shown 1-based,
    a last step n - 1, a button's step ± 1, a counter). Any other number a page shows is a field of its core view."""
    tree = ast.parse(source)
    text_names = {t.id for node in tree.body if isinstance(node, ast.Assign) and _builds_text(node.value, set())
                  for t in node.targets if isinstance(t, ast.Name)}  # fmt: skip
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp):
            left, right = node.left, node.right
        elif isinstance(node, ast.AugAssign):
            left, right = node.target, node.value
        else:
            continue
        if not isinstance(node.op, ARITHMETIC):
            continue  # | & ^ << >>: type unions, dict and set merges
        if isinstance(node.op, (ast.Add, ast.Sub)) and any(
            isinstance(side, ast.Constant) and side.value == 1 and type(side.value) is int for side in (left, right)
        ):
            continue
        if isinstance(node.op, ast.Add) and (_builds_text(left, text_names) or _builds_text(right, text_names)):
            continue
        found.append((node.lineno, node.col_offset, f"{node.lineno}: {ast.get_source_segment(source, node)}"))
    return [text for *_, text in sorted(found)]


REDUCTIONS = {"sum", "min", "max", "abs", "round", "mean", "median", "prod", "std", "var"}


def _page_reductions(source: str) -> list[str]:
    """The numbers a page would compute with a builtin or a method reduction (sum, min, max, abs, round, and numpy's
    or a list's mean/median/prod/std/var), as 'line: call'. Two allowances, both presentation:
    - min(level, <int>) inside an f-string: it picks a text key (the hint ladder's label, T(f"hint_{min(i, 2)}")),
      never a number the page shows;
    - round(x, <int>): a table cell's x to a fixed number of digits, as a format spec {x:.3f} does in text (a
      dataframe cell takes a number, not a formatted string, so it can still sort); x is the view's own number.
    Counting with len() is a count of what the view holds; len() in arithmetic is _page_arithmetic's."""
    tree = ast.parse(source)
    in_fstring = {id(n) for f in ast.walk(tree) if isinstance(f, ast.JoinedStr) for n in ast.walk(f)}
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
        if name not in REDUCTIONS:
            continue
        digits = len(node.args) == 2 and isinstance(node.args[1], ast.Constant) and type(node.args[1].value) is int
        if isinstance(func, ast.Name) and name == "min" and digits and id(node) in in_fstring:
            continue
        if isinstance(func, ast.Name) and name == "round" and digits:
            continue
        found.append((node.lineno, node.col_offset, f"{node.lineno}: {ast.get_source_segment(source, node)}"))
    return [text for *_, text in sorted(found)]


def test_pages_do_no_arithmetic():
    """A page passes its view's fields to T() and viz: a number it shows is computed in core, next to the others,
    where a test can check it (see _page_arithmetic and _page_reductions for their allowances)."""
    found = {
        str(path.relative_to(ROOT)): _page_arithmetic(text) + _page_reductions(text)
        for path in sorted((ROOT / "app" / "views").rglob("*.py"))
        for text in [path.read_text(encoding="utf-8")]
    }
    assert not {k: v for k, v in found.items() if v}
    flagged = _page_arithmetic("x = 'step_' + name + f'{n}'\ni = n - 1\ngap = PAPER - count / 1e6\nr = a / b\nn += k")
    assert flagged == ["3: PAPER - count / 1e6", "3: count / 1e6", "4: a / b", "5: n += k"]
    flagged = _page_reductions(
        "T(f'hint_{min(i, 2)}')\ncell = round(x, 3)\nT('k', lo=min(kv), n=sum(c.values()))\nT(f'{max(a, 2)}')\n"
        "m = round(x)\ntop = np.max(w)\nd = abs(a)\ns = w.mean()\nshown = min(i, 2)"
    )
    assert flagged == ["3: min(kv)", "3: sum(c.values())", "4: max(a, 2)", "5: round(x)", "6: np.max(w)",
                       "7: abs(a)", "8: w.mean()", "9: min(i, 2)"]  # fmt: skip


def test_every_page_module_defines_its_page_function():
    for topic in [p.topic for p in catalog.PAGES]:
        module = (
            ROOT
            / "app"
            / "views"
            / (f"{topic}.py" if (ROOT / "app/views" / f"{topic}.py").is_file() else f"{topic}/__init__.py")
        )
        assert re.search(r"^def page\(\)", module.read_text(encoding="utf-8"), re.M), topic


def test_test_files_have_unique_names():
    """tests/ has no __init__.py: pytest imports each test file by its base name, so two files of one name in
    tests/core and tests/viz collide (an "import file mismatch" at collection)."""
    names = [p.name for p in (ROOT / "tests").rglob("test_*.py")]
    assert sorted({n for n in names if names.count(n) > 1}) == []


def test_every_viz_module_has_a_test_of_its_own():
    """viz/<name>.py is read back by tests/viz/test_<name>*.py; viz/positions/<name>.py by test_positions_<name>*.py."""
    missing = []
    for path in sorted((ROOT / "viz").rglob("*.py")):
        if path.name != "__init__.py":
            stem = "_".join(path.relative_to(ROOT / "viz").with_suffix("").parts)
            if not list((ROOT / "tests" / "viz").glob(f"test_{stem}*.py")):
                missing.append(str(path.relative_to(ROOT)))
    assert not missing, missing


# A wrapper's transformers module or tokenizer reached from outside the contract: `x.model.y`, `x.model(...)`,
# `x.tokenizer`, `model.model`.
REACH_INTO_A_MODEL = re.compile(r"\.model\.|\.model\(|\.tokenizer\b|\bmodel\.model\b")


def test_only_core_models_touches_transformers():
    """core/models is the model contract: nothing else imports transformers (or its tokenizers or hub packages) or
    reaches through a wrapper into the module or tokenizer it wraps. (safetensors is a file format: the GRU of
    /rnn-attention, our own torch module, is saved with it.)"""
    hf = {"transformers", "tokenizers", "huggingface_hub"}
    found = {}
    for folder in ("core", "app", "viz"):
        for path in (ROOT / folder).rglob("*.py"):
            name = str(path.relative_to(ROOT))
            if name.startswith("core/models/"):
                continue
            imported = _imports(path) & hf
            reached = [line.strip() for line in path.read_text(encoding="utf-8").splitlines()
                       if REACH_INTO_A_MODEL.search(line.split("#")[0])]  # fmt: skip
            if imported or reached:
                found[name] = sorted(imported) + reached
    assert not found, found


# app's own modules outside app/views (a name core/ or viz/ also uses belongs to that layer's tests)
APP_MODULES = sorted(
    name
    for name in [p.stem for p in (ROOT / "app").glob("*.py")]
    + [p.parent.name for p in (ROOT / "app").glob("*/__init__.py")]
    if name not in ("__init__", "views") and not _exists("core", name) and not _exists("viz", name)
)


def _drives_the_app(path: Path) -> bool:
    return bool({"tests.apptest_helpers", "streamlit.testing.v1"} & _modules_imported(path))


def _modules_imported(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
    return names


def test_the_tests_of_apps_own_modules_live_in_tests_app():
    """tests/app mirrors app's modules outside app/views: a test file named after one (test_serving*.py) is there."""
    elsewhere = [
        str(path.relative_to(ROOT))
        for name in APP_MODULES
        for path in (ROOT / "tests").rglob(f"test_{name}*.py")
        if path.parent.name != "app" and re.fullmatch(rf"test_{name}(_\w+)?\.py", path.name)
    ]
    assert "serving" in APP_MODULES and "i18n" in APP_MODULES and "models" not in APP_MODULES
    assert not elsewhere, elsewhere


def test_a_test_that_opens_a_page_is_a_page_test_and_slow_unless_model_free():
    """Opening the app headless is a page test's: one in tests/pages or tests/app is marked slow by tests/conftest.py
    unless its module says MODEL_FREE = True (then a model load fails it); a whole-app test at the top of tests/
    says one of the two itself; tests/core and tests/viz open none (their pages' tests go to tests/pages)."""
    unmarked, misplaced = [], []
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        if not _drives_the_app(path):
            continue
        name, folder = str(path.relative_to(ROOT)), path.parent.relative_to(ROOT).as_posix()
        if folder in ("tests/core", "tests/viz"):
            misplaced.append(name)
        elif folder == "tests" and not re.search(
            r"^(pytestmark = pytest\.mark\.slow|MODEL_FREE = True)", path.read_text(encoding="utf-8"), re.M
        ):
            unmarked.append(name)
    assert not unmarked, unmarked
    assert not misplaced, misplaced
