"""/positions: how transformers know where a token is, one part at a time (a radio bound to the URL parameter
`part`), so each run computes only what is on screen. One module per part; the math is core.positions, the
figures viz.positions."""

import streamlit as st

from app import models, ui
from core.models import examples
from core.positions.state import STATE

from . import alibi, extrapolation, learned, relative, rope, sinusoidal

EXAMPLES_OPEN = "positions_examples_open"  # the session's: whether the table of example models is open
COLUMNS = ("examples_col_kind", "examples_col_where", "examples_col_models", "examples_col_app")
PARTS = {
    "sinusoidal": sinusoidal.part,
    "learned": learned.part,
    "relative": relative.part,
    "alibi": alibi.part,
    "rope": rope.part,
    "extrapolation": extrapolation.part,
}


def page() -> None:
    T = ui.page_setup("positions")
    st.title(T("title"))
    st.markdown(T("intro"))
    # drawn when opened (a rerun): the table reads transformers' default config of each family, and importing
    # transformers took 2 s of a fresh server's first /positions
    with st.expander(T("examples_title"), key=EXAMPLES_OPEN, on_change="rerun") as shown:
        if shown.open:
            models.show_examples(T, examples.position_table, COLUMNS, "examples_kind_", "examples_where_")
            st.caption(T("examples_note"))
    part = ui.field(STATE["part"], T("part"), widget="radio", format_func=lambda v: T(f"part_{v}"), horizontal=True)
    PARTS[part](T)
    ui.page_end()
