"""The cost of generating one token after a context of L tokens, three ways, in one attention layer.

    rnn        linear attention in its RNN form: the state (S, z) has a fixed size; a step costs O(d^2) per head
    kv_cache   softmax attention with a KV cache: keys and values of earlier tokens are kept, a step projects only
               the new token and attends over the L cached keys: O(L d) per head
    no_cache   softmax attention without a cache: every step runs the layer again over the whole prefix (all
               positions, causal SDPA), as a model must when nothing is cached, since in a stack of layers every
               position's output feeds the next layer: O(L^2 d) per head per step

The layer has random weights (the cost does not depend on their values) and generation is autoregressive: the
input of token t + 1 is rms_norm(x_t + W_o attention_t), so no step can start before the previous one ended.
The prompt is read in one parallel pass (prefill) that is not timed; `decode` times the steps after it.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from .kernel import LinearAttentionState, causal_linear_attention, linear_attention_step, prefill_state

MODES = ("rnn", "kv_cache", "no_cache")


@dataclass
class ToyAttentionLayer:
    """One attention layer: x (n, d_model) -> q, k, v (H, n, d) -> attention -> W_o -> (n, d_model)."""

    w_qkv: torch.Tensor  # (d_model, 3 * d_model)
    w_o: torch.Tensor  # (d_model, d_model)
    n_heads: int

    @classmethod
    def random(
        cls, d_model: int = 576, n_heads: int = 9, seed: int = 0, device="cpu", dtype=torch.float32
    ) -> ToyAttentionLayer:
        """Defaults: SmolLM2-135M's attention width (576 = 9 heads x 64)."""
        if d_model % n_heads:
            raise ValueError("d_model must divide by n_heads")
        g = torch.Generator().manual_seed(seed)
        init = lambda *shape: (torch.randn(*shape, generator=g) / math.sqrt(shape[0])).to(device, dtype)  # noqa: E731
        return cls(init(d_model, 3 * d_model), init(d_model, d_model), n_heads)

    @property
    def d_model(self) -> int:
        return self.w_o.shape[0]

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_heads

    def project(self, x: torch.Tensor):
        """x (n, d_model) -> q, k, v each (H, n, d)."""
        n = x.shape[0]
        qkv = (x @ self.w_qkv).view(n, 3, self.n_heads, self.head_dim).permute(1, 2, 0, 3)
        return qkv[0], qkv[1], qkv[2]

    def merge(self, heads_out: torch.Tensor) -> torch.Tensor:
        """(H, n, d) -> (n, d_model) through W_o."""
        h, n, d = heads_out.shape
        return heads_out.transpose(0, 1).reshape(n, h * d) @ self.w_o

    def forward(self, x: torch.Tensor, kind: str) -> torch.Tensor:
        """The whole layer over x (n, d_model), causal; kind 'softmax' or 'linear'."""
        q, k, v = self.project(x)
        if kind == "softmax":
            out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            out = causal_linear_attention(q, k, v)
        return self.merge(out)


def next_input(x_t: torch.Tensor, o_t: torch.Tensor) -> torch.Tensor:
    """The residual stream carried to the next token: rms_norm(x_t + o_t). (d_model,) -> (d_model,)."""
    h = x_t + o_t
    return h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6)


@dataclass
class Prefilled:
    """Everything a decoder keeps after reading a prompt of `length` tokens, with room for `capacity` tokens."""

    mode: str
    length: int
    x_next: torch.Tensor  # input of the first generated token (d_model,)
    inputs: torch.Tensor  # (capacity, d_model): prompt, then generated inputs
    keys: torch.Tensor | None = None  # kv_cache: (H, capacity, d)
    values: torch.Tensor | None = None
    state: LinearAttentionState | None = None  # rnn


@torch.no_grad()
def prefill(layer: ToyAttentionLayer, prompt: torch.Tensor, mode: str, capacity: int) -> Prefilled:
    """Read `prompt` (L, d_model) in one parallel pass and keep what `mode` keeps, with room for
    capacity - L generated tokens."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}")
    length = prompt.shape[0]
    if capacity < length + 1:
        raise ValueError("capacity must leave room for at least one generated token")
    inputs = torch.zeros(capacity, layer.d_model, dtype=prompt.dtype, device=prompt.device)
    inputs[:length] = prompt
    kind = "linear" if mode == "rnn" else "softmax"
    out = layer.forward(prompt, kind)
    x_next = next_input(prompt[-1], out[-1])
    if mode == "rnn":
        _, k, v = layer.project(prompt)
        return Prefilled(mode, length, x_next, inputs, state=prefill_state(k, v))
    if mode == "kv_cache":
        _, k, v = layer.project(prompt)
        keys = torch.zeros(layer.n_heads, capacity, layer.head_dim, dtype=prompt.dtype, device=prompt.device)
        values = torch.zeros_like(keys)
        keys[:, :length], values[:, :length] = k, v
        return Prefilled(mode, length, x_next, inputs, keys=keys, values=values)
    return Prefilled(mode, length, x_next, inputs)


@torch.no_grad()
def decode(layer: ToyAttentionLayer, start: Prefilled, steps: int, budget_s: float | None = None):
    """Generate up to `steps` tokens after `start`; stop early once budget_s seconds were spent (at least one
    step). Returns (outputs (steps_done, d_model): the attention layer's output o_t of each generated token,
    seconds spent). `start` can be decoded again: the cache slots past the prompt are simply overwritten."""
    if start.length + steps > start.inputs.shape[0]:
        raise ValueError("not enough capacity for that many steps")
    x = start.x_next
    state = start.state
    outs = []
    t0 = time.perf_counter()
    for i in range(steps):
        t = start.length + i
        start.inputs[t] = x
        if start.mode == "no_cache":
            o = layer.forward(start.inputs[: t + 1], "softmax")[-1]
        else:
            q, k, v = layer.project(x.unsqueeze(0))  # (H, 1, d) each
            if start.mode == "rnn":
                out, state = linear_attention_step(state, q[:, 0], k[:, 0], v[:, 0])
                o = layer.merge(out.unsqueeze(1))[0]
            else:
                start.keys[:, t : t + 1], start.values[:, t : t + 1] = k, v
                out = F.scaled_dot_product_attention(q, start.keys[:, : t + 1], start.values[:, : t + 1])
                o = layer.merge(out)[0]
        outs.append(o)
        x = next_input(x, o)
        if x.is_cuda:
            torch.cuda.synchronize(x.device)
        if budget_s is not None and time.perf_counter() - t0 >= budget_s:
            break
    return torch.stack(outs), time.perf_counter() - t0


def tokens_per_second(
    layer: ToyAttentionLayer, context: int, mode: str, steps: int = 16, budget_s: float | None = None, seed: int = 0
) -> dict:
    """Generation speed after a random prompt of `context` tokens: one untimed warm-up step, then up to `steps`
    timed steps (fewer if budget_s runs out). Returns {mode, context, steps, seconds, tokens_per_s}."""
    g = torch.Generator().manual_seed(seed)
    prompt = torch.randn(context, layer.d_model, generator=g).to(layer.w_o.device, layer.w_o.dtype)
    start = prefill(layer, prompt, mode, context + steps + 1)
    decode(layer, start, 1)  # warm-up
    outs, seconds = decode(layer, start, steps, budget_s)
    done = outs.shape[0]
    return {
        "mode": mode,
        "context": context,
        "steps": done,
        "seconds": seconds,
        "tokens_per_s": done / seconds if seconds > 0 else float("inf"),
    }
