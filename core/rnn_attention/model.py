"""Before the Transformer: a GRU encoder-decoder with additive (Bahdanau) attention, in plain torch.

Bahdanau, Cho & Bengio (2015), "Neural machine translation by jointly learning to align and translate", reduced to
what the generated English -> Japanese / Korean task needs (core/encoder_decoder/grammar.py; the same tokenizer and
batches as the shipped Transformer, core/encoder_decoder/model.py):

    encoder   x_j = E[source_j]                      (S, e)   one embedding table for both sides, as the Transformer
              ->h_j = GRU(x_j, ->h_{j-1})            (S, H)   left to right, one step after another
              <-h_j = GRU(x_j, <-h_{j+1})            (S, H)   right to left
              h_j = [->h_j ; <-h_j]                  (S, 2H)  the annotations: keys and values of the attention
    decoder   s_0 = tanh(W_init ->h_S)                        the forward encoder's last state: the only way a
                                                              source word reaches the decoder WITHOUT attention
              at step t (predicting target t from target t-1):
              e_tj = v . tanh(W_q s_{t-1} + W_k h_j)         additive score of query s_{t-1} with key h_j
              a_t = softmax_j(e_t)                   (S,)    the alignment (masked on padding)
              c_t = sum_j a_tj h_j                   (2H,)   the context: a weighted sum of encoder states
              s_t = GRU([E[y_{t-1}] ; c_t], s_{t-1})
              logits_t = W_out [s_t ; c_t ; E[y_{t-1}]]

The GRU cell is written out (gru_cell) with torch.nn.GRUCell's parameter layout and gate order (r, z, n), so the
tests can load the same weights into torch's own cell. Unlike the paper's maxout output layer, the output is one
linear map; unlike the paper's s_0 (from the backward encoder's first state), s_0 comes from the forward encoder's
last state, so that the path from a source word to the decoder without attention is one chain of recurrent steps
(the gradient measurement follows it).
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path

import torch
from torch import nn

from ..encoder_decoder import model as ed
from ..encoder_decoder import training
from ..models.base import Reason
from ..models.registry import ModelRecord

WEIGHTS_DIR = Path(__file__).resolve().parents[2] / "data" / "rnn_attention"
MAX_LENGTH = ed.MAX_LENGTH


@dataclass(frozen=True)
class Shape:
    vocab: int = 313
    embed: int = 64  # e
    hidden: int = 64  # H per encoder direction: annotations have 2H = 128, the Transformer's d_model
    decoder: int = 128  # decoder state s_t
    attention: int = 128  # width of W_q s and W_k h inside the additive score

    @property
    def state_width(self) -> int:
        """2H: one annotation h_j = [->h_j ; <-h_j], what attention reads per source token."""
        return 2 * self.hidden

    def attended_numbers(self, states: int) -> int:
        """Numbers the decoder may read from the encoder at each step with attention: every annotation, S x 2H.
        Without attention it has the forward encoder's last state alone: H numbers, however long the sentence."""
        return states * self.state_width


def gru_cell(x: torch.Tensor, h: torch.Tensor, w_ih, w_hh, b_ih, b_hh) -> torch.Tensor:
    """One GRU step (Cho et al. 2014), torch.nn.GRUCell's equations and layout: w_ih (3H, in), w_hh (3H, H), rows
    in gate order reset r, update z, candidate n.
        r = sigmoid(W_ir x + b_ir + W_hr h + b_hr)
        z = sigmoid(W_iz x + b_iz + W_hz h + b_hz)
        n = tanh(W_in x + b_in + r * (W_hn h + b_hn))
        h' = (1 - z) * n + z * h
    x (B, in), h (B, H) -> (B, H)."""
    gi = x @ w_ih.T + b_ih  # (B, 3H)
    gh = h @ w_hh.T + b_hh  # (B, 3H)
    i_r, i_z, i_n = gi.chunk(3, -1)
    h_r, h_z, h_n = gh.chunk(3, -1)
    r = torch.sigmoid(i_r + h_r)
    z = torch.sigmoid(i_z + h_z)
    n = torch.tanh(i_n + r * h_n)
    return (1 - z) * n + z * h


