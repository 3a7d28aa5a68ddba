"""Milliseconds to translate one sentence with the shipped encoder-decoder, free generation (greedy) with every
attention kept, as the /encoder-decoder page does it (the target: p50 <= 300 ms on the 2-core CPU).

    python benchmarks/bench_encoder_decoder.py                 # writes results/bench_encoder_decoder.json
    python benchmarks/bench_encoder_decoder.py --sentences 10 --repeats 1

Each of --sentences held-out sentences (never trained on) is translated --repeats times after one untimed warm-up;
reported: p50 and p90 over all timings of core.encoder_decoder.translate.translate (the page's free generation),
of view.run_sentence (free generation plus teacher forcing, what the page computes once per sentence), and the
tokens written per sentence. Threads: one, as app/serving.py runs every model call (on a loaded 2-core machine,
two threads spin-wait on each other: p50 872 ms wall, 298 ms CPU, against 29 ms and 19 ms on one). Wall-clock time on a shared machine includes other processes' load: the load
average is stored beside the numbers, and CPU time (process_time) per sentence too.
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
from core.encoder_decoder import model as ed
from core.encoder_decoder.translate import translate
from core.encoder_decoder.view import run_sentence
from core.results import save_result
from core.timing import machine_info

RESULT_NAME = "bench_encoder_decoder"
TARGET_MS = 300.0


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def timed(fn, repeats: int) -> tuple[list[float], list[float]]:
    """Wall and CPU milliseconds of `repeats` calls of fn()."""
    wall, cpu = [], []
    for _ in range(repeats):
        w, c = time.perf_counter(), time.process_time()
        fn()
        wall.append((time.perf_counter() - w) * 1000)
        cpu.append((time.process_time() - c) * 1000)
    return wall, cpu


def summary(values: list[float]) -> dict:
    return {"p50": round(statistics.median(values), 1), "p90": round(percentile(values, 0.9), 1)}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sentences", type=int, default=30)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1, help="torch threads: 1, as the app runs models (app/serving.py)")
    args = ap.parse_args(argv)
    if ed.status():
        sys.exit(ed.status())
    torch.set_num_threads(args.threads)
    model, tokenizer = ed.load()
    pairs = grammar.generate(args.sentences, 5, held_out=True)
    load_before = os.getloadavg()
    translate(model, tokenizer, pairs[0].source_text)  # warm-up
    free_wall, free_cpu, page_wall, tokens = [], [], [], []
    for pair in pairs:
        w, c = timed(lambda: translate(model, tokenizer, pair.source_text), args.repeats)
        free_wall += w
        free_cpu += c
        english = " ".join(pair.source[1:])
        page_wall += timed(lambda: run_sentence(model, tokenizer, english, pair.language), 1)[0]
        tokens.append(len(translate(model, tokenizer, pair.source_text).steps))
    result = {
        "command": "python benchmarks/bench_encoder_decoder.py " + shlex.join(sys.argv[1:] if argv is None else argv),
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d"),
        "device": machine_info(),
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "threads": args.threads,
        "sentences": len(pairs),
        "repeats": args.repeats,
        "decoder_steps_per_sentence": summary(tokens),
        "free_generation_ms": summary(free_wall),
        "free_generation_cpu_ms": summary(free_cpu),
        "page_run_sentence_ms": summary(page_wall),
        "target_ms": TARGET_MS,
        "meets_target": statistics.median(free_wall) <= TARGET_MS,
    }
    path = save_result(RESULT_NAME, result)
    print(f"{path}")
    for key in ("free_generation_ms", "free_generation_cpu_ms", "page_run_sentence_ms", "decoder_steps_per_sentence"):
        print(f"{key}: {result[key]}")
    print(
        f"load average {result['load_average_before']} -> {result['load_average_after']}; target p50 <= {TARGET_MS} ms"
    )


if __name__ == "__main__":
    main()
