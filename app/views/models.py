"""Your own model: add a folder (on a laptop run: kept in your session only) or see the operator's list, read its
capabilities from its config, what a text of n tokens would cost, and how exactly the pages reproduce its attention
(core/models/local.py). A hosted server (app/serving.py hosted) offers no folder box."""

import logging
from types import SimpleNamespace

import streamlit as st

from app import models, serving, ui
from core.kv_cache.memory import model_cache_bytes
from core.models import local, registry
from core.models.capabilities import capability_rows
from core.models.needs import pages_for
from core.models.state import STATE as F
from core.models.state import offered
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
                st.text(models.reason_words(err))  # the visitor's own path: plain text, never markdown
            else:
                st.success(T("added", name=models.name_in_text(key)))  # markdown: the name escaped


def page() -> None:
    T = ui.page_setup("models")
    st.title(T("title"))
    st.markdown(T("intro"))
    hosted = serving.hosted()
    if hosted:
        st.info(T("hosted", n=len(registry.folders())))
    else:
        add_folder(T)
    if registry.USER_LIST_PROBLEMS:
        st.warning(T("list_problem"))
        for problem in registry.USER_LIST_PROBLEMS if not hosted else ():  # the operator's paths: not to visitors
            st.text(problem)
    own = models.own_keys()
    if not own:
        st.caption(T("none"))
    key = ui.field(F["pick"], T("pick"), SimpleNamespace(models=offered(own)), format_func=models.model_name)
    caps = models.capabilities(key)
    if caps is None:  # a shipped model whose config cannot be read here (its package is missing)
        message = models.words_about(key, models.reason_words(registry.model_status().get(key) or "?"))
        st.warning(ui.t("models", "missing", name=models.name_in_text(key), message=message))
    else:
        describe(T, key, caps)
    ui.page_end()


def describe(T, key: str, caps) -> None:
    """What the contract reports for the picked model, what a text of n tokens would cost, and (a learner's folder,
    loaded on request) how exactly the pages reproduce its attention."""
    rows = capability_rows(caps, T)
    st.header(T("capabilities"))
    ui.table({T("cap_field"): [T(f"cap_{name}") for name, _ in rows], T("cap_value"): [v for _, v in rows]})
    st.markdown(T("pages", pages=" · ".join(f"/{page}" for page in pages_for(caps))))
    n = ui.field(F["tokens"], T("tokens"), widget="number")
    own = models.is_own(key)  # a shipped model is checked by the test suite, not on the page
    model = models.load(key) if own and ui.field(F["check"], T("check")) else None
    run = local.run_estimate(caps, n, model)  # the time needs the loaded model's measured pass
    st.caption(T("estimate", n=n, **run.memory.mib()))
    cache = model_cache_bytes(caps, n)
    st.markdown(T("no_cache") if cache is None else T("cache", n=n, bytes=cache))
    if run.seconds is not None:
        st.caption(T("time", n=n, seconds=run.seconds, d=caps.head_dim, timed=local.TIMED_TOKENS))
    if run.over:
        st.warning(T("over_budget"))
        st.caption(T(f"over_{run.over}", n=run.n_tokens, need=run.need, limit=run.limit))
    if own:
        st.header(T("parity"))
        st.caption(T("parity_help"))
        if model is not None:
            fig = figures.parity_figure(model.parity, ui.texts("models.figure"))
            ui.show_figure(fig, f"parity-{key}", key="fig-parity")