class GRUCell(nn.Module):
    """Parameters named and initialised as torch.nn.GRUCell's (uniform in +-1/sqrt(H)); the step is gru_cell."""

    def __init__(self, inputs: int, hidden: int):
        super().__init__()
        self.hidden = hidden
        bound = 1 / math.sqrt(hidden)
        self.weight_ih = nn.Parameter(torch.empty(3 * hidden, inputs).uniform_(-bound, bound))
        self.weight_hh = nn.Parameter(torch.empty(3 * hidden, hidden).uniform_(-bound, bound))
        self.bias_ih = nn.Parameter(torch.empty(3 * hidden).uniform_(-bound, bound))
        self.bias_hh = nn.Parameter(torch.empty(3 * hidden).uniform_(-bound, bound))

    def forward(self, x: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        return gru_cell(x, h, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)


def additive_scores(query: torch.Tensor, keys: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """e_j = v . tanh(query + keys_j), with query = W_q s (B, A) and keys = W_k h (B, S, A) already projected:
    -> (B, S)."""
    return torch.tanh(query[:, None, :] + keys) @ v


def attend(scores: torch.Tensor, values: torch.Tensor, mask: torch.Tensor | None = None):
    """softmax over the source positions, then the weighted sum of the values: the step every attention shares,
    whatever its score (additive here, scaled dot product in the Transformer). scores (B, S), values (B, S, D),
    mask (B, S) true on real tokens -> (context (B, D), weights (B, S))."""
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, -1)
    return (weights[:, None, :] @ values)[:, 0], weights


@dataclass
class Encoded:
    annotations: torch.Tensor  # (B, S, 2H): [->h_j ; <-h_j], the keys' and values' source
    keys: torch.Tensor  # (B, S, A): W_k h_j, computed once per sentence
    mask: torch.Tensor  # (B, S) true on real tokens
    state: torch.Tensor  # (B, D): s_0
    forward_states: torch.Tensor  # (B, S, H): ->h_j (the gradient measurement reads the last one)


class RNNSearch(nn.Module):
    """The encoder-decoder of the module docstring (Bahdanau et al. called theirs RNNsearch)."""

    def __init__(self, shape: Shape = Shape(), pad_id: int = 0):
        super().__init__()
        self.shape, self.pad_id = shape, pad_id
        self.embed = nn.Embedding(shape.vocab, shape.embed)
        self.enc_fwd = GRUCell(shape.embed, shape.hidden)
        self.enc_bwd = GRUCell(shape.embed, shape.hidden)
        self.init = nn.Linear(shape.hidden, shape.decoder)
        self.w_q = nn.Linear(shape.decoder, shape.attention, bias=False)
        self.w_k = nn.Linear(2 * shape.hidden, shape.attention)
        self.v = nn.Parameter(torch.empty(shape.attention).uniform_(-0.1, 0.1))
        self.dec = GRUCell(shape.embed + 2 * shape.hidden, shape.decoder)
        self.out = nn.Linear(shape.decoder + 2 * shape.hidden + shape.embed, shape.vocab)

    def encode(self, source_ids: torch.Tensor, inputs: torch.Tensor | None = None) -> Encoded:
        """source_ids (B, S), padding after the tokens. `inputs` (B, S, e) replaces the embeddings (the gradient
        measurement differentiates with respect to them). Padded steps leave the state unchanged."""
        x = self.embed(source_ids) if inputs is None else inputs
        mask = source_ids != self.pad_id
        B, S, _ = x.shape
        h = x.new_zeros(B, self.shape.hidden)
        fwd = []
        for j in range(S):  # S steps, one after another: step j needs step j - 1
            h = torch.where(mask[:, j, None], self.enc_fwd(x[:, j], h), h)
            fwd.append(h)
        h = x.new_zeros(B, self.shape.hidden)
        bwd = [None] * S
        for j in reversed(range(S)):
            h = torch.where(mask[:, j, None], self.enc_bwd(x[:, j], h), h)
            bwd[j] = h
        forward_states = torch.stack(fwd, 1)  # (B, S, H)
        annotations = torch.cat([forward_states, torch.stack(bwd, 1)], -1)  # (B, S, 2H)
        state = torch.tanh(self.init(fwd[-1]))  # fwd[-1]: the last real token's state (padding kept it)
        return Encoded(annotations, self.w_k(annotations), mask, state, forward_states)

    def step(self, enc: Encoded, token: torch.Tensor, state: torch.Tensor, detach_context: bool = False):
        """One decoder step: token (B,) is target t-1, state (B, D) is s_{t-1}. -> (logits (B, V), s_t, a_t (B, S)).
        detach_context: the context carries no gradient (what reaches the source then goes through s_0 only)."""
        scores = additive_scores(self.w_q(state), enc.keys, self.v)  # query from the decoder, keys from the encoder
        context, weights = attend(scores, enc.annotations, enc.mask)  # values from the encoder
        if detach_context:
            context = context.detach()
        y = self.embed(token)
        state = self.dec(torch.cat([y, context], -1), state)
        return self.out(torch.cat([state, context, y], -1)), state, weights

    def forward(self, source_ids, decoder_ids, inputs=None, detach_context: bool = False):
        """Teacher forcing: decoder_ids (B, T) = start token then the reference shifted right.
        -> (logits (B, T, V), attention (B, T, S))."""
        enc = self.encode(source_ids, inputs)
        state, logits, weights = enc.state, [], []
        for t in range(decoder_ids.shape[1]):  # T steps: s_t needs s_{t-1}
            out, state, a = self.step(enc, decoder_ids[:, t], state, detach_context)
            logits.append(out)
            weights.append(a)
        return torch.stack(logits, 1), torch.stack(weights, 1)

    @torch.no_grad()
    def greedy(self, source_ids: torch.Tensor, start: int, eos: int, max_length: int = MAX_LENGTH):
        """Greedy decoding of a batch. -> (tokens (B, T) incl. </s> and whatever follows it, attention (B, T, S))."""
        enc = self.encode(source_ids)
        state = enc.state
        token = torch.full((source_ids.shape[0],), start, dtype=torch.long)
        tokens, weights = [], []
        done = torch.zeros(source_ids.shape[0], dtype=torch.bool)
        for _ in range(max_length + 1):
            out, state, a = self.step(enc, token, state)
            token = out.argmax(-1)
            tokens.append(token)
            weights.append(a)
            done |= token == eos
            if bool(done.all()):
                break
        return torch.stack(tokens, 1), torch.stack(weights, 1)


def batch(tokenizer, pairs) -> dict[str, torch.Tensor]:
    """The shipped Transformer's batch (ed.encode: sources and targets ending in </s>), plus decoder inputs: the
    start token (<pad>, as the Transformer's decoder_start_token_id) then the target shifted right."""
    b = ed.encode(tokenizer, pairs)
    labels = b["labels"]
    shifted = labels[:, :-1].masked_fill(labels[:, :-1] == -100, tokenizer.pad_token_id)
    start = torch.full((labels.shape[0], 1), tokenizer.pad_token_id)
    return {"source_ids": b["input_ids"], "decoder_ids": torch.cat([start, shifted], 1), "labels": labels}


def loss_of(model: RNNSearch, b: dict, **kw) -> torch.Tensor:
    logits, _ = model(b["source_ids"], b["decoder_ids"], **kw)
    return nn.functional.cross_entropy(logits.flatten(0, 1), b["labels"].flatten(), ignore_index=-100)


@torch.no_grad()
def mean_loss(model, tokenizer, pairs, batch_size: int = 250) -> float:
    return training.mean_loss(partial(loss_of, model), partial(batch, tokenizer), pairs, batch_size)


def train(train_pairs, held_out_pairs, seed: int = 0, epochs: int = 6, batch_size: int = 64, lr: float = 3e-3,
          shape: Shape = Shape(), log_every: int = 100, on_log=None, cpu_budget: float | None = None):  # fmt: skip
    """Adam with cosine decay, gradient norm clipped at 1; returns (model, tokenizer, log). Deterministic in seed on
    one thread. cpu_budget (seconds): stop early when the process has used this much CPU time. on_log(step, loss,
    CPU seconds)."""
    torch.manual_seed(seed)
    tokenizer = ed.make_tokenizer()
    model = RNNSearch(shape, tokenizer.pad_token_id)
    optimiser = torch.optim.Adam(model.parameters(), lr=lr)
    total = epochs * math.ceil(len(train_pairs) / batch_size)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimiser, lambda s: 0.5 * (1 + math.cos(math.pi * min(1, s / total))))
    log = training.fit(model, partial(loss_of, model), partial(batch, tokenizer),
                       lambda: mean_loss(model, tokenizer, held_out_pairs), train_pairs, optimiser, schedule, seed,
                       epochs, batch_size, log_every, on_log, clock=time.process_time, cpu_budget=cpu_budget)  # fmt: skip
    return model, tokenizer, log


