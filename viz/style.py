"""The app's one palette and layout defaults: every figure module takes its colours from here."""

from __future__ import annotations

import plotly.graph_objects as go
import plotly.io as pio

# Categorical colours: Okabe and Ito's palette (Wong, "Points of view: Color blindness", Nature Methods 8, 2011),
# in the order blue, orange, bluish green, vermillion, reddish purple, sky blue, yellow, black. Every pair stays
# apart for a protanope, a deuteranope and a tritanope (tests/viz/test_colour_vision.py); plotly's default order,
# used before, made orange and green one colour for a protanope and green and red nearly one for a deuteranope.
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"]
BLUE, ORANGE, GREEN, RED = PALETTE[:4]
MASKED_COLOUR = "#c8c8c8"  # cells a query may not see: not small weights, absent
ALLOWED_COLOUR = "#4292c6"  # cells a query may see, on mask diagrams (darker than MASKED_COLOUR)
WEIGHTS_SCALE = "Blues"  # attention weights in [0, 1]
DIVERGING_SCALE = "RdBu"  # signed values (scores, differences), centred on 0
SEQUENTIAL_SCALE = "Viridis"  # positive magnitudes that are not weights (entropy, pooled maps)
MARGIN = dict(l=10, r=10, t=50, b=10)
# A share drawn in % (an accuracy, an expert's load): labelled on its cell or bar, hovered and said to one decimal, as
# the pages' sentences say it (63.2%); core.figure_text reads the hover's decimals into the caption
SHARE_FORMAT = ".1%"
# a horizontal legend at the figure's foot (container coordinates; plotly grows the bottom margin for it): one set a
# share of the plot's height below the plot met the x axis's rotated labels and wrapped title on a phone
LEGEND_AT_FOOT = dict(orientation="h", yref="container", y=0, yanchor="bottom")


# The plotly template a page sends with every figure (app/ui.py), in place of the one plotly puts in each figure:
# Streamlit's (3.4 KB of JSON, a quarter of all the figures' bytes and three quarters of a small figure's), whose
# placeholder colours and layout Streamlit's theme rewrites in the browser, where it also sets every figure's fonts,
# grid, axes and backgrounds (theme="streamlit"; the browser makes them whether a template is sent or not). What our
# figures take from a template is the colour of a trace that names none (a marker-only scatter's open circles on
# /kv-cache): PALETTE, as every colour named here. Every heatmap names its colour scale, every bar its colours.
PAGE_TEMPLATE = {"layout": {"colorway": PALETTE}}


def colour_bar(title: str, **more) -> dict:
    """A heatmap's colour bar: thin, its title standing up its right side. A title set across its top widens the bar
    to the title's width: on a 390 px phone /logit-lens' 'p (final prediction)' took a third of the figure from its
    map."""
    return dict(title=dict(text=title, side="right"), thickness=12, **more)


def colour(i: int) -> str:
    """The i-th categorical colour, cycling."""
    return PALETTE[i % len(PALETTE)]


def figure_bytes(fig: go.Figure) -> int:
    """Bytes of the plotly JSON Streamlit sends to the browser for this figure (the budget is 1 MB per view)."""
    return len(pio.to_json(fig, validate=False).encode("utf-8"))


def base_layout(fig: go.Figure, title: str = "", height: int | None = None, **layout) -> go.Figure:
    """Title, margins and a white background, the same on every figure."""
    fig.update_layout(title=title, margin=MARGIN, plot_bgcolor="white", height=height, **layout)
    return fig


def base_layout_dict(title: str = "", height: float | None = None, **layout) -> dict:
    """What base_layout sets, as a plain layout dict (for a figure built unvalidated: viz.heatmap.figure)."""
    return dict(title=dict(text=title), margin=dict(MARGIN), plot_bgcolor="white", **layout) | (
        {} if height is None else dict(height=height)
    )
