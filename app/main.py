"""Attention Lab: one Streamlit app, one navigation, one page function per topic (app/catalog.py).

Run with `bash scripts/dev.sh run` (or `streamlit run app/main.py` inside the set-up venv).
"""

import streamlit as st

from app import catalog, serving, ui
from app.views.room import seated as room_seat


def sidebar() -> None:
    with st.sidebar:
        if "lang" not in st.session_state:
            raw = st.query_params.get("lang")
            st.session_state["lang"] = raw if raw in ui.LANGS else "en"
            st.session_state["_ui_bad_lang"] = raw is not None and raw not in ui.LANGS
        st.selectbox(ui.t("common", "language"), list(ui.LANGS), key="lang", format_func=ui.LANGS.get)
        st.query_params["lang"] = st.session_state["lang"]
        st.radio(ui.t("common", "figure_format"), ["png", "svg"], key="fig_format", horizontal=True)


def run() -> None:
    st.set_page_config(page_title="Attention Lab", page_icon=":material/visibility:", layout="wide")
    if not serving.admit():  # the server is full: a sentence, no page
        return
    try:
        sidebar()
        nav: dict[str, list] = {}
        for page in catalog.PAGES:
            nav.setdefault(ui.t("sections", page.section), []).append(catalog.streamlit_page(page))
        page = st.navigation(nav, expanded=True)  # every page listed (collapsed, the sidebar hides all but ~10)
        # a learner in a study room: the seat from the link, the room's panel, following the facilitator (/room)
        room_seat.sidebar(on_room_page=page.url_path == "room")
        with serving.page_slot():  # a bounded number of page runs at once: app/serving.py says why
            page.run()
    except Exception as err:  # one sentence for the visitor, the traceback in the server's log
        serving.unexpected(err)
    serving.after_run()  # torch threads, frozen heap, hosted lock-down: app/serving.py says why


run()
