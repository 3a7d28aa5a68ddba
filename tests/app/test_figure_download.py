"""The camera button's download: the page sets each figure's title above it as its text, so the image plotly draws
carries none; its file is named by that title (app/ui.download_name), not by the page's identifier."""

import json

import plotly.graph_objects as go

from app import ui
from tests.apptest_helpers import assert_no_exception, run_view, shown_figures


def test_a_figures_download_is_named_by_its_title_as_plain_text():
    fig = go.Figure(
        layout=dict(title=dict(text="Step 5: the <b>new</b> token&#39;s weights / keys?", subtitle=dict(text="x")))
    )
    assert ui.download_name(fig, "kv-step") == "Step 5 the new token's weights keys"
    korean = {"layout": {"title": {"text": "텍스트 내 위치에 따른 손실(64개 토큰 블록 평균)"}}}
    assert ui.download_name(korean, "xl") == "텍스트 내 위치에 따른 손실(64개 토큰 블록 평균)"
    long = {"layout": {"title": {"text": " ".join(["attention"] * 30)}}}
    assert ui.download_name(long, "x") == " ".join(["attention"] * 10)  # cut at a word: 99 characters of 100 at most
    assert ui.download_name(go.Figure(), "kv-step") == "kv-step"  # no title: the page's name for it


def test_every_camera_button_on_a_page_names_its_image_by_the_title_shown_above_it():
    at = run_view("sdpa_steps")
    assert_no_exception(at)
    charts = {e.proto.id: json.loads(e.proto.config) for e in at.get("plotly_chart")}
    figures = shown_figures(at)
    assert len(figures) >= 3
    for shown in figures:
        options = charts[shown.id]["toImageButtonOptions"]
        assert shown.title and options["filename"] == ui.download_name({"layout": {"title": shown.title}}, "")
        assert options["format"] == "png" and options["scale"] == 2
