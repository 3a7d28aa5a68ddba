"""A figure's strongest cells, against hand-worked matrices."""

import numpy as np
import pytest

from core.figure_text import Cell, strongest_cells


def test_largest_cells_first_named_by_their_labels():
    weights = np.array([[0.1, 0.9, 0.0], [0.6, 0.3, 0.1]])  # rows: queries, columns: keys
    cells = strongest_cells(weights, ["it", "cat"], ["the", "cat", "mat"])
    assert cells == [Cell("it", "cat", 0.9), Cell("cat", "the", 0.6), Cell("cat", "cat", 0.3)]


def test_masked_cells_are_never_named_and_ties_keep_reading_order():
    scores = np.array([[np.nan, 2.0], [2.0, -np.inf]])
    assert strongest_cells(scores, k=3) == [Cell("0", "1", 2.0), Cell("1", "0", 2.0)]


def test_one_dimension_is_refused():
    with pytest.raises(ValueError):
        strongest_cells(np.ones(3))
