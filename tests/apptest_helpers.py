"""Driving the real app (app/main.py with its navigation) headless, as every page test does."""

from __future__ import annotations

import base64
import functools
import html
import itertools
import json
import re
from pathlib import Path
from typing import NamedTuple

import numpy as np
from streamlit.testing.v1 import AppTest, local_script_runner
from streamlit.util import calc_hash

from app import ui

MAIN = str(Path(__file__).resolve().parents[1] / "app" / "main.py")


def wait_for_the_run(runner: local_script_runner.LocalScriptRunner, timeout: float = 3) -> None:
    """AppTest's wait for a run, without its poll: Streamlit's require_widgets_deltas woke every millisecond to look
    for the run's end, and each wake took the GIL from the script thread doing the page's work (a page test spent
    a sixth more CPU so). The run ends with its thread, so this waits on the thread; a run past `timeout` is
    stopped and fails as Streamlit's does."""
    thread = runner._script_thread
    if thread is not None:
        thread.join(timeout)
    if runner.script_stopped():
        return
    runner.request_stop()
    runner.join()
    raise RuntimeError(f"AppTest script run timed out after {timeout}(s)")


local_script_runner.require_widgets_deltas = wait_for_the_run  # what LocalScriptRunner.run calls, by this name


def switch_to(at: AppTest, topic: str) -> AppTest:
    """Go to the page of `topic` (its module name or its URL, e.g. 'padded_batch' or 'padded-batch').

    Pages are functions (st.Page(callable, url_path=...)), so AppTest.switch_page, which matches page files, cannot
    find them; this picks the page that st.navigation registered under the topic's URL, as a browser link would."""
    url = topic.removesuffix(".py").replace("_", "-")
    hashes = [h for h, info in at._registered_pages.items() if info.get("url_pathname") == url]
    assert hashes, f"no page at /{url}"
    at._page_hash = hashes[0]
    return at


@functools.cache
def _installed_components():
    """Streamlit's registry of the custom components installed (none that the app uses), found once per process."""
    from streamlit.components.v2.component_manager import BidiComponentManager

    manager = BidiComponentManager()
    manager.discover_and_register_components(start_file_watching=False)
    return manager


def _with_shared_components(at: AppTest) -> AppTest:
    """Streamlit 1.67's AppTest makes a registry of installed custom components for each app it opens, reading every
    installed package's metadata to fill it: 80 ms, most of what opening a light page costs, for the same answer
    each time. A server keeps one registry for all its sessions; so do the tests (where a later AppTest keeps it
    elsewhere, it finds its own as before)."""
    if getattr(at, "_bidi_component_manager", False) is None:
        at._bidi_component_manager = _installed_components()
    return at


def new_app(timeout: float = 180) -> AppTest:
    """The app (app/main.py), not run yet."""
    return _with_shared_components(AppTest.from_file(MAIN, default_timeout=timeout))


def function_app(script, timeout: float = 60) -> AppTest:
    """A test's own script (a function, as AppTest.from_function takes it), not run yet."""
    return _with_shared_components(AppTest.from_function(script, default_timeout=timeout))


def run_view(topic: str, params: dict | None = None, state: dict | None = None, timeout: float = 180) -> AppTest:
    """Open the page of `topic` as a link to it does: the session's first run is that page, with the link's query
    parameters (and session state) in place. The app reads some of them on a session's first run only (`lang`): a
    first run on the landing page, then a switch, would show the page in English whatever the link says."""
    at = new_app(timeout)
    url = topic.removesuffix(".py").replace("_", "-")
    if url != "home":
        at._page_hash = calc_hash(url)  # the hash st.Page gives its url_path: what a browser's /url asks for
    for k, v in (state or {}).items():
        at.session_state[k] = v
    for k, v in (params or {}).items():
        at.query_params[k] = v
    at.run()
    if url != "home" and at._registered_pages:  # (a run stopped before the navigation registers no pages)
        assert at._finished_page_script_hash == at._page_hash, f"no page at /{url}"
    return at


def assert_no_exception(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def open_view(topic: str, params: dict | None = None, state: dict | None = None, timeout: float = 180) -> AppTest:
    """run_view, and the page must have run without an exception."""
    at = run_view(topic, params, state, timeout)
    assert_no_exception(at)
    return at


def shown_text(at: AppTest) -> str:
    """Everything the page wrote as text: markdown, captions and alerts."""
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption] + [e.value for e in at.error]
    parts += [i.value for i in at.info] + [s.value for s in at.success] + [w.value for w in at.warning]
    return "\n".join(str(p) for p in parts)


def figure_bytes(at: AppTest) -> int:
    """Bytes of plotly JSON the page sends to the browser."""
    return sum(len(e.proto.spec) for e in at.get("plotly_chart"))


def plotted_values(value) -> np.ndarray:
    """A data array of a sent figure as numbers: plotly sends numpy arrays as {"dtype", "bdata" (base64)}."""
    if isinstance(value, dict) and "bdata" in value:
        array = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
        if "shape" not in value:
            return array
        shape = value["shape"]  # plotly writes it as "42, 8" (a string), or a list
        dims = [int(s) for s in shape.split(",")] if isinstance(shape, str) else list(shape)
        return array.reshape(dims)
    return np.asarray(value, dtype=np.float64)


def figure_traces(at: AppTest, index: int) -> list[dict]:
    """The traces of the index-th figure on the page, as the browser receives them."""
    return json.loads(at.get("plotly_chart")[index].proto.spec)["data"]


