"""The position pages through AppTest: every part renders at the edges of its sliders and with hostile links,
what they say is the computed finding, and each view stays under 1 MB of figures."""

import json

import pytest

from core import long_context, sinusoidal
from tests.apptest_helpers import figure_bytes
from tests.apptest_helpers import open_view as open_page
from tests.apptest_helpers import shown_text as shown

MAX_VIEW_BYTES = 1_000_000
HOSTILE = [
    "",
    "The 🐱 sat. 👍🏽👨‍👩‍👧",
    "猫はマットの上に座った。",
    "고양이가 앉았다.",
    "<script>alert(1)</script> {{7*7}}",
    "The cat sat on the mat because it was tired. " * 450,
]


@pytest.mark.parametrize(
    "params",
    [
        {"part": "sinusoidal"},
        {"part": "sinusoidal", "d": "256", "n": "256", "base": "6.0", "sp_d": "4096", "sp_n": "32768", "thr": "0.1"},
        {"part": "sinusoidal", "d": "8", "n": "16", "base": "1.0", "pair": "3", "sp_n": "128"},
        {"part": "relative", "rel_n": "24", "rel_d": "32", "clip": "12", "seed": "9999"},
        {"part": "relative", "rel_n": "3", "rel_d": "2", "clip": "0"},
        {"part": "alibi", "heads": "32", "al_n": "64", "al_head": "31"},
        {"part": "alibi", "heads": "1", "al_n": "4"},
        {"part": "alibi", "heads": "12", "al_head": "11"},
        {"part": "rope", "rope_d": "64", "rope_n": "512", "m": "500", "layout": "rotate_half", "rope_pair": "31"},
        {"part": "rope", "rope_d": "4", "rope_n": "8", "m": "0", "rope_base": "1.0"},
    ],
    ids=lambda p: "-".join(f"{k}{v}" for k, v in p.items()),
)
def test_positions_parts_render_within_budget(params):
    at = open_page("positions.py", params)
    assert at.get("plotly_chart")
    assert figure_bytes(at) < MAX_VIEW_BYTES
    assert not at.warning, [w.value for w in at.warning]  # every parameter above is valid


@pytest.mark.parametrize(
    "params",
    [
        {"part": "<script>"},
        {"part": "rope", "rope_d": "5"},
        {"part": "sinusoidal", "base": "nan"},
        {"part": "sinusoidal", "d": "-8", "sp_d": "3", "thr": "inf"},
        {"part": "alibi", "heads": "0", "al_head": "99"},
        {"part": "relative", "seed": "-1", "clip": "1e9"},
        {"part": "rope", "m": "99999999999999999999", "layout": "x"},
    ],
)
def test_positions_bad_links_are_ignored_with_a_notice(params):
    at = open_page("positions.py", params)
    assert "Ignored link parameters" in shown(at)


def test_sinusoidal_page_states_the_measured_sparsity():
    at = open_page("positions.py", {"part": "sinusoidal", "sp_d": "3072", "sp_n": "8192", "thr": "0.01"})
    r = sinusoidal.slow_dimension_share(8192, 3072, threshold=0.01)
    step = sinusoidal.neighbour_step_share(3072, 10000.0, 0.01)
    text = shown(at)
    assert f"{r['share']:.1%} of the 3,072 columns" in text
    assert f"{step:.1%} of the columns move by less than 1.0%" in text
    assert "same dot product to within" in text


def test_rope_check_and_layouts_are_stated():
    at = open_page("positions.py", {"part": "rope"})
    text = shown(at)
    assert "the score depends on m − n only" in text
    assert "|rotate_half(Px) − P·adjacent(x)|" in text


@pytest.mark.slow
def test_learned_part_uses_minilm_table():
    at = open_page("positions.py", {"part": "learned", "npos": "512"})
    assert "neighbouring positions have mean similarity" in shown(at)
    assert figure_bytes(at) < MAX_VIEW_BYTES


@pytest.mark.slow
@pytest.mark.parametrize("text", HOSTILE, ids=["empty", "emoji", "cjk", "korean", "script", "huge"])
def test_smollm2_bands_survive_hostile_text(text):
    at = open_page("positions.py", {"part": "rope", "smol": "1", "bands": "8", "band": "7", "layer": "29", "head": "8"})
    at.text_area(key="text").set_value(text).run()
    assert not at.exception, [e.value for e in at.exception]
    if text:
        assert "bands add up to the model's own scaled scores" in shown(at)
        assert figure_bytes(at) < MAX_VIEW_BYTES
    else:
        assert "Type some text" in shown(at)


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"factor": "32", "maxd": "16384", "measure": "vector"},
        {"factor": "2", "maxd": "131072", "measure": "slowest_pair", "exp_factor": "all"},
    ],
    ids=["default", "s32", "s2"],
)
def test_rope_scaling_page_renders_within_budget(params):
    at = open_page("rope_scaling.py", params)
    assert figure_bytes(at) < MAX_VIEW_BYTES
    assert "linear interpolation divides every step by s" in shown(at)


