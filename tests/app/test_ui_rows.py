"""Metric cards, rows of widgets and checkbox labels, one rule each in app/ui.py: st.columns squeezed cards and
labels into any width, and a card or a label cut what did not fit ('Dropped assig…', 'Causal (each qu…' on an 800 px
tablet: scripts/phone_layout_check.py's cut text)."""

from streamlit.delta_generator import DeltaGenerator

from app import ui
from tests.apptest_helpers import function_app

MODEL_FREE = True  # its tests load no model: tests/conftest.py checks it


def _page():
    import streamlit as st

    from app import ui

    st.session_state.setdefault("_ui_params", set())  # as ui.page_setup leaves it
    ui.metrics([("Dropped assignments", "3 / 40", None), ("Formula, H_kv = 9 (multi-head)", "810.00 KiB", "why")])
    ui.checkbox("flag", "Causal (each query sees only earlier keys)")
    for i, block in enumerate(ui.widgets(3)):
        with block:
            st.slider(f"setting {i}", 0, 3)


def test_cards_and_widgets_stand_in_rows_the_browser_wraps_and_labels_wrap(monkeypatch):
    widths = []
    metric = DeltaGenerator.metric

    def metric_recorded(self, *args, **kwargs):
        widths.append(kwargs.get("width", "stretch"))
        return metric(self, *args, **kwargs)

    monkeypatch.setattr(DeltaGenerator, "metric", metric_recorded)
    # function_app waits 60 s for the run, as the other page tests do: AppTest's own default, 3 s, is ten times what
    # this run takes on an idle machine, and a CI worker shares 2 cores with chromium and the other worker (load 14)
    at = function_app(_page).run()
    assert not at.exception
    rows = [b for b in at.container if b.proto.flex_container.direction == b.proto.flex_container.HORIZONTAL]
    cards, settings = rows
    # each card as wide as its label and value, in a row that wraps onto more lines
    assert cards.proto.flex_container.wrap and [type(c).__name__ for c in cards.children.values()] == ["Metric"] * 2
    assert widths == ["content", "content"]
    assert at.metric[1].proto.help == "why"
    # each widget in a block of a fixed width (never squeezed), in a row that wraps
    assert settings.proto.flex_container.wrap
    blocks = list(settings.children.values())
    assert len(blocks) == 3 and {b.proto.width_config.pixel_width for b in blocks} == {ui.WIDGET_PX}
    assert [b.children[0].label for b in blocks] == ["setting 0", "setting 1", "setting 2"]
    # a checkbox's label wraps onto more lines where it does not fit (Streamlit's own choice in a column: cut)
    assert at.checkbox[0].proto.wrap is True


def _buttons():
    from app import ui

    row = ui.buttons()
    row.button("前のステップ")
    row.button("다음 단계")


def test_buttons_stand_in_a_row_the_browser_wraps_each_as_wide_as_its_label():
    at = function_app(_buttons).run()
    assert not at.exception
    (row,) = [b for b in at.container if b.proto.flex_container.direction == b.proto.flex_container.HORIZONTAL]
    assert row.proto.flex_container.wrap
    assert [c.label for c in row.children.values()] == ["前のステップ", "다음 단계"]


def _figures_in_columns(source: str) -> list[int]:
    """Lines of the `with` blocks of st.columns' columns (assigned, or looped over) that draw a figure, each name
    read as it is bound where the block opens."""
    import ast

    def is_columns(node) -> bool:
        calls = (c for c in ast.walk(node) if isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute))
        return any(c.func.attr == "columns" for c in calls)

    class Blocks(ast.NodeVisitor):
        def __init__(self):
            self.columns, self.found = set(), []

        def bind(self, targets, value):
            names = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
            self.columns = self.columns | names if is_columns(value) else self.columns - names

        def visit_FunctionDef(self, node):
            self.columns = set()
            self.generic_visit(node)

        def visit_Assign(self, node):
            self.bind(node.targets, node.value)
            self.generic_visit(node)

        def visit_For(self, node):
            self.bind([node.target], node.iter)
            self.generic_visit(node)

        def visit_With(self, node):
            names = [item.context_expr.id for item in node.items if isinstance(item.context_expr, ast.Name)]
            calls = [c for c in ast.walk(node) if isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute)]
            if set(names) & self.columns and any(c.func.attr in ("show_figure", "plotly_chart") for c in calls):
                self.found.append(node.lineno)
            self.generic_visit(node)

    blocks = Blocks()
    blocks.visit(ast.parse(source))
    return blocks.found


def test_figures_side_by_side_stand_in_blocks_of_their_own_width():
    """A figure in one of st.columns' columns is fitted for the browser's whole screen and drawn in whatever the
    columns leave: /flash-attention's tiles and partial output, fitted for a laptop's 640 px, were drawn 307, 397 and
    440 px wide at 1,100, 1,280 and 1,366 px windows (chromium: results/beside_rows_before.json), /positions' pairs
    alike. Figures side by side stand in ui.beside's blocks, fitted for their width, in a row the browser wraps."""
    from pathlib import Path

    assert _figures_in_columns("def p():\n    a, b = st.columns(2)\n    with a:\n        ui.show_figure(f)\n") == [3]
    assert _figures_in_columns("def p():\n    a, b = ui.beside(2)\n    with a:\n        ui.show_figure(f)\n") == []
    pages = Path(__file__).resolve().parents[2] / "app" / "views"
    drawn = {str(p.relative_to(pages)): _figures_in_columns(p.read_text(encoding="utf-8")) for p in pages.rglob("*.py")}
    assert {page: lines for page, lines in drawn.items() if lines} == {}
