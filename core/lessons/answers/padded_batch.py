"""/padded-batch: the link's sentences as one padded batch through its model (padding side, mask or not), and the
check against each sentence run alone, as the page computes them."""

from __future__ import annotations

import functools

from core import padded_batch as core
from core.lessons.answers.base import number, register
from core.lessons.kinds import Answer

PAGE = "padded-batch"


def _key(s) -> tuple:
    """The step's batch as a cache key (the model loaded first, so its serial is the loaded one's)."""
    from core.models import registry

    max_tokens = s.max_tokens
    return s.model, registry.serial(s.model), tuple(s.lines), max_tokens, s.pad, s.nomask


def _run(s) -> core.BatchRun:
    return _batch(*_key(s))


def _report(s) -> tuple[core.BatchRun, list[dict]]:
    return _batch(*_key(s)), _checked(*_key(s))


@functools.lru_cache(maxsize=4)
def _batch(key: str, serial: int, lines: tuple[str, ...], max_tokens: int, side: str, unmasked: bool):
    """The batch as the page runs it (the same model object as the page's: registry.shared)."""
    from core.models import registry

    return core.run_batch(registry.shared(key), list(lines), max_tokens, side, not unmasked)


@functools.lru_cache(maxsize=4)
def _checked(key: str, serial: int, lines: tuple[str, ...], max_tokens: int, side: str, unmasked: bool):
    """The page's check of that batch: each sentence against its run alone."""
    from core.models import registry

    batch_run = _batch(key, serial, lines, max_tokens, side, unmasked)
    return core.padding_report(registry.shared(key), batch_run.trace, max_tokens, batch_run.real)


@register("padded_batch.pad_tokens", "number", PAGE, core.STATE)
def padded_batch_pad_tokens(params, s):
    """Padding tokens the whole batch carries: each sentence is padded to the longest one's token count (details:
    `width`, the padded length, and `lengths`, each sentence's real tokens)."""
    batch_run = _run(s)
    lengths = [batch_run.length(i) for i in range(len(s.lines))]
    width = int(batch_run.real.shape[1])
    return number(batch_run.padding, params, 0, width=width, lengths=", ".join(map(str, lengths)))


@register("padded_batch.pad_weight", "number", PAGE, core.STATE)
def padded_batch_pad_weight(params, s):
    """The largest weight any real query gives a padded key, over every sentence, layer and head of the batch
    (details: `heads`, how many heads were checked)."""
    batch_run, report = _report(s)
    result = core.verdict(report, batch_run.trace)
    return number(result.pad, params, 1e-3, heads=result.heads)


@register("padded_batch.matches_alone", "choice", PAGE, core.STATE)
def padded_batch_matches_alone(params, s):
    """Does every sentence's attention in the batch equal its run alone ('yes': no weight on a padded key, and every
    real token's weights within core.padded_batch.DIFF_TOLERANCE in every layer and head)? Details: `pad`, the
    largest weight on a padded key, and `diff`, the largest difference from the run alone."""
    batch_run, report = _report(s)
    result = core.verdict(report, batch_run.trace)
    return Answer("choice", "yes" if result.ok else "no", ("yes", "no"), None,
                  {"pad": round(result.pad, 3), "diff": round(result.diff, 3)})  # fmt: skip
