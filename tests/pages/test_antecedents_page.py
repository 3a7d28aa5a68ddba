"""/antecedents headless: a link's pronoun, ranked candidate and head count set the widgets as the page's declared
state (core/antecedents/state.py) reads them, and the top head the page names is the one the ranking computes."""

import re

from core import antecedents as ante
from core.antecedents import view as data
from core.antecedents.state import STATE
from core.models import registry
from tests.apptest_helpers import open_view, shown_text

TROPHY = "The trophy would not fit in the brown suitcase because it was too big."


def test_a_link_sets_the_widgets_as_the_declaration_reads_it():
    link = {"text": TROPHY, "rank": "1", "top": "5"}
    at = open_view("antecedents", link)
    declared = STATE.read(link)
    assert at.selectbox(key="pron").value == declared.pron == "10"  # 'it', the stored pair's pronoun
    assert at.selectbox(key="rank").value == declared.rank == "1" and at.number_input(key="top").value == 5
    # the top head ranked by 'suitcase' (candidate 1), as core ranks it
    model = registry.shared("minilm")
    analysis = ante.measure(model, model.run(model.tokenize([TROPHY])), 10, [1, 8])
    l, h = data.ranking(analysis, 1, 5).best
    found = re.search(r"top head for 'suitcase' is layer (\d+), head (\d+)", shown_text(at))
    assert (int(found.group(1)), int(found.group(2))) == (l, h)


def test_an_unusable_link_value_falls_back_to_the_declared_default_with_a_notice():
    at = open_view("antecedents", {"text": TROPHY, "pron": "3", "top": "31"})  # word 3 ('fit') is no pronoun
    assert at.selectbox(key="pron").value == STATE.read({"text": TROPHY}).pron == "10"
    assert at.number_input(key="top").value == STATE["top"].default == 10
    notice = at.warning[0].value
    assert "pron" in notice and "top" in notice


def test_the_page_shows_the_measured_cat_head_and_its_recompute_matches_the_file():
    at = open_view("antecedents")
    text = shown_text(at)
    assert "layer 5, head 11" in text and "0.71 on 'cat', 0.10 on 'mat'" in text
    assert "prefers 'cat' in both sentences" in text  # the 'flat' sentence, computed live
    assert "held-out sentences" in text  # the stored evaluation
    next(b for b in at.button if b.label.startswith("Recompute")).click().run()
    assert not at.exception
    text = shown_text(at)
    assert "differ from the file by at most" in text and "best head the same" in text, text
