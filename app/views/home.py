"""Landing page: what Attention Lab is and what each page teaches."""

import streamlit as st

from app import catalog, ui


def page() -> None:
    T = ui.page_setup("home")
    st.title(T("title"))
    st.markdown(T("intro"))
    st.header(T("pages"))
    for entry in catalog.PAGES[1:]:
        st.page_link(catalog.streamlit_page(entry))
        st.caption(ui.t(f"nav.{entry.topic}", "teaches"))
    ui.page_end()
