"""viz/style.py: one palette, colours cycle, and the shared layout defaults land on the figure."""

import plotly.graph_objects as go

from viz import style


def test_colours_cycle_through_the_palette():
    n = len(style.PALETTE)
    assert [style.colour(i) for i in range(n)] == style.PALETTE
    assert style.colour(n) == style.PALETTE[0] and (style.BLUE, style.RED) == (style.PALETTE[0], style.PALETTE[3])
    assert style.MASKED_COLOUR != style.ALLOWED_COLOUR


def test_base_layout_sets_title_margins_and_background():
    fig = style.base_layout(go.Figure(), "A title", height=300, showlegend=False)
    assert fig.layout.title.text == "A title" and fig.layout.height == 300
    assert fig.layout.plot_bgcolor == "white" and fig.layout.showlegend is False
    assert (fig.layout.margin.l, fig.layout.margin.t) == (style.MARGIN["l"], style.MARGIN["t"])
