"""What every session at the same state shares: a light page's view (core) and its figures (viz), made once per
process for every visitor asking the same and kept read-only, a few of each.

A room's step sends a class of learners to the same page at the same state at once; each of them running the
page's core call and building its plotly figures again cost most of a step's server time (60-70 ms of the ~90 ms a
page run of /masks took per learner). Models' results have their own cache (app/models.py `computed`); this is for
the light calls, keyed the same way on the function's name and its arguments, so no caller can leave a part of the
key out.

Read-only: a shared view or figure is the same object in every session that asks; nothing that holds one may
change it (ui.show_figure only reads a figure)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

from app import i18n, ui

ENTRIES = 64  # per kind (views, figures): a room's steps and a few explorers; each a few hundred kB at most


class Kept:
    """At most `entries` results, the least recently asked for dropped first, each made once however many
    sessions ask for it at the same moment (the others wait for the first). A dict under a lock rather than
    st.cache_resource: that hashes every argument with Streamlit's hasher on every call (recursing through a
    class's token lists), about a millisecond per call, where this key is a tuple Python hashes itself."""

    def __init__(self, entries: int):
        self.entries = entries
        self._kept: OrderedDict[Hashable, Any] = OrderedDict()
        self._making: dict[Hashable, threading.Lock] = {}
        self._lock = threading.Lock()

    def get(self, key: Hashable, make: Callable[[], Any]) -> Any:
        with self._lock:
            if key in self._kept:
                self._kept.move_to_end(key)
                return self._kept[key]
            making = self._making.setdefault(key, threading.Lock())
        with making:  # one maker per key; the others find its result below
            with self._lock:
                if key in self._kept:
                    return self._kept[key]
            try:
                value = make()
            finally:
                with self._lock:
                    self._making.pop(key, None)
            with self._lock:
                self._kept[key] = value
                while len(self._kept) > self.entries:
                    self._kept.popitem(last=False)
            return value

    def clear(self) -> None:
        with self._lock:
            self._kept.clear()

    def __len__(self) -> int:
        return len(self._kept)


def _frozen(value: Any) -> Hashable:
    """A call's argument as a key: lists and tuples as tuples, dicts as sorted pairs; anything else must hash (a
    value that cannot raises TypeError here, at the call)."""
    if isinstance(value, list | tuple):
        return tuple(_frozen(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _frozen(v)) for k, v in value.items()))
    hash(value)
    return value


def _name(function: Callable) -> str:
    return f"{function.__module__}.{function.__qualname__}"


_view = Kept(ENTRIES)


def view(function: Callable, *args, **kwargs):
    """function(*args, **kwargs): a core view (a pure function of its arguments), computed once for every session
    asking the same and kept."""
    job = (_name(function), _frozen(args), _frozen(kwargs))
    return _view.get(job, lambda: function(*args, **kwargs))


_figures = Kept(ENTRIES)


def _words(section: str, lang: str) -> Callable[..., str]:
    return lambda _key, /, **fmt: i18n.text(lang, section, _key, **fmt)  # as ui.texts makes them


def _build(builder: Callable, shown: Any, section: str, lang: str, args: tuple) -> tuple:
    built = builder(shown, _words(section, lang), *args)
    for fig in built.values() if isinstance(built, dict) else built if isinstance(built, list | tuple) else [built]:
        ui.read_only(fig)  # what each draw of it reads, made once
    return shown, built  # the entry holds the view: no other object takes its id meanwhile


def figures(builder: Callable, shown: Any, section: str, *args):
    """builder(shown, the words of catalog `section` in the reader's language, *args): the figures of `shown`, an
    object view() returned (or a part of one), built once for every session showing it in that language. Keyed on
    the object itself, which the entry keeps alive, so its id cannot pass to another object while the entry lives."""
    lang = ui.lang()
    job = (_name(builder), id(shown), section, lang, _frozen(args))
    return _figures.get(job, lambda: _build(builder, shown, section, lang, args))[1]


_tables = Kept(ENTRIES)


def _table(builder: Callable, shown: Any, section: str, lang: str, args: tuple) -> tuple:
    import pyarrow as pa

    return shown, pa.Table.from_pandas(builder(shown, _words(section, lang), *args))  # as st.dataframe converts it


def table(builder: Callable, shown: Any, section: str, *args):
    """builder(shown, words, *args) -> a pandas DataFrame, made and converted to the Arrow table st.dataframe sends
    once for every session showing it in that language (a DataFrame is converted again at every draw). Keyed as
    figures() is."""
    lang = ui.lang()
    job = (_name(builder), id(shown), section, lang, _frozen(args))
    return _tables.get(job, lambda: _table(builder, shown, section, lang, args))[1]
