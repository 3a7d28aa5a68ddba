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

from collections.abc import Callable, Hashable
from typing import Any

import streamlit as st

from app import i18n, ui

ENTRIES = 64  # per kind (views, figures): a room's steps and a few explorers; each a few hundred kB at most


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


@st.cache_resource(show_spinner=False, max_entries=ENTRIES)
def _view(job: tuple, _function: Callable, _args: tuple, _kwargs: dict):
    return _function(*_args, **_kwargs)


def view(function: Callable, *args, **kwargs):
    """function(*args, **kwargs): a core view (a pure function of its arguments), computed once for every session
    asking the same and kept."""
    return _view((_name(function), _frozen(args), _frozen(kwargs)), function, args, kwargs)


@st.cache_resource(show_spinner=False, max_entries=ENTRIES)
def _figures(job: tuple, _builder: Callable, _view: Any, _args: tuple) -> tuple:
    _, _, section, lang, _ = job
    words = lambda _key, /, **fmt: i18n.text(lang, section, _key, **fmt)  # noqa: E731 - as ui.texts makes them
    built = _builder(_view, words, *_args)
    for fig in built.values() if isinstance(built, dict) else built if isinstance(built, list | tuple) else [built]:
        ui.read_only(fig)  # what each draw of it reads, made once
    return _view, built  # the entry holds the view: no other object takes its id meanwhile


def figures(builder: Callable, shown: Any, section: str, *args):
    """builder(shown, the words of catalog `section` in the reader's language, *args): the figures of `shown`, an
    object view() returned (or a part of one), built once for every session showing it in that language. Keyed on
    the object itself, which the entry keeps alive, so its id cannot pass to another object while the entry lives."""
    return _figures((_name(builder), id(shown), section, ui.lang(), _frozen(args)), builder, shown, args)[1]
