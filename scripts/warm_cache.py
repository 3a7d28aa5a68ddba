"""Load every model that can be loaded here once, so that what a first visitor would otherwise wait for is done now.

For SmolLM2 that is the one-off de-quantisation of its GGUF file into a float32 safetensors copy in the cache
folder (core/models/cache.py: $ATTENTION_LAB_CACHE, else ~/.cache/attention-lab); the Docker image runs this at
build time so the cache ships inside the image. Each model also runs one short sentence, which proves it works.

    python scripts/warm_cache.py                      # every available model; unavailable ones are reported
    python scripts/warm_cache.py --require smollm2    # exit 1 unless SmolLM2 loaded (the Docker build uses this)
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from core.models import registry
from core.models.cache import cache_root

SENTENCE = "The cat sat on the mat because it was tired."


def folder_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.exists() else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--require",
        action="append",
        default=[],
        choices=sorted(registry.offered()),
        help="fail (exit 1) unless this model loads; repeat for several",
    )
    args = parser.parse_args()

    root = cache_root()
    print(f"cache folder: {root} ({folder_size(root) / 1e6:.1f} MB before)")
    failed = []
    for key, reason in registry.model_status().items():
        if reason is not None:
            print(f"{key}: skipped, not available here: {reason}")
            if key in args.require:
                failed.append(key)
            continue
        start = time.perf_counter()
        try:
            model = registry.RECORDS[key].load()
            loaded = time.perf_counter() - start
            trace = model.run(model.tokenize([SENTENCE]))
        except Exception as err:  # noqa: BLE001 - report every model, then fail at the end
            print(f"{key}: FAILED after {time.perf_counter() - start:.1f} s: {type(err).__name__}: {err}")
            failed.append(key)
            continue
        print(
            f"{key}: loaded in {loaded:.1f} s; one sentence ran through {trace.n_layers} layers x "
            f"{trace.n_heads} heads in {time.perf_counter() - start - loaded:.2f} s"
        )
    print(f"cache folder: {root} ({folder_size(root) / 1e6:.1f} MB after)")
    if failed:
        print(f"not loaded: {', '.join(failed)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
