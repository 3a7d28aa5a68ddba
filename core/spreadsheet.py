"""Text that a spreadsheet will read: a CSV cell a visitor's words reach (a room's answers, a figure's labels) must
not run as a formula when a learner or a facilitator opens the file (CSV injection). One rule for every CSV the app
writes."""

from __future__ import annotations

import re

# = + - @ start a formula in Excel, LibreOffice and Google Sheets; a tab or a return before them is skipped by some;
# the full-width ＝＋－＠ are read as formulas too where an IME types them.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\uff1d", "\uff0b", "\uff0d", "\uff20")
PLAIN_NUMBER = re.compile(r"-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")


def safe_cell(value: str) -> str:
    """A spreadsheet cell that cannot run as a formula: text starting = + - @ (half or full width), a tab or a
    return gets a leading quote; a plain negative number (-0.25, -1e-3) stays a number."""
    if PLAIN_NUMBER.fullmatch(value):
        return value
    return "'" + value if value[:1] in FORMULA_STARTS else value