def save(model: RNNSearch, folder: Path) -> None:
    """model.safetensors (float16: half the bytes; loaded back as float32) and config.json (the Shape)."""
    from safetensors.torch import save_file

    folder.mkdir(parents=True, exist_ok=True)
    save_file({k: v.detach().half().contiguous() for k, v in model.state_dict().items()}, folder / "model.safetensors")
    config = {"architecture": "RNNSearch", "pad_id": model.pad_id, **asdict(model.shape)}
    (folder / "config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")


def status(folder: Path | None = None) -> str | None:
    """None when the shipped weights are there, else why not (with the command that makes them)."""
    folder = folder or WEIGHTS_DIR
    if not (folder / "model.safetensors").is_file() or not (folder / "config.json").is_file():
        command = "python scripts/train_rnn_attention.py"
        said = f"no trained GRU encoder-decoder at {folder}; make it with: {command}"
        return Reason(said, "unavailable_rnn_untrained", folder=str(folder), command=command)
    return None


def load(folder: Path | None = None):
    """(model, tokenizer): the float32 model in eval mode and the Transformer's word-level tokenizer."""
    from safetensors.torch import load_file

    folder = folder or WEIGHTS_DIR
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    shape = Shape(**{k: config[k] for k in Shape.__dataclass_fields__})
    model = RNNSearch(shape, config["pad_id"])
    model.load_state_dict({k: v.float() for k, v in load_file(folder / "model.safetensors").items()})
    return model.eval(), ed.make_tokenizer()


# the model's record: the app loads and caches it like every other model (core.models.registry.shared); it is in no
# picker, so it is not registered
RECORD = ModelRecord("rnn-attention", None, load, status)  # named in the catalogs ([model_titles])
