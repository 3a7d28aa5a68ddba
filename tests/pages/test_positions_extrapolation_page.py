"""/positions, part "extrapolation" through AppTest: the committed run's figure, table and verdict from a link."""

from core.positions.extrapolation import extrapolation_view, load_extrapolation
from tests.apptest_helpers import open_view, shown_text


def test_extrapolation_part_from_a_link():
    at = open_view("positions", {"part": "extrapolation"})
    text = shown_text(at)
    assert "the answer is the most recent marker so far" in text
    data = load_extrapolation()
    if data is None:
        assert "No committed run yet (results/position_extrapolation.json)" in text
        return
    view = extrapolation_view(data)
    best = {"sinusoidal": "sinusoidal (absolute)", "alibi": "ALiBi (relative)", "rope": "RoPE (relative)"}
    assert f"the best is {best[view.best_past]}, {view.past[view.best_past]:.1%} right" in text
    assert data["command"] in text
    # what the run shows, from the committed per-seed numbers: ALiBi's near-key preference carries past the
    # training length on this task, RoPE (the relative method that took over) does not without scaling
    past = {k: sum(r[k]["accuracy_past"] for r in data["runs"].values()) / len(data["runs"]) for k in ("alibi", "rope")}
    assert past["alibi"] > 0.9 > past["rope"]
    assert f"carries past the training length ({past['alibi']:.1%})" in text
    assert f"does not without scaling ({past['rope']:.1%};" in text
    assert "the measured reason relative positions took over" not in text
    table = next(d.value for d in at.dataframe if "past the training length, per seed" in d.value.columns)
    assert table.iloc[:, 2].tolist()[1] == "no vector: cannot run"  # learned, past its table
