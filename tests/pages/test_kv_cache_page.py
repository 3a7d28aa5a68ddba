"""The /kv-cache page headless: the continuation with its figures, the cache bytes from the formula, an empty
prompt and a window of 1."""

import pytest

from app import i18n
from core.models import registry
from tests.apptest_helpers import figure_bytes, open_view, shown_text

pytestmark = [
    pytest.mark.skipif(registry.model_status()["smollm2"] is not None, reason="SmolLM2 is not installed"),
    pytest.mark.slow,  # every test here runs the page on SmolLM2
]


def words(key: str) -> str:
    return i18n.text("en", "kv_cache.figure", key)


def test_default_view_generates_and_shows_every_part():
    at = open_view("kv_cache")
    text = shown_text(at)
    assert "45.00 KiB per token" in text  # 2 x 30 layers x 3 kv heads x 64 x 4 bytes = 46,080 bytes
    assert len(at.get("plotly_chart")) == 5 and figure_bytes(at) < 1_000_000
    assert at.code and "⟶" in at.code[0].value
    said = i18n.text("en", "common", "figure_map", rows=words("heads_axis"), cols=words("key_axis"), cells="")
    said = said.replace("(", "\\(").replace(")", "\\)")  # as the caption escapes them for markdown
    assert said in "\n".join(c.value for c in at.caption)  # the step's map, read out: which rows, which columns


def test_empty_prompt_says_so():
    at = open_view("kv_cache", {"prompt": ""})
    assert "Type a prompt" in shown_text(at) and not at.get("plotly_chart")


def test_window_of_one_without_sinks_runs():
    at = open_view(
        "kv_cache", {"prompt": "<script>alert(1)</script> 猫 고양이 🐱", "window": "1", "sinks": "0", "new": "2"}
    )
    assert len(at.get("plotly_chart")) == 5
    assert "<script>" not in " ".join(m.value for m in at.markdown if "`" not in m.value)


def test_no_cache_claim_only_in_greedy_mode_and_the_window_is_defined_once():
    greedy = shown_text(open_view("kv_cache", {"new": "1"}))
    assert "without any cache" in greedy and "StreamingLLM instead renumbers positions" in greedy
    assert "its own included" in greedy  # W counts the keys the new token sees, as on /transformer-xl
    sampled = shown_text(open_view("kv_cache", {"new": "1", "decode": "sample", "seed": "3"}))
    assert "without any cache" not in sampled


def test_a_link_opens_the_page_at_its_settings_as_the_declared_state_reads_them():
    """Every setting a link carries, as the page had them before its state was declared: the widgets show them,
    nothing is reported ignored, and core's declaration (what a lesson's answers read) reads the same values."""
    from core.kv_cache.state import STATE

    link = {"prompt": "The cat sat on the mat.", "new": "2", "decode": "sample", "temp": "0.5", "topk": "10",
            "seed": "3", "window": "5", "sinks": "1", "step": "0", "layer": "3", "hlayer": "2", "head": "1"}  # fmt: skip
    at = open_view("kv_cache", link)
    assert not at.warning, [w.value for w in at.warning]
    assert {k: at.query_params[k] for k in link} == link
    read = STATE.read(link).as_dict()
    widgets = {k: at.session_state[k] for k in link}
    assert widgets == {k: read[k] for k in link} == {**link, "new": 2, "temp": 0.5, "topk": 10, "seed": 3,
                                                     "window": 5, "sinks": 1, "step": 0, "layer": 3, "hlayer": 2}  # fmt: skip
    bad = open_view("kv_cache", {**link, "new": "99", "head": "12"})  # SmolLM2 has 9 heads; at most 32 new tokens
    assert "new" in bad.warning[0].value and "head" in bad.warning[0].value
    assert (bad.session_state["new"], bad.session_state["head"]) == (6, "mean") == (STATE["new"].default, "mean")


@pytest.mark.parametrize("decode", ["greedy", "sample"])
def test_the_decoding_box_has_half_the_page(decode):
    """Its choices are long ('貪欲法（最も確率の高いトークン）'): in a quarter of the page (st.columns(4)) the box
    showed '貪欲法（最も確率の高…' at 1280 px."""
    at = open_view("kv_cache", {"new": "1", "decode": decode, "lang": "ja"})
    holding = [c for c in at.columns if any(getattr(w, "key", None) == "decode" for w in c.children.values())]
    assert [c.proto.weight for c in holding] == [0.5]
