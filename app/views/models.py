"""Your own model: add a folder (on a laptop) or see the host's list, read its capabilities from its config, what a
text of n tokens would cost, and how exactly the pages reproduce its attention (core/models/local.py)."""

import streamlit as st

from app import models, ui
from core.models import local, registry
from core.models.capabilities import capability_rows
from viz import models as figures


def add_folder(T) -> None:
    with st.form("add-folder"):
        path = st.text_input(T("folder"), max_chars=500, help=T("folder_help"))
        if st.form_submit_button(T("add")) and path.strip():
            try:
                key = registry.register_folder(path, remember=True)
            except ValueError as err:  # ModelFolderError: the reason in one sentence
                st.error(T("not_added"))
                st.text(str(err))  # the visitor's own path: plain text, never markdown
            else:
                st.success(T("added", name=models.name_in_text(key)))  # markdown: the name escaped


def page() -> None:
    T = ui.page_setup("models")
    st.title(T("title"))
    st.markdown(T("intro"))
    if registry.hosted():
        st.info(T("hosted", n=len(registry.FOLDERS)))
    else:
        add_folder(T)
    for problem in registry.USER_LIST_PROBLEMS:
        st.warning(T("list_problem"))
        st.text(problem)
    keys = list(registry.CAPABILITIES)
    if not keys:
        st.caption(T("none"))
        ui.page_end()
        return
    key = ui.select("pick", T("pick"), keys, keys[0], format_func=models.model_name)
    caps = registry.CAPABILITIES[key]
    rows = capability_rows(caps)
    st.subheader(T("capabilities"))
    st.dataframe({T("cap_field"): [T(f"cap_{name}") for name, _ in rows], T("cap_value"): [v for _, v in rows]})
    n = ui.number("tokens", T("tokens"), 1, 32768, 512)
    model = models.load(key) if ui.checkbox("check", T("check")) else None
    run = local.run_estimate(caps, n, model)  # the time needs the loaded model's measured pass
    st.caption(T("estimate", n=n, **run.memory.mib()))
    if run.seconds is not None:
        st.caption(T("time", n=n, seconds=run.seconds, d=caps.head_dim))
    if run.over:
        st.warning(T("over_budget"))
        st.caption(T(f"over_{run.over}", n=run.n_tokens, need=run.need, limit=run.limit))
    st.subheader(T("parity"))
    st.caption(T("parity_help"))
    if model is not None:
        fig = figures.parity_figure(model.parity, ui.texts("models.figure"))
        ui.show_figure(fig, f"parity-{key}", key="fig-parity")
    ui.page_end()
