"""Each declared page state (a topic's STATE in core, core/state.py) is the page's whole link: every parameter the
page writes into its URL is a declared key, for every part of the page. A widget added without its declaration, or
a declaration a page no longer reads, shows up here (the lesson loader and the answers read only the declaration)."""

import pytest

from app import catalog
from core.lessons.answers import PAGE_STATES
from tests.apptest_helpers import open_view

MODEL_FREE = True  # its tests (those not marked slow) load no model: tests/conftest.py checks it

MODEL_PAGES = {"attention", "multi-head", "encoder-decoder", "moe", "head-detectors", "positions", "rope-scaling", "why-head",
               "transformer-xl", "kv-cache", "logit-lens", "rnn-attention", "ablation", "antecedents",
               "padded-batch"}  # fmt: skip  # pages whose default view loads a real model (or offers one)


def views():
    for page, state in sorted(PAGE_STATES.items()):
        parts = state["part"].options_in() if "part" in state else (None,)
        for part in parts:
            marks = [pytest.mark.slow] if page in MODEL_PAGES else []
            yield pytest.param(page, part, id=f"{page}-{part or 'all'}", marks=marks)


@pytest.mark.parametrize("page, part", list(views()))
def test_every_parameter_the_page_writes_is_declared(page, part):
    at = open_view(catalog.BY_URL[page].topic, {"part": part} if part else {})
    written = set(at.query_params) - {"lang"}
    assert written and written <= set(PAGE_STATES[page].fields), sorted(written - set(PAGE_STATES[page].fields))


def test_a_chosen_option_is_shown_in_the_new_language_after_a_switch():
    """The browser holds a select box's chosen label: after a switch of language the page sends the choice again,
    in the new language's label (it showed the old language's label among the new options, the choice kept)."""
    at = open_view("ablation", {"lang": "en", "card": "induction-zero"})
    at.selectbox(key="lang").select("ja").run()
    card = at.selectbox(key="card")
    assert card.value == "induction-zero" and at.query_params["lang"] == "ja"
    assert card.proto.set_value and card.proto.raw_value in card.options
    assert card.proto.raw_value.startswith("誘導ヘッド")  # "Induction heads ...", in Japanese
