"""scripts/load_pages.py: what a visitor does to any page (new sentences, else a slider, else a rerun)."""

from __future__ import annotations

import asyncio
import gc
import random

import pytest
from streamlit.proto.Delta_pb2 import Delta
from streamlit.proto.Slider_pb2 import Slider
from streamlit.proto.TextArea_pb2 import TextArea

from scripts import load_pages as lp
from scripts import load_test as lt


class FakeSession(lt.StreamlitSession):
    def __init__(self, widgets: dict):
        super().__init__(port=0, timeout_s=1)
        self.widgets = widgets
        self.sent = []

    async def rerun(self, client_state):
        self.sent.append(client_state)
        return lt.RunResult(ms=1.0)


def act(widgets: dict, seed: int = 0):
    s = FakeSession(widgets)
    asyncio.run(lp.page_action(s, random.Random(seed), 3, 7))
    (state,) = s.sent
    return list(state.widget_states.widgets)


def slider(wid: str, lo: float, hi: float, step: float, data_type: int = 0, options=()) -> Slider:
    return Slider(id=wid, min=lo, max=hi, step=step, data_type=data_type, default=[lo], options=list(options))


def test_a_text_area_gets_a_new_sentence_first():
    (w,) = act({"$$ID-a-layer": slider("$$ID-a-layer", 0, 5, 1), "$$ID-b-text": TextArea(id="$$ID-b-text")})
    assert w.id == "$$ID-b-text" and w.string_value.endswith("(3.7)")  # fresh: never answered from a cache


def test_a_text_area_of_several_lines_gets_as_many_new_sentences_each_time():
    """/masks' batch and /padded-batch take a sentence a line: one sentence only gets a note ('write at least two
    lines'). The server sends the box's text on its first run only."""

    def draw(box: TextArea) -> None:  # the server's run as the session reads it
        delta = Delta()
        delta.new_element.text_area.CopyFrom(box)
        s._delta(delta, lt.RunResult(ms=0.0))

    s = FakeSession({})
    draw(TextArea(id="$$ID-b-text", value="The cat sat.\nDogs bark.\nIt was tired.", set_value=True))
    for n in (1, 2):
        asyncio.run(lp.page_action(s, random.Random(n), 3, n))
        draw(TextArea(id="$$ID-b-text"))  # a later run's box: no value sent
    typed = [state.widget_states.widgets[0].string_value.splitlines() for state in s.sent]
    assert [len(lines) for lines in typed] == [3, 3]
    assert [line[line.rindex("(") :] for line in typed[1]] == ["(3.2)", "(3.2.1)", "(3.2.2)"]  # each line fresh


def test_the_study_group_loop_types_as_the_page_loop_does():
    """scripts/load_test.py's round (the README's whole-app figures) types into /padded-batch's box of three lines
    three new sentences, as load_pages.py's visitors do, and one into /attention's one-line box."""
    for page, shown, lines in (("padded-batch", "The cat sat.\nDogs bark.\nIt was tired.", 3), ("attention", "Hi.", 1)):
        s = FakeSession({})
        delta = Delta()
        delta.new_element.text_area.CopyFrom(TextArea(id="$$ID-b-text", value=shown, set_value=True))
        s._delta(delta, lt.RunResult(ms=0.0))
        asyncio.run(lt.act(s, page, "type", random.Random(0), 3, 2))
        typed = s.sent[0].widget_states.widgets[0].string_value.splitlines()
        assert [line[line.rindex("(") :] for line in typed] == ["(3.2)", "(3.2.1)", "(3.2.2)"][:lines], page


def test_else_a_slider_moves_to_a_value_on_its_grid():
    for seed in range(20):
        (w,) = act({"$$ID-a-layer": slider("$$ID-a-layer", 0.5, 2.0, 0.25, data_type=1)}, seed)
        (value,) = w.double_array_value.data
        assert 0.5 <= value <= 2.0 and ((value - 0.5) / 0.25).is_integer()
        (w,) = act({"$$ID-s-pick": slider("$$ID-s-pick", 0, 0, 0, options=["a", "b", "c"])}, seed)
        assert w.double_array_value.data[0] in (0, 1, 2)  # a select_slider's value is an option's index


