"""Absolute links to the app's pages that a room hands out (the join link and its QR code, the projector view,
the recovery link): on the address learners reach the server by, $ATTENTION_LAB_PUBLIC_URL, when it is set."""

from __future__ import annotations

import os

import streamlit as st

PUBLIC_URL_ENV = "ATTENTION_LAB_PUBLIC_URL"  # where learners reach the server, e.g. https://lab.example.org/


def public_base(environ: dict | None = None) -> str | None:
    """$ATTENTION_LAB_PUBLIC_URL without its trailing slash (scheme, host, port and any path prefix the app is
    served under), or None when it is unset or not an http(s) address."""
    from urllib.parse import urlsplit

    raw = (environ if environ is not None else os.environ).get(PUBLIC_URL_ENV, "").strip()
    try:
        parts = urlsplit(raw)
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
        return None
    return f"{parts.scheme}://{parts.netloc}{parts.path.rstrip('/')}"


def link(path: str, params: dict) -> str:
    """An absolute link to one of the app's pages (join link, projector view, recovery link): on the configured
    public address when there is one; else on the address this visitor's browser shows (a laptop, a test), which
    behind a proxy or on a facilitator's localhost is not where learners can reach the server."""
    from urllib.parse import urlencode, urlsplit

    base = public_base()
    if base is None:
        here = urlsplit(st.context.url or "http://localhost:8501/")
        prefix = here.path.rsplit("/", 1)[0] if here.path.count("/") > 1 else ""
        base = f"{here.scheme}://{here.netloc}{prefix}"
    return f"{base}/{path.strip('/')}" + (f"?{urlencode(params)}" if params else "")