def send_raw(widget, **value):
    """Make `widget` send, on the next run, exactly the WidgetState field given (e.g. string_value="999"), as a
    crafted websocket message or a frontend quirk could: AppTest's own setters only send valid options."""
    from streamlit.proto.WidgetStates_pb2 import WidgetState

    class Raw(type(widget)):
        @property
        def _widget_state(self):
            ws = WidgetState(id=self.id)
            for field, v in value.items():
                setattr(ws, field, v)
            return ws

    widget.__class__ = Raw
    return widget


def run_fragment(at: AppTest, name: str) -> AppTest:
    """Rerun only the fragment whose function is called `name` (with the widgets' current values), as a browser
    does when a widget inside an st.fragment changes: the rest of the page, other fragments included, does not run."""
    from unittest import mock

    from streamlit.testing.v1 import local_script_runner

    def function_name(fragment) -> str:
        cells = dict(zip(fragment.__code__.co_freevars, fragment.__closure__ or ()))
        return getattr(cells["non_optional_func"].cell_contents, "__name__", "")

    ids = [fid for fid, f in at._fragment_storage._fragments.items() if function_name(f) == name]
    assert ids, f"no fragment {name} on the page"
    rerun_data = local_script_runner.RerunData

    def scoped(**kwargs):
        return rerun_data(**kwargs, fragment_id_queue=ids)

    with mock.patch.object(local_script_runner, "RerunData", scoped):
        return at.run()


def figure_by_key(at: AppTest, key: str) -> dict:
    """The figure the page drew with show_figure(..., key=key), as the browser receives it (data and layout)."""
    charts = [e for e in at.get("plotly_chart") if e.proto.id.endswith(f"-{key}")]
    assert charts, f"no figure {key!r} on the page"
    return json.loads(charts[0].proto.spec)


class ShownFigure(NamedTuple):
    """A figure as the page shows it: its title and subtitle, read from the page's text above it (app/ui.py sets
    them there, where the browser wraps them; the figure is sent without), its chart's element id, what was sent."""

    title: str
    subtitle: str
    id: str
    figure: dict


def _read(markup: str) -> str:
    """Page HTML as read: line breaks as spaces, tags dropped, entities decoded."""
    return html.unescape(re.sub(r"<[^>]*>", "", markup.replace("<br>", " ")))


def shown_figures(at: AppTest) -> list[ShownFigure]:
    """Every figure on the page in order, each with the title set just above it ('' where none is)."""
    from streamlit.testing.v1.element_tree import Block

    shown, above = [], None

    def walk(node) -> None:
        nonlocal above
        if isinstance(node, Block):
            for index in sorted(node.children):
                walk(node.children[index])
            return
        if node.type == "plotly_chart":
            found = FIGURE_TITLE.fullmatch(above.value) if above is not None else None
            title, subtitle = (found.group("title"), found.group("subtitle") or "") if found else ("", "")
            shown.append(ShownFigure(_read(title), _read(subtitle), node.proto.id, json.loads(node.proto.spec)))
        above = node if node.type == "markdown" else None

    walk(at._tree)
    return shown


def _around(template: str, name: str, inner: str = "") -> str:
    """A pattern of app/ui.py's markup `template` ('<div ...>{}</div>') with a group `name` in place of {}."""
    before, after = template.split("{}")
    return re.escape(before) + f"(?P<{name}>.*?)" + inner + re.escape(after)


FIGURE_TITLE = re.compile(_around(ui.FIGURE_TITLE, "title", f"(?:{_around(ui.SUBTITLE, 'subtitle')})?"), re.DOTALL)


def figure_titles(at: AppTest) -> list[str]:
    """Each figure's title as the page shows it above the figure ('' where it has none)."""
    return [f.title for f in shown_figures(at)]


def figure_title_by_key(at: AppTest, key: str) -> str:
    """The title shown above the figure drawn with show_figure(..., key=key)."""
    titles = [f.title for f in shown_figures(at) if f.id.endswith(f"-{key}")]
    assert titles, f"no figure {key!r} on the page"
    return titles[0]


def heatmap_by_key(at: AppTest, key: str) -> tuple[np.ndarray, list, list]:
    """(z, x labels, y labels) of the heatmap drawn under `key`."""
    trace = next(t for t in figure_by_key(at, key)["data"] if t.get("type") == "heatmap")
    return plotted_values(trace["z"]), list(trace.get("x", [])), list(trace.get("y", []))


def number_after(text: str, words: str) -> float:
    """The number written right after `words` in `text` (thousands separators allowed)."""
    import re

    at = text.index(words) + len(words)
    found = re.match(r"\s*([-+]?[\d,]*\.?\d+(?:e[-+]?\d+)?)", text[at:])
    assert found, f"no number after {words!r} in {text[at : at + 60]!r}"
    return float(found.group(1).replace(",", ""))


_builders = itertools.count()


def count_builds(monkeypatch, owner, name: str) -> list:
    """Replace owner.name (a view or figure builder) by one that records each call's first argument in the list
    returned. The replacement has a name of its own each time: app/shared.py keys what it keeps on the builder's
    name, so nothing an earlier test kept answers for it."""
    real, built = getattr(owner, name), []

    def counted(*args, **kwargs):
        built.append(args[0] if args else None)
        return real(*args, **kwargs)

    counted.__qualname__ = f"{name}.counted{next(_builders)}"
    monkeypatch.setattr(owner, name, counted)
    return built
