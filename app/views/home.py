"""Landing page: what Attention Lab is, a live figure (/sdpa-steps' example), the study paths to start with (each a
link to /lessons at its first lesson, the path in the link), then what each page teaches."""

import itertools

import streamlit as st

from app import catalog, ui
from app.views.lessons import paths as study_paths
from app.views.lessons import progress
from app.views.lessons.text import label, plain, prose
from core import lessons as core


def paths(T) -> None:
    """The study paths, two a row (one above the other on a phone): a link to the path's first lesson, what it covers, its lessons."""
    try:
        lessons, declared = progress.load_lessons(), study_paths.load_paths()
    except core.LessonError:
        st.info(T("paths_unavailable"))
        return
    if not declared:
        return
    lang = ui.lang()
    st.header(T("paths"))
    st.caption(T("paths_about"))
    target = catalog.streamlit_page(catalog.BY_URL["lessons"])
    in_order = iter(declared.values())
    for row in itertools.zip_longest(in_order, in_order):  # two a row: a screen reader meets them in the file's order
        for column, path in zip(st.columns(2), filter(None, row)):
            with column.container(border=True):
                st.page_link(target, label=plain(label(path.title, lang)), icon=":material/route:",
                             query_params={"lesson": path.lessons[0], study_paths.PARAM: path.id})  # fmt: skip
                prose(path.about, lang)
                titles = " → ".join(label(lessons[x].title, lang) for x in path.lessons)
                st.caption(plain(T("path_lessons", n=len(path.lessons), titles=titles)))


def live_figure(T) -> None:
    """/sdpa-steps' example as that page starts (no model to load): the attention weights, drawn by the same core
    call and figure builder as the page and a lesson step, with a link to the page that changes them."""
    from app import step_views  # every page's module is imported for the navigation: the step views only here

    if step_views.show(core.Step("sdpa-steps", {}, {}, None), "home-figure"):
        st.page_link(catalog.streamlit_page(catalog.BY_URL["sdpa-steps"]), label=T("figure_link"))


def page() -> None:
    T = ui.page_setup("home")
    st.title(T("title"))
    st.markdown(T("intro"))
    live_figure(T)
    paths(T)
    st.header(T("pages"))
    for entry in catalog.PAGES[1:]:
        st.page_link(catalog.streamlit_page(entry))
        st.caption(ui.t(f"nav.{entry.topic}", "teaches"))
    ui.page_end()