def test_else_the_page_is_rerun_as_it_is():
    assert act({}) == []
    assert lp.name_of(lp.ONE_LINE, "") == lp.FLOOR and lp.name_of("app/main.py", "masks") == "/masks"
    assert "" in lp.catalog_pages() and "masks" in lp.catalog_pages()


def test_the_readme_table_puts_one_and_two_processes_side_by_side():
    def run(last_s, p50, p95, cpu):
        return {"join": {"last_sees_it_s": last_s}, "work": {"p50_ms": p50, "p95_ms": p95},
                "server_cpu_ms_per_action": cpu}  # fmt: skip

    result = {
        "config": {"sessions": 30},
        "by_processes": {
            "2": {lp.FLOOR: run(2.0, 100, 300, 40), "/masks": run(2.5, 150, 700, 60)},
            "1": {lp.FLOOR: run(3.0, 200, 500, 50), "/masks": run(4.0, 400, 1500, 100)},
        },
    }
    lines = lp.table(result).splitlines()
    assert lines[0].startswith("| Page | join of 30") and "(1 proc. / 2 proc.)" in lines[0]
    assert lines[2] == "| one-line app | 3.0 / 2.0 | 0.20, 0.50 / 0.10, 0.30 | 50 / 40 | 1.0 / 1.0 |"
    assert lines[3] == "| /masks | 4.0 / 2.5 | 0.40, 1.50 / 0.15, 0.70 | 100 / 60 | 2.0 / 1.5 |"


def test_a_later_run_of_one_page_takes_its_rows_place_and_says_so():
    def run(cpu):
        return {"join": {"last_sees_it_s": 1.0}, "work": {"p50_ms": 10, "p95_ms": 20}, "server_cpu_ms_per_action": cpu}

    whole = {"config": {"sessions": 30}, "command": "all", "date": "2026-11-27T23:31:00+00:00",
             "by_processes": {c: {lp.FLOOR: run(4), "/masks": run(30), "/sdpa-gqa": run(84)} for c in ("1", "2")}}  # fmt: skip
    later = {"command": "python scripts/load_pages.py --pages sdpa-gqa", "date": "2026-11-28T02:07:46+00:00",
             "git": "ae4ab81", "by_processes": {c: {lp.FLOOR: run(3), "/sdpa-gqa": run(41)} for c in ("1", "2")}}  # fmt: skip
    merged = lp.merge(whole, later, "results/later.json")
    rows = lp.table(merged).splitlines()
    assert rows[2:] == ["| one-line app | 1.0 / 1.0 | 0.01, 0.02 / 0.01, 0.02 | 4 / 4 | 1.0 / 1.0 |",
                        "| /masks | 1.0 / 1.0 | 0.01, 0.02 / 0.01, 0.02 | 30 / 30 | 7.5 / 7.5 |",
                        "| /sdpa-gqa (2026-11-28) | 1.0 / 1.0 | 0.01, 0.02 / 0.01, 0.02 | 41 / 41 | 13.7 / 13.7 |"]  # fmt: skip  # over its own run's 3 ms
    where = merged["by_processes"]["1"]["/sdpa-gqa"]["measured_in"]
    assert where == {"file": "results/later.json", "command": later["command"], "date": later["date"],
                     "git": "ae4ab81", "one_line_app_ms": 3}  # fmt: skip
    assert whole["by_processes"]["1"]["/sdpa-gqa"]["server_cpu_ms_per_action"] == 84  # the original is left as it was
    with pytest.raises(ValueError, match="process counts"):
        lp.merge({**whole, "by_processes": {"1": whole["by_processes"]["1"]}}, later, "x.json")


def test_the_sessions_run_with_the_clients_start_up_heap_left_out_of_its_collections(tmp_path, monkeypatch):
    frozen = []
    monkeypatch.setattr(lp, "measure", lambda *args: frozen.append(gc.get_freeze_count()) or {})
    assert lp.main(["--pages", "masks", "--processes", "1,2", "--out", str(tmp_path / "p.json")]) == 0
    assert len(frozen) == 4 and min(frozen) > 10_000 and gc.get_freeze_count() == 0
