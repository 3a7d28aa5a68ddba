"""Speed of /why-head's one computation per view on this machine -> results/bench_why_head.json.

    python benchmarks/bench_why_head.py              # torch's own thread count (2 on the 2-core CPU)
    python benchmarks/bench_why_head.py --threads 1

  - rope_layer_128_s: SmolLM2, a 128-token text, one layer taken apart as the page does it (the pass up to that layer,
    then every head split into wavelength bands, with position and content removed, and the view of one head),
    median of 3, for the first, middle and last layer (the last runs the whole model; target <= 2 s);
  - of which forward_s: the pass up to the layer alone (layer_qk), so the decomposition's own cost is the rest;
  - absolute_128_s: MiniLM's first layer split into its four terms through LayerNorm, 128 tokens.
The machine is shared: the load average is recorded before and after.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from benchmarks.bench_heads import median_s
from benchmarks.cli import add_run_options, apply_run_options
from core import why_head as wh
from core.models import registry
from core.results import RESULTS_DIR, save_result
from core.timing import machine_info

TARGET_S = 2.0
TEXT = (
    "The capital of France is Paris. The capital of Japan is Tokyo. The cat sat on the mat because it was tired. " * 8
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_run_options(parser, RESULTS_DIR / "bench_why_head.json", device=False)
    args = parser.parse_args()
    apply_run_options(args)
    smol, minilm = registry.RECORDS["smollm2"].load(), registry.RECORDS["minilm"].load()
    batch = smol.tokenize([TEXT], wh.MAX_TOKENS)
    assert batch.lengths[0] == wh.MAX_TOKENS, batch.lengths
    before = machine_info()
    rope, forward = {}, {}
    for layer in (0, smol.n_layers // 2, smol.n_layers - 1):

        def view(layer=layer):
            wh.rope_view(wh.rope_parts_of(smol, TEXT, layer, "wavelength", None, wh.MAX_TOKENS), 0, 0, "own")

        view()  # warm-up
        rope[str(layer)] = round(median_s(view), 3)
        forward[str(layer)] = round(median_s(lambda layer=layer: smol.layer_qk(batch, layer)), 3)
        print(f"layer {layer}: {rope[str(layer)]:.2f} s (forward {forward[str(layer)]:.2f} s)")
    absolute = lambda: wh.absolute_view(
        wh.absolute_parts_of(minilm, TEXT, "after_norm", wh.MAX_TOKENS), 0, "token_token"
    )  # noqa: E731
    absolute()
    out = {
        "command": "python benchmarks/bench_why_head.py" + (f" --threads {args.threads}" if args.threads else ""),
        "device": before,
        "loadavg_1min_after": machine_info()["loadavg_1min"],
        "target_s": TARGET_S,
        "tokens": wh.MAX_TOKENS,
        "rope_layer_128_s": rope,
        "forward_s": forward,
        "absolute_128_s": round(median_s(absolute), 3),
        "meets_target": max(rope.values()) <= TARGET_S,
    }
    save_result(Path(args.out), out)
    print(out)


if __name__ == "__main__":
    main()
