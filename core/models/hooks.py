"""One hook layer for every look inside a forward pass, in the spirit of TransformerLens' hook points.

    with model.hooked(record_qk=True, head_edits={layer: edit}, residual=True) as run:
        model.model(...)            # any forward pass of this model, in this thread
    run.kept[layer]                 # (q, k, scaling) as the model computed them (after RoPE, before GQA repeat)
    run.features[layer]             # the layer's sliding window, soft-cap, sinks (LayerFeatures)
    run.streams                     # residual stream: [input of layer 0, ..., input of layer L-1, output of L-1]

Three points, found once per model by the structure every transformers family shares:
- q and k: the attention function the model calls through transformers' AttentionInterface (core/models/hf.py);
- each head's output Z_h: a pre-hook on the layer's output projection W^O, whose input is the heads side by side
  (B, n, H·d); `head_edits[layer](z)` gets z as (B, n, H, d) and returns the replacement (or None: read only);
- the residual stream: pre-hooks on each block (its input) and a hook on the last block (its output);
- after each block: `after_block(layer)` (progress of a long pass);
- the rotary embedding (RoPE models): `rotary` replaces the cos/sin the model's own rotary module computes, so a
  scaled RoPE (core/models/rope_scaling.py) runs in this pass only, never in another visitor's.

Session-safe without a global flag: the hooks stay registered on the shared model and act only for the HookRun
held in this thread's context (a ContextVar), so another visitor's pass through the same model runs untouched.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field

import torch

# Where families keep their blocks (on the base model) and, inside a block, the output projection W^O.
BLOCK_PATHS = ("layers", "h", "encoder.layer", "encoder.layers", "blocks", "transformer.layer")
OUTPUT_PROJECTION_PATHS = (
    "self_attn.o_proj",  # Llama, Mistral, Qwen, Gemma, Phi-3, Mixtral, gpt-oss
    "self_attn.out_proj",  # BART, Marian
    "attention.output.dense",  # BERT, RoBERTa
    "attn.c_proj",  # GPT-2
    "attn.out_proj",  # GPT-J, CodeGen
    "self_attention.dense",  # Bloom
    "attention.dense",  # GPT-NeoX
    "attention.out_lin",  # DistilBERT
)
FINAL_NORM_PATHS = ("norm", "ln_f", "final_layer_norm", "final_layernorm")


@dataclass
class HookRun:
    """What one `hooked` block asks for and what its passes left behind."""

    owner: object  # the transformers module whose passes this run watches
    record_qk: bool = False
    record_layers: frozenset[int] | None = None  # None: every layer
    stop_after: int | None = None  # end the pass once this layer's q and k are kept
    head_edits: dict[int, Callable[[torch.Tensor], torch.Tensor | None]] = field(default_factory=dict)
    residual: bool = False
    after_block: Callable[[int], None] | None = None
    rotary: torch.nn.Module | None = None  # called as the model's rotary module: (x, position_ids) -> (cos, sin)
    calls: int = 0
    kept: dict[int, tuple] = field(default_factory=dict)
    features: dict[int, object] = field(default_factory=dict)
    streams: list[torch.Tensor] = field(default_factory=list)


class StopForward(Exception):
    """Ends a forward pass early (raised after the wanted layer's q and k are kept)."""


_active: contextvars.ContextVar[HookRun | None] = contextvars.ContextVar("attention_lab_hooks", default=None)
_install_lock = threading.Lock()


def active_for(module) -> HookRun | None:
    run = _active.get()
    return run if run is not None and run.owner is module else None


def attention_call(attention_module, query, key, scaling, features) -> None:
    """Called by the recording attention function at every layer of every pass (cheap when nothing is active)."""
    run = _active.get()
    if run is None or getattr(attention_module, "_attention_lab_owner", None) is not run.owner:
        return
    layer = run.calls
    run.calls += 1
    run.features[layer] = features
    if run.record_qk and (run.record_layers is None or layer in run.record_layers):
        run.kept[layer] = (query.detach(), key.detach(), scaling)
    if layer == run.stop_after:
        raise StopForward


def _get(module, path: str):
    for name in path.split("."):
        module = getattr(module, name, None)
        if module is None:
            return None
    return module


def blocks(base) -> list[torch.nn.Module]:
    """The model's blocks in order (each: attention + feed-forward with their residual connections)."""
    for path in BLOCK_PATHS:
        found = _get(base, path)
        if isinstance(found, torch.nn.ModuleList) and len(found):
            return list(found)
    raise ValueError(f"{type(base).__name__}: no list of blocks found")


def output_projections(base) -> list[torch.nn.Module]:
    """Per block, W^O: the map whose input is the heads' outputs side by side, (B, n, H·d)."""
    out = []
    for block in blocks(base):
        found = next((p for p in (_get(block, path) for path in OUTPUT_PROJECTION_PATHS) if p is not None), None)
        if found is None:
            raise ValueError(f"{type(block).__name__}: no attention output projection found")
        out.append(found)
    return out


def final_norm(base):
    return next((n for n in (_get(base, path) for path in FINAL_NORM_PATHS) if n is not None), None)


def install(module, base, n_heads: int) -> str | None:
    """Register the permanent hooks on `module` once (idempotent, thread-safe). They do nothing unless a HookRun
    for `module` is active in the calling thread. Returns why head edits and the residual stream are unavailable
    for this structure (None when they are); q and k are recorded whatever the structure."""
    with _install_lock:
        if hasattr(module, "_attention_lab_hooks"):
            return module._attention_lab_hooks
        for sub in module.modules():  # the attention function learns whose pass it is in from its module
            object.__setattr__(sub, "_attention_lab_owner", module)  # a plain attribute, not a child module
        rotary = getattr(base, "rotary_emb", None)
        if isinstance(rotary, torch.nn.Module):

            def rotary_output(_, args, kwargs, out):
                run = active_for(module)
                return None if run is None or run.rotary is None else run.rotary(*args, **kwargs)

            rotary.register_forward_hook(rotary_output, with_kwargs=True)
        try:
            block_list = blocks(base)
            projections = output_projections(base)
        except ValueError as err:
            module._attention_lab_hooks = str(err)
            return module._attention_lab_hooks

        def edit_heads(layer: int):
            def pre_hook(_, args):
                run = active_for(module)
                if run is None or layer not in run.head_edits:
                    return None
                x = args[0]  # (B, n, H d)
                z = x.reshape(*x.shape[:-1], n_heads, x.shape[-1] // n_heads)  # (B, n, H, d)
                replaced = run.head_edits[layer](z)
                return None if replaced is None else (replaced.reshape(x.shape).to(x.dtype), *args[1:])

            return pre_hook

        def block_input(_, args, kwargs):
            run = active_for(module)
            if run is not None and run.residual:
                run.streams.append(args[0] if args else kwargs["hidden_states"])

        def last_output(_, args, out):
            run = active_for(module)
            if run is not None and run.residual:
                run.streams.append(out[0] if isinstance(out, tuple) else out)

        for layer, projection in enumerate(projections):
            projection.register_forward_pre_hook(edit_heads(layer))

        def block_done(layer: int):
            def hook(*_):
                run = active_for(module)
                if run is not None and run.after_block is not None:
                    run.after_block(layer)

            return hook

        for layer, block in enumerate(block_list):
            block.register_forward_pre_hook(block_input, with_kwargs=True)
            block.register_forward_hook(block_done(layer))
        block_list[-1].register_forward_hook(last_output)
        module._attention_lab_hooks = None
        return None


@contextmanager
def hooked(module, base, n_heads: int, **asked):
    """Within the block, this thread's passes through `module` are watched as `asked` (HookRun's fields).
    ValueError when head edits or the residual stream are asked of a structure that has no place for them."""
    problem = install(module, base, n_heads)
    if problem and (asked.get("head_edits") or asked.get("residual")):
        raise ValueError(f"no head outputs or residual stream to hook here: {problem}")
    if asked.get("rotary") is not None and not isinstance(getattr(base, "rotary_emb", None), torch.nn.Module):
        raise ValueError(f"{type(base).__name__} has no rotary embedding module to scale")
    run = HookRun(owner=module, **asked)
    token = _active.set(run)
    try:
        yield run
    finally:
        _active.reset(token)
