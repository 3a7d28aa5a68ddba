"""core/state.py: a page's link declared once. A field reads a link's text the way its widget does (bounds, a
slider's grid, options), bounds may come from the run-time context, and `problems` names what a page would ignore
without loading a model."""

from types import SimpleNamespace

import pytest

from core.state import Choice, Flag, Float, Int, Many, State, Text, Unknown, Word

PAGE = State(
    Choice("model", "a", options=lambda c: c.models),
    Int("layer", lambda c: c.n_layers - 1, 0, lambda c: c.n_layers - 1),
    Int("d", 16, 4, 64, step=2),
    Float("base", 4.0, 1.0, 6.0, step=0.1),
    Choice("n", 64, options=(16, 64), number=int),
    Flag("causal", False),
    Text("text", "The cat sat."),
    context=lambda c: Model(c),
)


class Model:
    """A context as the pages' are (core.attention.ModelContext): what is offered first, the picked model's shape
    when asked (by then the model has been read)."""

    def __init__(self, values):
        self.values, self.models = values, ("a", "b")

    @property
    def n_layers(self) -> int:
        return {"a": 6, "b": 30}[self.values.model]


def test_a_link_reads_as_the_widgets_read_it():
    s = PAGE.read({"model": "b", "layer": "29", "d": "32", "base": "5.5", "n": "16", "causal": "1", "text": "hi"})
    assert (s.model, s.layer, s.d, s.base, s.n, s.causal, s.text) == ("b", 29, 32, 5.5, 16, True, "hi")
    assert s.n_layers == 30  # the context's attributes, after the fields


@pytest.mark.parametrize(
    "raw, key, value",
    [
        ({"layer": "6"}, "layer", 5),  # past model a's 6 layers: its default, the last layer
        ({"model": "b"}, "layer", 29),  # the default follows the model read before it
        ({"model": "c"}, "model", "a"),  # not offered
        ({"d": "17"}, "d", 16),  # odd: off the slider's grid of 2 from 4
        ({"base": "5.55"}, "base", 4.0),  # off the grid of 0.1
        ({"base": "nan"}, "base", 4.0),
        ({"n": "32"}, "n", 64),
        ({"causal": "true"}, "causal", False),  # a link writes 0 / 1
        ({"text": "   "}, "text", "The cat sat."),  # blank: the example sentence
    ],
)
def test_what_a_page_ignores_reads_as_the_default(raw, key, value):
    assert getattr(PAGE.read(raw), key) == value


def test_problems_are_found_without_the_context():
    assert PAGE.problems({"layer": "99", "model": "anything", "d": "8"}) == []  # bounds that need a model: unknown
    found = PAGE.problems({"colour": "red", "d": "65", "n": "32", "causal": "yes"})
    assert found[0].startswith("state.colour is not a setting of this page (it has: model, layer, d, base, n, causal")
    assert [p.split(" ")[0] for p in found[1:]] == ["state.d", "state.n", "state.causal"]
    assert "outside 4 .. 64" in found[1] and "not one of 16, 64" in found[2]
    params = State(Many("methods", ("x",), options=("x", "y")), Word("query", None))
    assert params.problems({"methods": ["x", "y"], "query": "it"}) == []
    assert params.problems({"methods": ["x", "x"], "query": 3}, "params", "a parameter")[0].startswith("params.methods")
    assert params.problems({"query": True})[0].startswith("state.query")


def test_a_bound_that_needs_the_context_is_unknown_without_it():
    s = State(Int("layer", lambda c: c.n_layers - 1, 0, lambda c: c.n_layers - 1)).read({})
    with pytest.raises(Unknown):
        s.layer  # noqa: B018  (nothing to read it from: an answer that needs it fails in words)


def test_a_context_that_needs_a_value_not_read_yet_is_unknown_not_a_loop():
    eager = State(Choice("model", "a", options=lambda c: c.models),
                  context=lambda c: SimpleNamespace(models=("a", "b"), n=len(c.model)))  # fmt: skip
    assert eager.read({"model": "b"}).model == "b"  # its options unknown while it is read: taken as given


def test_a_key_is_declared_once():
    with pytest.raises(ValueError, match="declared twice"):
        State(Int("d", 1), Flag("d"))
