"""A page's state, declared once: the query parameters its link carries, each with its type, default, bounds and
options. Three readers use one declaration: the page's widgets (app/ui.py binds a widget from a field), the lessons'
answer functions (State.read parses a step's state exactly as the page does) and the lesson loader (State.problems
names a step's state that the page would ignore, before any page runs).

    STATE = State(
        Choice("model", "minilm", options=lambda c: c.models),
        Text("text", DEFAULT_TEXT),
        Int("layer", lambda c: c.n_layers - 1, 0, lambda c: c.n_layers - 1),
        context=model_context,
    )

A default, a bound or the options may depend on what is known only at run time (the model's capabilities, a value
read before it): then it is a function of `c`, an object whose attributes are the fields read so far and those of
the state's context (State(context=fn(values) -> object), computed on first use). Where that is unknown (the loader
checks a lesson without loading a model) the field is checked for its type only.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any


class Unknown(LookupError):
    """A default, bound or option list needs the run-time context, which this reader does not have."""


def resolve(value, c):
    return value(c) if callable(value) else value


@dataclass(frozen=True)
class Field:
    key: str
    default: Any

    def parse(self, raw: str, c=None):
        """The value a link's text means, or ValueError when the page would ignore it (unreadable, out of bounds,
        not an option)."""
        raise NotImplementedError

    def default_in(self, c=None):
        return resolve(self.default, c)

    def valid(self, value, c=None) -> bool:
        """Whether a value already read (a widget's) still fits this field in context `c`."""
        try:
            self.parse(self.text(value), c)
        except (ValueError, TypeError, OverflowError):
            return False
        return True

    def text(self, value) -> str:
        """A value as the link writes it."""
        if isinstance(value, bool):
            return "1" if value else "0"
        return str(value)


def _bounded(value, lo, hi, c):
    for bound, ok in ((lo, lambda b: value >= b), (hi, lambda b: value <= b)):
        try:
            b = resolve(bound, c)
        except Unknown:
            continue
        if b is not None and not ok(b):
            raise ValueError(f"{value} is outside {_resolve_or(lo, c)} .. {_resolve_or(hi, c)}")


def _resolve_or(bound, c):
    try:
        return resolve(bound, c)
    except Unknown:
        return "?"


@dataclass(frozen=True)
class Int(Field):
    lo: Any = None
    hi: Any = None
    step: int | None = None  # the value lies on lo + k * step (rope_d is even: lo 4, step 2)

    def parse(self, raw, c=None) -> int:
        value = int(str(raw).strip())
        _bounded(value, self.lo, self.hi, c)
        if self.step:
            lo = _resolve_or(self.lo, c)
            if (value - (lo if isinstance(lo, int) else 0)) % self.step:
                raise ValueError(f"{value} is not a multiple of {self.step} from {lo}")
        return value


@dataclass(frozen=True)
class Float(Field):
    lo: Any = None
    hi: Any = None
    step: float | None = None

    def parse(self, raw, c=None) -> float:
        value = float(str(raw).strip())
        if not math.isfinite(value):
            raise ValueError(raw)
        _bounded(value, self.lo, self.hi, c)
        if self.step:
            lo = _resolve_or(self.lo, c)
            k = (value - (lo if isinstance(lo, int | float) else 0)) / self.step
            if abs(k - round(k)) > 1e-9:
                raise ValueError(f"{value} is off the grid of {self.step}")
        return value


@dataclass(frozen=True)
class Choice(Field):
    options: Any = ()  # option keys (what the link holds), or a function of the context
    number: type | None = None  # options that are numbers (a factor 2, 4, 8): the link's "4" or "4.0" reads as 4

    def parse(self, raw, c=None):
        value = self.number(str(raw).strip()) if self.number else str(raw)
        try:
            options = self.options_in(c)
        except Unknown:
            return value
        if value not in options:
            raise ValueError(f"{raw!r} is not one of {', '.join(map(str, options))}")
        return value

    def options_in(self, c=None) -> tuple:
        return tuple(resolve(self.options, c))


@dataclass(frozen=True)
class Flag(Field):
    default: Any = False

    def parse(self, raw, c=None) -> bool:
        if isinstance(raw, bool):  # a lesson's params write true / false
            return raw
        if str(raw) not in ("0", "1"):
            raise ValueError(f"{raw!r} is not 0 or 1")
        return str(raw) == "1"


@dataclass(frozen=True)
class Text(Field):
    """Free text. A blank text reads as the default (a page shows its example sentence, not nothing)."""

    def parse(self, raw, c=None) -> str:
        return str(raw)

    def read(self, raw, c=None) -> str:
        return raw if isinstance(raw, str) and raw.strip() else self.default_in(c)


@dataclass(frozen=True)
class Many(Field):
    """Several of the options, in the given order (a lesson's params: methods = ["linear", "yarn"])."""

    options: Any = ()

    def parse(self, raw, c=None) -> tuple:
        items = [x.strip() for x in raw.split(",")] if isinstance(raw, str) else list(raw)
        options = tuple(resolve(self.options, c))
        bad = [x for x in items if x not in options]
        if bad or len(set(items)) != len(items) or not items:
            raise ValueError(f"{raw!r}: each of {', '.join(map(str, options))} at most once")
        return tuple(items)


@dataclass(frozen=True)
class Word(Field):
    """A token named by its position (a whole number) or by the word it reads."""

    def parse(self, raw, c=None) -> int | str:
        if isinstance(raw, bool):
            raise ValueError(f"{raw!r} is neither a position nor a word")
        if isinstance(raw, int):
            return raw
        if not isinstance(raw, str) or not raw.strip():
            raise ValueError(f"{raw!r} is neither a position nor a word")
        return raw


def model_choice(shipped: tuple[str, ...], key: str = "model") -> Choice:
    """A page's model picker: its shipped models first (the first is the default, so links and committed figures
    stay as they were), then a learner's own folders the page can use; c.models: every model offered."""
    return Choice(key, shipped[0], options=lambda c: c.models)


class Values:
    """A state read: fields by attribute (s.layer), then the context's attributes (s.n_layers, s.model_object)."""

    def __init__(self, context: Callable[[Values], Any] | None = None, known: Mapping | None = None):
        self._values: dict[str, Any] = {}
        self._context_fn = context
        self._context = None
        self._building = False
        self._known = dict(known or {})

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        if name in self._values:
            return self._values[name]
        if name in self._known:
            return self._known[name]
        if self._context_fn is None or self._building:  # no context, or a name the context itself needs
            raise Unknown(name)
        if self._context is None:
            self._building = True
            try:
                self._context = self._context_fn(self)
            finally:
                self._building = False
        try:
            return getattr(self._context, name)
        except AttributeError:
            raise Unknown(name) from None

    def as_dict(self) -> dict[str, Any]:
        return dict(self._values)

    def __repr__(self) -> str:
        return f"Values({self._values})"


class State:
    """The fields of one page's link, in reading order (a field's bounds may use the fields before it)."""

    def __init__(self, *fields: Field, context: Callable[[Values], Any] | None = None):
        keys = [f.key for f in fields]
        if len(set(keys)) != len(keys):
            raise ValueError(f"a key is declared twice: {keys}")
        self.fields = {f.key: f for f in fields}
        self.context = context

    def __getitem__(self, key: str) -> Field:
        return self.fields[key]

    def __contains__(self, key: str) -> bool:
        return key in self.fields

    def __iter__(self):
        return iter(self.fields.values())

    def __add__(self, other: State) -> State:
        """Two parts' states as one page's (their context: this one's, else the other's)."""
        return State(*self.fields.values(), *other.fields.values(), context=self.context or other.context)

    def read(self, raw: Mapping[str, str], **known) -> Values:
        """The values a page shows for a link's parameters `raw`: each field parsed as its widget parses it; a
        missing or unusable value gives the default (the page ignores it the same way). `known`: context values
        the caller already has (they win over the state's context function)."""
        values = Values(self.context, known)
        for field in self.fields.values():
            value = _NOTHING
            if field.key in raw:
                try:
                    value = field.parse(raw[field.key], values)
                    if isinstance(field, Text):
                        value = field.read(value, values)
                except (ValueError, TypeError, OverflowError):
                    value = _NOTHING
            if value is _NOTHING:
                try:
                    value = field.default_in(values)
                except Unknown:  # its default needs a context this state has not (the answer does not use it)
                    continue
            values._values[field.key] = value
        return values

    def problems(self, raw: Mapping[str, str], name: str = "state", of: str = "a setting of this page") -> list[str]:
        """What a page would ignore in a link's parameters, read without the run-time context (no model loaded):
        unknown keys, unreadable values, values outside bounds that do not depend on the context. `name`, `of`:
        how the messages call the parameters (a lesson's params: "params", "a parameter of this answer")."""
        found = []
        values = Values(None)
        for key in raw:
            if key not in self.fields:
                found.append(f"{name}.{key} is not {of} (it has: {', '.join(self.fields) or 'none'})")
        for field in self.fields.values():
            if field.key in raw:
                try:
                    values._values[field.key] = field.parse(raw[field.key], values)
                except (ValueError, TypeError, OverflowError) as e:
                    found.append(f"{name}.{field.key} = {raw[field.key]!r}: {e}")
                    try:
                        values._values[field.key] = field.default_in(values)
                    except Unknown:
                        pass
            else:
                try:
                    values._values[field.key] = field.default_in(values)
                except Unknown:
                    pass
        return found


_NOTHING = object()
