"""The models the pages can pick, by key.

    LOADERS[key]()     -> the model (an AttentionModel); raises ModelUnavailable when it cannot be loaded here
    TITLES[key]        -> its name for humans
    model_status()     -> {key: None if it can be loaded, else why not (with the install command)}

model_status() only looks for packages and files, it never reads weights, so a page can call it on every
run. A new model is one `register(...)` call in `_register_builtin` below, with a loader and a cheap status check
in its own module.
"""

from __future__ import annotations

from collections.abc import Callable

from .base import AttentionModel

LOADERS: dict[str, Callable[[], AttentionModel]] = {}
TITLES: dict[str, str] = {}
STATUS_CHECKS: dict[str, Callable[[], str | None]] = {}


def register(key: str, title: str, load: Callable[[], AttentionModel], status: Callable[[], str | None]) -> None:
    """Add a model. `status` must be cheap (no weights read): None = loadable, else a reason in words."""
    LOADERS[key] = load
    TITLES[key] = title
    STATUS_CHECKS[key] = status


def model_status() -> dict[str, str | None]:
    """{key: None if the model can be loaded here, else the reason, with the install command}."""
    out = {}
    for key in LOADERS:
        check = STATUS_CHECKS.get(key)
        out[key] = check() if check else None
    return out


def available() -> list[str]:
    """Keys of the models that can be loaded here, in registration order."""
    return [key for key, reason in model_status().items() if reason is None]


def _register_builtin() -> None:
    from . import minilm, moe_model, smollm2

    register("minilm", minilm.NAME, minilm.load_minilm, minilm.status)
    register("smollm2", smollm2.NAME, smollm2.load_smollm2, smollm2.status)
    register("moe", moe_model.NAME, moe_model.load_moe, moe_model.status)


_register_builtin()
