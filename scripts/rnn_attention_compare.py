"""The trained GRU encoder-decoder beside the Transformer: the gradient that reaches each source word from the loss
against its distance, and the time to encode one sentence against its length.

    nice -n 5 python scripts/rnn_attention_compare.py            # -> results/rnn_attention.json
    python scripts/rnn_attention_compare.py --device cuda --out /tmp/rnn_cuda.json   # timing on a GPU

Gradient: the committed weights (data/rnn_attention/), 200 held-out pairs of seed 2, the loss of each pair summed
over its target tokens, reference fed in; the norm of d(loss)/d(embedding of source word j), averaged over the words
at each distance from the last source token (core/rnn_attention/compare.py), with attention and with the
attention's context cut from the gradient (the path a seq2seq model without attention has).
On lengths of up to --gradient-length tokens the same is measured on random token sequences (out of the training
distribution: longer than any training sentence, which has at most 14 source tokens).

Time: one sentence of n tokens (batch 1) through the trained GRU encoder (2 directions x n cell steps, one after
another; core's cell, a Python loop like any step-by-step decoder), through torch.nn.GRU with the same weights (the
same steps, looped in C++: no per-step Python overhead) and through a Transformer encoder of the shipped model's shape (2 layers, d_model 128, 4 heads, ffn 256:
every position at once), random weights (the time does not depend on their values). Median wall time and median
CPU time per call on one thread (CPU time is what the call costs on a shared machine; wall time is inflated by
other processes).
"""

from __future__ import annotations

import argparse
import datetime
import os
import shlex
import statistics
import sys
import time

import torch

from core.encoder_decoder import grammar
from core.results import save_result
from core.rnn_attention import compare as cmp
from core.rnn_attention import model as rm
from core.timing import machine_info, synchronize

NAME = "rnn_attention"
GRADIENT_SEED, GRADIENT_PAIRS = 2, 200


def timed(fn, device, reps: int) -> tuple[float, float]:
    """(median wall ms, median CPU ms) of fn() after one untimed call."""
    fn()
    synchronize(device)
    wall, cpu = [], []
    for _ in range(reps):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        synchronize(device)
        wall.append((time.perf_counter() - t0) * 1e3)
        cpu.append((time.process_time() - c0) * 1e3)
    return statistics.median(wall), statistics.median(cpu)


@torch.no_grad()
def timing(model, lengths, device, reps) -> dict:
    model = model.to(device)
    transformer = cmp.transformer_encoder().to(device)
    torch_gru = cmp.torch_gru(model).to(device)
    rows = []
    for n in lengths:
        ids = torch.randint(5, model.shape.vocab, (1, n), device=device)
        x = torch.randn(1, n, 128, device=device)
        gru_wall, gru_cpu = timed(lambda: model.encode(ids), device, reps)
        tr_wall, tr_cpu = timed(lambda: transformer(x), device, reps)
        tg_wall, tg_cpu = timed(lambda: torch_gru(model.embed(ids)), device, reps)
        rows.append({"n": n, "gru_ms": gru_wall, "gru_cpu_ms": gru_cpu, "torch_gru_ms": tg_wall,
                     "torch_gru_cpu_ms": tg_cpu, "transformer_ms": tr_wall,
                     "transformer_cpu_ms": tr_cpu, "gru_sequential_steps": 2 * n, "transformer_sequential_steps": 2})  # fmt: skip
        print(rows[-1], flush=True)
    return {"device": str(device), "reps": reps, "rows": rows}


def long_gradients(model, tokenizer, length: int, count: int, seed: int) -> dict:
    """The gradient by distance on random source sequences of `length` tokens (language tag first, </s> last),
    each decoded against its own greedy output (teacher forcing on what the model writes)."""
    g = torch.Generator().manual_seed(seed)
    vocab = grammar.vocabulary()
    english = sorted({w for row in grammar.ANIMATE + grammar.THINGS for w in row[:2]} | {"the", "in"})
    pairs = []
    for i in range(count):
        words = [english[int(j)] for j in torch.randint(len(english), (length - 2,), generator=g)]
        tag = grammar.LANGUAGE_TAGS[grammar.LANGUAGES[i % 2]]
        source = [tag, *words]
        ids = rm.ed.encode(tokenizer, [grammar.Pair(source, [], "", [])])["input_ids"]
        out, _ = model.greedy(ids, tokenizer.pad_token_id, tokenizer.eos_token_id)
        target = [vocab[t] for t in out[0].tolist() if t != tokenizer.eos_token_id][: rm.MAX_LENGTH]
        pairs.append(grammar.Pair(source, target, grammar.LANGUAGES[i % 2], []))
    view = cmp.gradient_view(model, tokenizer, pairs)
    return {"length": length, "pairs": count, **view.__dict__}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lengths", default="8,16,32,64,128,256,512")
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--gradient-length", type=int, default=60)
    parser.add_argument("--out", default=NAME, help="results name or .json path")
    args = parser.parse_args(argv)
    if rm.status():
        sys.exit(rm.status())
    torch.set_num_threads(1)
    load_before, cpu0 = os.getloadavg(), time.process_time()
    model, tokenizer = rm.load()
    pairs = grammar.generate(GRADIENT_PAIRS, GRADIENT_SEED, held_out=True)
    gradient = {"seed": GRADIENT_SEED, "pairs": GRADIENT_PAIRS, **cmp.gradient_view(model, tokenizer, pairs).__dict__}
    long = long_gradients(model, tokenizer, args.gradient_length, 40, 0)
    lengths = [int(x) for x in args.lengths.split(",")]
    result = {
        "command": "python scripts/rnn_attention_compare.py " + shlex.join(sys.argv[1:] if argv is None else argv),
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d"),
        "device": machine_info(args.device),
        "gradient": gradient,
        "gradient_long": long,
        "timing": timing(model, lengths, torch.device(args.device), args.reps),
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "cpu_seconds": round(time.process_time() - cpu0, 1),
    }
    path = save_result(args.out, result)
    print(path, {k: gradient[k] for k in ("decay", "decay_attention")},
          {k: long[k] for k in ("decay", "decay_attention")})  # fmt: skip


if __name__ == "__main__":
    main()
