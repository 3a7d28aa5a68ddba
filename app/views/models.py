"""Your own model: add a folder (on a laptop run: kept in your session only) or see the operator's list, read its
capabilities from its config, what a text of n tokens would cost, and how exactly the pages reproduce its attention
(core/models/local.py). A hosted server (app/serving.py hosted) offers no folder box."""

import logging

import streamlit as st

from app import models, serving, ui
from core.models import local, registry
from core.models.capabilities import capability_rows
from viz import models as figures

LOG = logging.getLogger("attention_lab")
for _problem in registry.USER_LIST_PROBLEMS:  # the operator's paths go to the server's log (once per process)
    LOG.warning("models list: %s", _problem)


def add_folder(T) -> None:
    with st.form("add-folder"):
        path = st.text_input(T("folder"), max_chars=500, help=T("folder_help"))
        if st.form_submit_button(T("add")) and path.strip():
            try:
                key = models.add_own_folder(path)
            except ValueError as err:  # ModelFolderError: the reason in one sentence
                st.error(T("not_added"))
                st.text(str(err))  # the visitor's own path: plain text, never markdown
            else:
                st.success(T("added", name=models.name_in_text(key)))  # markdown: the name escaped


def page() -> None:
    T = ui.page_setup("models")
    st.title(T("title"))
    st.markdown(T("intro"))
    hosted = serving.hosted()
    if hosted:
        st.info(T("hosted", n=len(registry.FOLDERS)))
    else:
        add_folder(T)
    if registry.USER_LIST_PROBLEMS:
        st.warning(T("list_problem"))
        for problem in registry.USER_LIST_PROBLEMS if not hosted else ():  # the operator's paths: not to visitors
            st.text(problem)
    keys = list(models.own_keys())
    if not keys:
        st.caption(T("none"))
        ui.page_end()
        return
    key = ui.select("pick", T("pick"), keys, keys[0], format_func=models.model_name)
    caps = models.capabilities(key)
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
