"""Long lists in a sentence: name the first few, count the rest ("a, b, c and 295 more").

One rule for every such list (a link's unknown parameters, a sentence's unknown words); each caller keeps its own
limit. A reader sees each thing once, and never "and 1 more": naming that one takes no more room than counting it.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import TypeVar

Item = TypeVar("Item", bound=Hashable)


def named_and_counted(items: Iterable[Item], limit: int) -> tuple[list[Item], int]:
    """The distinct items in the order they first come: all of them when there are at most limit + 1, else the first
    `limit` of them and how many more there are."""
    distinct = list(dict.fromkeys(items))
    if len(distinct) <= limit + 1:
        return distinct, 0
    return distinct[:limit], len(distinct) - limit
