"""viz/positions/circle.py: points on a circle coloured by position, with a guide circle of their radius, highlighted
indices and equal axis scales, read back from the figure."""

import numpy as np

from viz.positions.circle import circle_figure


def test_points_guide_and_highlights():
    angles = np.arange(6) * 0.7
    points = 2.0 * np.stack([np.cos(angles), np.sin(angles)], 1)
    fig = circle_figure(
        points, highlight=[(3, "<b>p</b>")], title="pair", x_title="cos", y_title="sin", colour_title="position"
    )
    guide, path, mark = fig.data
    np.testing.assert_allclose(np.hypot(guide.x, guide.y), 2.0)  # the guide has the points' radius
    np.testing.assert_allclose(path.x, points[:, 0], atol=1e-6)
    np.testing.assert_allclose(path.y, points[:, 1], atol=1e-6)
    assert list(path.marker.color) == list(range(6))  # coloured by position
    assert path.marker.colorbar.title.text == "position"
    np.testing.assert_allclose([mark.x[0], mark.y[0]], points[3], atol=1e-12)
    assert list(mark.text) == ["&lt;b&gt;p&lt;/b&gt;"]
    assert fig.layout.xaxis.title.text == "cos" and fig.layout.yaxis.title.text == "sin"
    assert fig.layout.yaxis.scaleanchor == "x" and fig.layout.yaxis.scaleratio == 1


def test_highlight_labels_stand_toward_the_centre_and_apart():
    """On /positions the two colliding positions sit near (1, 0): labelled on their right, 'p = 14' was cut at the
    plot's edge to 'p=', and the two labels lay on each other."""
    points = np.array([[1.0, 0.01], [0.0, 1.0], [0.9998, -0.02], [-1.0, 0.0]])
    fig = circle_figure(points, highlight=[(0, "p = 0"), (2, "p = 2"), (3, "p = 3")], title="pair", x_title="sin",
                        y_title="cos", colour_title="position")  # fmt: skip
    first, second, left_point = fig.data[2:]
    assert first.textposition == "top left" and second.textposition == "bottom left"  # inward, one above one below
    assert left_point.textposition == "top right"  # a point on the left: its label to its right, inward too
