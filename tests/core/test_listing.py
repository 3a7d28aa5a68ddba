"""core/listing.py: name the first N, count the rest."""

from core.listing import named_and_counted


def test_names_up_to_one_more_than_the_limit_and_counts_the_rest_once_each():
    assert named_and_counted(["a", "b", "c"], 3) == (["a", "b", "c"], 0)  # N
    assert named_and_counted(["a", "b", "c", "d"], 3) == (["a", "b", "c", "d"], 0)  # N + 1: never "and 1 more"
    assert named_and_counted(["a", "b", "c", "d", "e"], 3) == (["a", "b", "c"], 2)  # N + 2
    assert named_and_counted(["b", "a", "b", "c", "a", "d", "e"], 3) == (["b", "a", "c"], 2)  # duplicates once
    assert named_and_counted(["a", "a", "a", "a", "a"], 1) == (["a"], 0)
    assert named_and_counted([], 5) == ([], 0)
