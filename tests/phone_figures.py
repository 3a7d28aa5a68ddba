"""Checks of a sent figure (its dict, as st.plotly_chart sends it) for what a 390 px phone would crowd: pure, so
viz tests use them on a builder's figure and page tests on every page's."""

from __future__ import annotations


def titles_too_wide_for_a_phone(figure: dict) -> list[tuple[str, str, int, int]]:
    """(where, line, columns, columns that fit) for each line of a sent figure's x axis titles and make_subplots'
    panel titles wider than it has on a 390 px phone, by viz.labels' estimate (a column is COLUMN_EM of the type's
    size: viz.labels.label_columns): an axis's or a panel's title across its share; and ("title", ...) where the
    figure was sent with its own title (the page sets it above the figure, where the browser wraps it)."""
    from viz import labels

    layout = figure.get("layout", {})
    font = (layout.get("font") or {}).get("size") or 12
    found = [("title", str(layout["title"]), 0, 0)] if "title" in layout else []

    def check(where: str, title, share: float, default_px: float) -> None:
        title = title if isinstance(title, dict) else {"text": title}
        size = (title.get("font") or {}).get("size") or default_px
        fit = int(labels.PHONE_FIGURE_PX * share / (labels.COLUMN_EM * size))
        for line in str(title.get("text") or "").split("<br>"):
            if labels.label_columns(line) > fit:
                found.append((where, line, labels.label_columns(line), fit))

    panels = []  # (x domain, top of its y axis's domain) of each panel
    for name, axis in layout.items():
        if name.startswith("xaxis") and isinstance(axis, dict):
            lo, hi = axis.get("domain", (0, 1))
            y_axis = layout.get("yaxis" + str(axis.get("anchor", "y"))[1:], {})
            panels.append((lo, hi, y_axis.get("domain", (0, 1))[1]))
            check(name, axis.get("title") or {}, hi - lo, font * 14 / 12)
    for note in layout.get("annotations") or ():
        if note.get("yanchor") == "bottom" and note.get("xanchor") == "center" and note.get("showarrow") is False:
            x, y = note.get("x", -1), note.get("y", -1)
            share = min((hi - lo for lo, hi, top in panels if lo <= x <= hi and abs(top - y) < 1e-3), default=1)
            check("panel", {"text": note.get("text"), "font": note.get("font")}, share, 16)
    return found


def placed_in_the_way_on_a_phone(figure: dict) -> list[str]:
    """What a figure places where, on a 390 px phone, it lies on other text: a horizontal legend set a share of the
    plot's height below the plot (paper coordinates, y < 0) meets the x axis's rotated labels and wrapped title, as
    a phone shortens the plot (viz.style.LEGEND_AT_FOOT sets it at the figure's foot instead); a standing colour bar
    whose title runs across its top is widened to that title and takes the plot's width (viz.style.colour_bar)."""
    found = []
    legend = figure.get("layout", {}).get("legend") or {}
    y = legend.get("y", -0.1)  # plotly's own place for a horizontal legend: below the plot
    if legend.get("orientation") == "h" and legend.get("yref", "paper") == "paper" and y < 0:
        found.append(f"legend at y={y} of the plot")
    for trace in figure.get("data", ()):
        for bar in (trace.get("colorbar"), (trace.get("marker") or {}).get("colorbar")):
            title = (bar or {}).get("title") or {}
            if title.get("text") and bar.get("orientation", "v") == "v" and title.get("side") != "right":
                found.append(f"colour bar titled {title['text']!r} across its top")
    return found
