"""How wide a page fits a figure for a browser (app/ui.figure_px): by the kind of screen its User-Agent says it has,
the narrowest column that kind draws (measured: results/tablet_layout.json), or a figure's own width beside others."""

import contextlib

import plotly.graph_objects as go
import pytest
from plotly.subplots import make_subplots

from app import ui
from core.results import load_result
from scripts.phone_layout_check import DEVICES
from viz.labels import LAPTOP_FIGURE_PX, PHONE_FIGURE_PX, TABLET_FIGURE_PX, beside_px

IPHONE = (
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 "
    "Mobile/15E148 Safari/604.1"
)
ANDROID_PHONE = (
    "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile "
    "Safari/537.36"
)
FIREFOX_ANDROID_PHONE = "Mozilla/5.0 (Android 14; Mobile; rv:126.0) Gecko/126.0 Firefox/126.0"
ANDROID_TABLET = (
    "Mozilla/5.0 (Linux; Android 14; SM-X710) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36"
)
FIREFOX_ANDROID_TABLET = "Mozilla/5.0 (Android 14; Tablet; rv:126.0) Gecko/126.0 Firefox/126.0"
IPAD_MOBILE_SITE = (  # an iPad asking for mobile sites says Mobile too
    "Mozilla/5.0 (iPad; CPU OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 "
    "Mobile/15E148 Safari/604.1"
)
MAC_SAFARI = (  # what an iPad's Safari sends by default, and a Mac's
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 "
    "Safari/605.1.15"
)
MAC_CHROME = (
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 "
    "Safari/537.36"
)
MAC_EDGE = MAC_CHROME + " Edg/126.0.0.0"
MAC_FIREFOX = "Mozilla/5.0 (Macintosh; Intel Mac OS X 14.5; rv:126.0) Gecko/20100101 Firefox/126.0"
WINDOWS_CHROME = (
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36"
)
HEADLESS = (
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/126.0.0.0 Safari/537.36"
)


@pytest.mark.parametrize(
    "agent, kind",
    [
        (IPHONE, "phone"),
        (ANDROID_PHONE, "phone"),
        (FIREFOX_ANDROID_PHONE, "phone"),
        ("", "phone"),  # says nothing: a phone's fit fits any screen
        ("   ", "phone"),
        (ANDROID_TABLET, "tablet"),  # Android without Mobile
        (FIREFOX_ANDROID_TABLET, "tablet"),
        (IPAD_MOBILE_SITE, "tablet"),
        (MAC_SAFARI, "tablet"),  # an iPad's Safari: the server cannot tell it from a Mac's
        (MAC_CHROME, "laptop"),
        (MAC_EDGE, "laptop"),
        (MAC_FIREFOX, "laptop"),
        (WINDOWS_CHROME, "laptop"),
        (HEADLESS, "laptop"),
        ("curl/8.5.0", "laptop"),
        ("<script>alert(1)</script>" + "x" * 5000, "laptop"),
    ],
)
def test_each_kind_of_screen_by_what_its_browser_says(agent, kind):
    assert ui.device_kind(agent) == kind
    assert (
        ui.figure_px_for(agent)
        == {"phone": PHONE_FIGURE_PX, "tablet": TABLET_FIGURE_PX, "laptop": LAPTOP_FIGURE_PX}[kind]
    )


def test_no_screen_measured_gets_a_figure_wider_than_its_column():
    """Every device of results/tablet_layout.json (chromium, its window and its browser's User-Agent): the page fitted
    its figures, as the rule now says, for no more than the column its page drew (an iPad's 488 px, fitted 640 by the
    rule before; an 800 px Android tablet's 468, fitted as a phone's 358 before: its model view's grid drawn at 63% of
    its width). The file was measured with the rule as it is (fitted_px of each visit), by the script's own devices."""
    measured = load_result("tablet_layout")
    assert {"command", "date", "loadavg_before", "loadavg_after"} <= set(measured)
    assert set(measured["devices"]) >= {"ipad-portrait", "android-tablet", "phone-landscape", "desktop-1100"}
    for name, device in measured["devices"].items():
        assert (device["width"], device["height"], device["user_agent"]) == DEVICES[name]
        visits = [v for v in measured["per_visit"] if v["device"] == name]
        assert visits and all(v["fitted_px"] == ui.figure_px_for(device["user_agent"]) for v in visits), name
        assert ui.figure_px_for(device["user_agent"]) <= min(v["column_px"] for v in visits), name
    assert measured["visits_with_findings"] == sum(bool(v["found"]) for v in measured["per_visit"])


def test_a_figure_beside_others_is_fitted_for_its_own_width(monkeypatch):
    """In one of ui.beside(3)'s blocks a figure is drawn beside_px(3) wide at most (the browser wraps the row where
    its column is narrower): fitted for that on a laptop (three panels' titles cut), for a phone's where that is
    narrower; outside it, for the browser's screen again. A shared figure keeps one fit per width asked."""
    monkeypatch.setattr(ui, "figure_px_for", lambda agent: LAPTOP_FIGURE_PX)

    def grid():
        return make_subplots(rows=1, cols=3, subplot_titles=["Q_0 (13 × 32)", "K_0 (13 × 32)", "V_0 (13 × 32)"])

    def title(fig):
        return ui._fitted(fig).to_dict()["layout"]["annotations"][0]["text"]

    shared = ui.read_only(grid())
    block = ui._Beside(contextlib.nullcontext(), beside_px(3))
    assert ui.figure_px() == LAPTOP_FIGURE_PX and title(shared) == title(grid()) == "Q_0 (13 × 32)"
    with block:
        assert ui.figure_px() == beside_px(3) < LAPTOP_FIGURE_PX
        assert title(shared) == title(grid()) != "Q_0 (13 × 32)"
        monkeypatch.setattr(ui, "figure_px_for", lambda agent: 200)  # a screen narrower than the block
        assert ui.figure_px() == 200
    monkeypatch.setattr(ui, "figure_px_for", lambda agent: LAPTOP_FIGURE_PX)
    assert ui.figure_px() == LAPTOP_FIGURE_PX and title(shared) == "Q_0 (13 × 32)"
    plain = ui.read_only(go.Figure(go.Bar(y=[1, 2])))
    laptop = plain.to_dict()
    with block:
        assert plain.to_dict() is laptop  # fitted alike: one kept