def test_rope_scaling_bad_links_are_ignored():
    at = open_page("rope_scaling.py", {"factor": "3", "maxd": "-1", "live_n": "1e9", "live_method": "<b>x</b>"})
    assert "Ignored link parameters" in shown(at)


def test_rope_scaling_page_shows_the_results_file():
    by_length = long_context.results_by_length()
    if not by_length:
        pytest.skip("no results file")
    res = by_length[max(by_length)]  # the page opens on the longest run
    at = open_page("rope_scaling.py")
    text = shown(at)
    assert res["command"] in text and res["device"] in text
    beyond = [r for r in res["runs"] if r["mean_loss_beyond_context"] is not None]
    if beyond:
        best = min(beyond, key=lambda r: r["mean_loss_beyond_context"])
        assert f"{best['mean_loss_beyond_context']:.2f} ({best['label']})" in text


def test_rope_scaling_page_without_results(monkeypatch, tmp_path):
    missing = tmp_path / "none.json"
    monkeypatch.setattr(long_context, "RESULTS_PATH", missing)
    assert long_context.load_results(missing) is None
    (tmp_path / "bad.json").write_text("{not json")
    assert long_context.load_results(tmp_path / "bad.json") is None
    (tmp_path / "odd.json").write_text(json.dumps({"runs": "x"}))
    assert long_context.load_results(tmp_path / "odd.json") is None
    at = open_page("rope_scaling.py")
    assert "No results file yet" in shown(at)


def fake_results(n: int, runs: list[tuple[str, float]], command: str) -> dict:
    """A results file in the experiment script's format; losses made up (only the page's reading is tested)."""

    def run(method, factor, i):
        label = "no scaling" if method == "default" else f"{method} x{factor:g}"
        beyond = 4.0 - 0.1 * i if n > 8192 else None
        return {
            "method": method,
            "factor": factor,
            "label": label,
            "attention_factor": 1.0,
            "n_tokens": n,
            "seconds": 1.0,
            "mean_loss_all": 3.0,
            "mean_loss_within_context": 2.5 + 0.01 * i,
            "mean_loss_beyond_context": beyond,
            "start": [0, n // 2],
            "end": [n // 2 - 1, n - 2],
            "mean_loss": [2.5, 3.5],
            "count": [n // 2, n // 2 - 1],
        }

    return {
        "command": command,
        "date": "2026-11-22",
        "device": "cpu: test",
        "torch": "x",
        "transformers": "y",
        "model": "SmolLM2-135M-Instruct",
        "weights_note": "",
        "n_tokens": n,
        "bucket": n // 2,
        "text": {"path": "data/licence_texts.txt", "tokens_available": 43114},
        "complete": True,
        "runs": [run(m, f, i) for i, (m, f) in enumerate(runs)],
    }


def test_rope_scaling_page_picks_a_length_and_names_missing_runs(monkeypatch, tmp_path):
    monkeypatch.setattr(long_context, "RESULTS_PATH", tmp_path / "long_context.json")
    (tmp_path / "long_context.json").write_text(json.dumps(fake_results(16384, long_context.STANDARD_RUNS, "cmd-16k")))
    partial = [("default", 1.0), ("yarn", 4.0), ("dynamic", 4.0), ("linear", 4.0)]
    (tmp_path / "long_context_32k.json").write_text(json.dumps(fake_results(32768, partial, "cmd-32k")))
    (tmp_path / "long_context_bad.json").write_text("{broken")
    assert list(long_context.results_by_length()) == [16384, 32768]
    at = open_page("rope_scaling.py")
    text = shown(at)
    assert "cmd-32k" in text and "cmd-16k" not in text
    warning = " ".join(w.value for w in at.warning)
    assert "holds 4 of the 10 configurations" in warning
    assert "linear x2, linear x8, dynamic x2, dynamic x8, yarn x2, yarn x8" in warning
    at.radio(key="exp_n").set_value("16384").run()
    assert not at.exception
    assert "cmd-16k" in shown(at) and "configurations" not in " ".join(w.value for w in at.warning)
    assert "exp_n" in at.query_params


@pytest.mark.slow
def test_live_rerun_small():
    at = open_page("rope_scaling.py", {"live_n": "256", "live_method": "yarn", "live_factor": "2"})
    at.button(key="live-run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("Live run" in json.loads(e.proto.spec)["layout"]["title"]["text"] for e in at.get("plotly_chart"))


def test_slider_keeps_its_value_when_its_bounds_change():
    """`pair`'s maximum is d/2 - 1: changing d used to drop the user's pair to 0. Now it is kept while it fits
    and falls back to the default (2) when it does not."""
    at = open_page("positions.py", {"part": "sinusoidal"})
    at.slider(key="pair").set_value(5).run()
    at.slider(key="d").set_value(128).run()
    assert at.slider(key="pair").value == 5 and at.slider(key="pair").max == 63
    at.slider(key="d").set_value(8).run()
    assert not at.exception
    assert at.slider(key="pair").value == 2 and at.slider(key="pair").max == 3
