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
