"""Attention Lab: one Streamlit app, one navigation, one page function per topic (app/catalog.py).

Run with `bash scripts/dev.sh run` (or `streamlit run app/main.py` inside the set-up venv).
"""

import json

from app import collector

with collector.paused():  # a fresh process's first run imports torch, pandas, plotly and every page here
    import streamlit as st

    from app import catalog, serving, ui
    from app.room import store as rooms
    from app.views.room import seated as room_seat


def sidebar() -> None:
    with st.sidebar:
        if "lang" not in st.session_state:
            raw = st.query_params.get("lang")
            st.session_state["lang"] = raw if raw in ui.LANGS else "en"
            st.session_state["_ui_bad_lang"] = raw is not None and raw not in ui.LANGS
        st.selectbox(ui.t("common", "language"), list(ui.LANGS), key="lang", format_func=ui.LANGS.get)
        st.query_params["lang"] = st.session_state["lang"]
        page_script()
        st.radio(ui.t("common", "figure_format"), ["png", "svg"], key="fig_format", horizontal=True)


# What Streamlit has no setting for, done by a few lines of script in the sidebar (every page keeps it; it runs
# again only when the language changes): the page's `lang` attribute follows the reader's choice, so a screen reader
# pronounces 日本語 and 한국어 as such (Streamlit's page says lang="en"); a code block that scrolls sideways can be
# reached by the keyboard (tabindex on its <pre>; Streamlit draws code blocks without, WCAG 2.1.1); the navigation's
# sections are lists of their pages (Streamlit puts each section's <div> straight into one <ul>, which screen
# readers announce as a broken list: the <ul> becomes a plain group, each section a list); a widget's "?" button,
# which Streamlit names "Help for <label>" in English whatever the page's language, is named in the reader's words
# (common.help_for, common.help_button; the label kept from Streamlit's name, so a language switch renames buttons
# Streamlit does not redraw). A MutationObserver mends what Streamlit redraws, and a name it sets again. (No "<"
# before a letter or "/" in the script: Streamlit's sanitizer drops a script whose text has one.)
PAGE_SCRIPT = """<script>
document.documentElement.lang = %s;
window.__labHelpWords = %s;
if (!window.__labCodeReachable) {
  window.__labCodeReachable = true;
  const nameHelp = button => {
    const said = button.getAttribute('aria-label');
    if (said !== button.dataset.labSaid) {  // Streamlit's own name: "Help for " and the label, or "Help" alone
      const streamlits = /^Help for ([\\s\\S]*)$/.exec(said);
      if (!streamlits && said !== 'Help') return;
      button.dataset.labLabel = streamlits ? streamlits[1] : '';
    }
    const label = button.dataset.labLabel, words = window.__labHelpWords;
    const name = label ? words.help_for.split('{label}').join(label) : words.help_button;
    button.dataset.labSaid = name;
    if (name !== said) button.setAttribute('aria-label', name);
  };
  window.__labMend = () => {
    document.querySelectorAll('[data-testid="stCode"] pre:not([tabindex])').forEach(pre => { pre.tabIndex = 0; });
    document.querySelectorAll('[data-testid="stSidebarNavItems"]:not([role])')
      .forEach(ul => ul.setAttribute('role', 'none'));
    document.querySelectorAll('[data-testid="stSidebarNavItems"] > :not(li):not([role])')
      .forEach(section => section.setAttribute('role', 'list'));
    document.querySelectorAll('[data-testid="stTooltipIcon"] button[aria-label]').forEach(nameHelp);
  };
  new MutationObserver(window.__labMend)
    .observe(document.body, {childList: true, subtree: true, attributes: true, attributeFilter: ['aria-label']});
}
window.__labMend();
</script>"""


# Streamlit colours code tokens from a fixed palette the theme cannot change, 2.5-3.5:1 on the light code background;
# these give each kind of token at least 4.5:1 there (the dark theme's tokens pass as they are).
LIGHT_CODE_TOKENS = """<style>
[data-testid="stCode"] pre code .token:is(.comment, .prolog, .doctype, .cdata, .punctuation, .unchanged) { color: #5c5f6b; }
[data-testid="stCode"] pre code .token:is(.string, .char, .attr-value, .boolean, .constant, .symbol, .inserted) { color: #0b6e2a; }
[data-testid="stCode"] pre code .token:is(.number, .regex) { color: #1c6b62; }
[data-testid="stCode"] pre code .token:is(.keyword, .tag, .function, .class-name, .selector) { color: #0b5cad; }
[data-testid="stCode"] pre code .token:is(.attr-name, .property, .variable) { color: #1d5f8a; }
[data-testid="stCode"] pre code .token:is(.operator, .entity, .decorator, .atrule) { color: #a24a00; }
[data-testid="stCode"] pre code .token:is(.deleted, .important) { color: #b3261e; }
[data-testid="stCode"] pre code .token.url { color: #6b3fa0; }
</style>"""


# Streamlit draws each page's name in the navigation on one line and cuts what the sidebar cannot hold with "…"
# (the whole name only in a tooltip, for a mouse): 9 English names lost their ends, more Japanese and Korean ones
# (26 double-width characters for /transformer-xl's). They wrap instead: Japanese by its own rules (no small kana
# or closing mark starting a line), Korean at its spaces, as Korean text is set.
NAV_NAMES_WRAP = """<style>
[data-testid="stSidebarNavLink"] :is(span, .stMarkdownEllipsis, .stMarkdownEllipsis p) {
  white-space: normal; text-overflow: clip; overflow-wrap: break-word; line-break: strict;
}
html:lang(ko) [data-testid="stSidebarNavLink"] :is(span, .stMarkdownEllipsis, .stMarkdownEllipsis p) {
  word-break: keep-all;
}
</style>"""


def help_words() -> str:
    """The words the page script names help buttons with, as a script literal ({label} stands for a widget's label)."""
    words = {key: ui.t("common", key, label="{label}") for key in ("help_button", "help_for")}
    return json.dumps(words, ensure_ascii=False).replace("<", "\\u003c")  # the sanitizer's rule, above


def page_script() -> None:
    light = st.context.theme.type != "dark"  # None before the browser has said: the default light theme
    st.html(
        PAGE_SCRIPT % (json.dumps(ui.lang()), help_words()) + NAV_NAMES_WRAP + (LIGHT_CODE_TOKENS if light else ""),
        unsafe_allow_javascript=True,
    )


def run() -> None:
    st.set_page_config(page_title="Attention Lab", page_icon=":material/visibility:", layout="wide")
    rooms.opening_passcode()  # none set: a hosted server agrees on one with its database at its first run, logs it
    if not serving.admit():  # the server is full: a sentence, no page
        return
    try:
        sidebar()
        lost = catalog.lost_address()  # before st.navigation, which would send Streamlit's English dialog
        page = st.navigation(
            catalog.navigation(), expanded=True
        )  # every page listed (collapsed, the sidebar hides all but ~10)
        # a learner in a study room: the seat from the link, the room's panel, following the facilitator (/room)
        room_seat.sidebar(page)
        if lost:
            st.warning(ui.t("common", "no_such_page"))
        with serving.page_slot():  # a bounded number of page runs at once: app/serving.py says why
            page.run()
    except Exception as err:  # one sentence for the visitor, the traceback in the server's log
        serving.unexpected(err)
    serving.after_run()  # torch threads, frozen heap, hosted lock-down: app/serving.py says why


with serving.script_run():  # its garbage collected once no other run is in flight: app/serving.py says why
    run()
