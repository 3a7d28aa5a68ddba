"""Attention Lab: one Streamlit app, one navigation, one page per topic.

Run with `bash scripts/dev.sh run` (or `streamlit run app/main.py` inside the set-up venv).
"""
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")          # weights come from installed packages, never a hub
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # `streamlit run app/main.py` from a checkout

import streamlit as st  # noqa: E402

from app import catalog, ui  # noqa: E402

# Not "pages/": next to the main script Streamlit treats a pages/ folder as its old file-name navigation, and on a
# fresh server a direct link (/attention) then hits "Page not found" before st.navigation has run.
HERE = Path(__file__).parent / "views"


def sidebar() -> None:
    with st.sidebar:
        if "lang" not in st.session_state:
            raw = st.query_params.get("lang")
            st.session_state["lang"] = raw if raw in ui.LANGS else "en"
            st.session_state["_ui_bad_lang"] = raw is not None and raw not in ui.LANGS
        st.selectbox(ui.tr(ui.COMMON, "language"), list(ui.LANGS), key="lang", format_func=ui.LANGS.get)
        st.query_params["lang"] = st.session_state["lang"]
        st.radio(ui.tr(ui.COMMON, "figure_format"), ["png", "svg"], key="fig_format", horizontal=True)


def main() -> None:
    st.set_page_config(page_title="Attention Lab", page_icon=":material/visibility:", layout="wide")
    sidebar()
    nav: dict[str, list] = {}
    for page in catalog.PAGES:
        section = ui.tr(catalog.SECTIONS, page["section"])
        nav.setdefault(section, []).append(
            st.Page(str(HERE / page["file"]), title=page["title"].get(ui.lang(), page["title"]["en"]),
                    icon=page["icon"], url_path=page["url"], default=page["url"] == "home"))
    st.navigation(nav).run()


main()
