"""The app served from a GPU, checked headless: every page of app/catalog.py opened with CUDA present (SmolLM2 on the
GPU), its exception boxes counted, the data of its figures compared with the same page on the CPU, and the model
pages' actions timed on the GPU beside the CPU. One JSON with device, date, command and versions.

    python scripts/gpu_pages.py --device cuda --carried .gpu --out results/gpu-check/gpu_pages.json   # with a GPU
    python scripts/gpu_pages.py --device cpu --pages home,masks                        # anywhere: the CPU, once
    python scripts/gpu_pages.py --dry-run                                              # what it would open and time

Each device runs in a process of its own that opens the real app (app/main.py and its navigation) through
Streamlit's AppTest, as the page tests do: no browser. The GPU's process runs first; the CPU's has
ATTENTION_LAB_DEVICE=cpu (core/device.py), which keeps SmolLM2 and every computation on the CPU on the same machine.
With --device cpu there is one process and its figures are compared with themselves (the comparison then proves
only that the script runs).

- Pages: each in its default state; a page that offers a model opens with SmolLM2 (`model=smollm2` in its link).
  An exception box is counted with its message; an error box (a model missing, in words) is listed apart.
- Figures: every plotly chart a page sends, trace by trace: numbers (plotly's binary arrays decoded) must agree
  within RTOL and ATOL (both devices compute in float32; the GPU's kernels add in another order), text exactly.
  A page whose numbers differ by more, or whose figures differ in number or shape, is listed with the worst
  difference. No default page plots a time it measures live: two CPU processes (--device cpu --cpu-twice) sent
  the same figures, to the last bit, on every page and action.
- Actions (ACTIONS), each on a fresh input so that no cache answers: the seconds of the run the action causes, on
  each device. /long-maps at 32,768 tokens is offered on a GPU only; the CPU process offers it too, to time it.
  Beyond the model pages' default states: /ablation's live run (new placebo seeds), /rope-scaling's live run (its
  button, two methods) and a lesson's answer computed by SmolLM2 (/lessons, checked with its button). An action's
  first timed run's figures and its code blocks (a lesson's right answer, generated text) are compared as a page's
  are, the code exactly; the seconds of the page's opening run (where a page computes at once) are kept too.

On a machine without Streamlit or the weight packages (the GPU machines), --carried names the folder that
scripts/gpu_carry.py prepared: its packages and weights are staged first, and where each model's weights came from
is written into the JSON. A --budget-s deadline leaves out what would start after it, and says so.
"""

from __future__ import annotations

import argparse
import base64
import datetime as dt
import json
import os
import pickle
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a file: the repository's packages
    sys.path.insert(0, str(ROOT))

from core.device import DEVICE_ENV  # noqa: E402
from scripts import gpu_carry  # noqa: E402

RTOL, ATOL = 1e-3, 1e-4  # float32 on both devices; a 30-layer forward's sums in another order differ by ~1e-6
SMOLLM2_LINK = {"model": "smollm2"}
# pages whose model choice has no SmolLM2 (a BERT layer walk; the encoder-decoder's own checkpoints)
NO_SMOLLM2 = frozenset({"multi-head", "encoder-decoder"})
STOP_AFTER_S = 10  # a process still running this long after the budget's end is stopped (gpu_check waits 20 s)
LONG_MAPS_LINK = {"src": "smollm2", "doc": "licences", "n": "32768", "side": "256"}


@dataclass(frozen=True)
class Action:
    name: str
    url: str
    link: dict
    inputs: tuple[dict, ...]  # the widgets set for each timed run: {"key": value}, "button": label clicked after
    gpu_only_lengths: bool = False  # the CPU process offers the GPU's lengths (/long-maps at 32k)
    cpu_runs: int | None = None  # the CPU times only the first inputs (a run of a minute or more)


def _fresh_texts(words: int, reps: int) -> tuple[str, ...]:
    base = "The cat sat on the mat because it was tired, and later the dog came in and lay down next to it".split()
    return tuple(" ".join(f"{w}{i}" if j % 7 == 0 else w for j, w in enumerate((base * 8)[:words])) for i in
                 range(reps))  # fmt: skip


ACTIONS = (
    Action("logit lens of a new 60-word text", "logit-lens", SMOLLM2_LINK,
           tuple({"text": t} for t in _fresh_texts(60, 3))),
    Action("generation on a new prompt (6 tokens, both eviction policies)", "kv-cache", SMOLLM2_LINK,
           tuple({"prompt": t} for t in _fresh_texts(30, 3))),
    Action("live ablation card, induction heads zeroed, 2 placebo draws on a new seed", "ablation",
           {**SMOLLM2_LINK, "part": "live", "draws": "2"}, ({"seed": 11}, {"seed": 12})),
    Action("live RoPE scaling run, 256 tokens: YaRN x2, then dynamic x8 (plain RoPE beside each)", "rope-scaling",
           {**SMOLLM2_LINK, "live_n": "256"}, ({"live_method": "yarn", "live_factor": "2", "button": "live-run"},
                                               {"live_method": "dynamic", "live_factor": "8", "button": "live-run"})),
    Action("a lesson's answer computed by SmolLM2 (long maps' attention sink, 512 tokens), a guess checked", "lessons",
           {"lesson": "long-maps", "lstep": "7"},
           ({"input-long-maps-sink-mass": "elsewhere", "button": "Check my answer"},)),
    Action("maps of the long document, layer 12 then 13 (forward and every head pooled)", "long-maps", LONG_MAPS_LINK,
           ({"layer": 12, "button": "Compute the maps"}, {"layer": 13, "button": "Compute the maps"}),
           gpu_only_lengths=True, cpu_runs=1),
)  # fmt: skip


def actions_at(long_n: int) -> tuple[Action, ...]:
    """ACTIONS with /long-maps' document at `long_n` tokens."""
    return tuple(replace(a, link={**a.link, "n": str(long_n)}) if a.url == "long-maps" else a for a in ACTIONS)


def page_links() -> list[tuple[str, dict]]:
    """(url, link) of every page in the navigation's order."""
    from app import catalog
    from core.lessons.answers import PAGE_STATES

    out = []
    for page in catalog.PAGES:
        keys = {f.key for f in PAGE_STATES.get(page.url, ())}
        out.append((page.url, dict(SMOLLM2_LINK) if "model" in keys and page.url not in NO_SMOLLM2 else {}))
    return out


# --- one device's process ---------------------------------------------------------------------------------------


def decoded(value):
    """A trace's field as sent: plotly's binary arrays as numpy arrays; lists of numbers as arrays; else as is."""
    if isinstance(value, dict) and "bdata" in value:
        array = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
        shape = value.get("shape")
        if shape is not None:
            array = array.reshape([int(s) for s in shape.split(",")] if isinstance(shape, str) else list(shape))
        return array.astype(np.float64)
    if isinstance(value, list):
        try:
            return np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            return value
    return value


def figures_of(at) -> list[dict]:
    """Every plotly chart of the run: its key and its traces' data fields, decoded."""
    out = []
    for chart in at.get("plotly_chart"):
        spec = json.loads(chart.proto.spec)
        key = chart.proto.id.rsplit("-", 1)[-1] if chart.proto.id else ""
        out.append({"key": key, "traces": [{k: decoded(v) for k, v in t.items()} for t in spec.get("data", [])]})
    return out


def outcome(at, seconds: float) -> dict:
    return {"seconds": round(seconds, 3), "exceptions": [str(e.value)[:500] for e in at.exception],
            "errors": [str(e.value)[:300] for e in at.error], "figures": figures_of(at),
            "code": [c.value for c in at.code]}  # fmt: skip


def _set(at, key: str, value) -> bool:
    """Set the widget of `key`; whether it sits in a form (its value then goes with the form's button only)."""
    for kind in ("text_area", "selectbox", "slider", "number_input", "radio", "text_input"):
        widgets = [w for w in getattr(at, kind) if w.key == key]
        if widgets:
            widgets[0].set_value(str(value) if kind == "selectbox" else value)
            return bool(widgets[0].proto.form_id)
    raise KeyError(f"no widget {key!r} on the page")


def run_action(action: Action, device: str, timeout: float, deadline: float) -> dict:
    """Seconds of each timed run of `action` (and the first run's figures), on this process's device."""
    from tests.apptest_helpers import run_view

    start = time.perf_counter()
    at = run_view(action.url, action.link, timeout=timeout)
    opened = outcome(at, time.perf_counter() - start)
    runs, first = [], None
    for given in action.inputs[: action.cpu_runs if device == "cpu" else None]:
        if time.time() > deadline:
            runs.append({"not_run": "the deadline had passed"})
            continue
        in_form = [_set(at, key, value) for key, value in given.items() if key != "button"]
        if "button" in given:  # the settings' own run (the page asks for the button), then the button's, timed;
            if not any(in_form):  # a form's widgets run nothing until its button (a lesson's answer)
                at.run()
            next(b for b in at.button if given["button"] in (b.label, b.key)).click()
        start = time.perf_counter()
        at.run()
        seconds = time.perf_counter() - start
        result = outcome(at, seconds)
        first = first or result
        runs.append({"seconds": result["seconds"], "exceptions": result["exceptions"], "errors": result["errors"]})
    return {"open": {k: opened[k] for k in ("seconds", "exceptions", "errors")}, "runs": runs,
            "figures": first["figures"] if first else [], "code": first["code"] if first else []}  # fmt: skip


def child(device: str, urls: list[str], actions: list[str], deadline: float, out: Path, long_n: int) -> None:
    """Open every page of `urls`, then run `actions`, on this process's device; pickles the results into `out`."""
    import torch
    from streamlit import config as streamlit_config
    from streamlit import logger as streamlit_logger

    from core.device import default_device

    streamlit_config.set_option("client.showErrorDetails", "full")  # an exception shows as a box, as in the tests
    streamlit_logger.set_log_level("ERROR")  # the step's log: this script's lines, and what broke
    found = default_device().type
    if found != device:
        raise SystemExit(f"this process computes on {found}, not {device}")
    if any(a.gpu_only_lengths for a in ACTIONS if a.name in actions) and device == "cpu":
        from core.long_maps import state

        state.CPU_LENGTHS = state.GPU_LENGTHS
    from tests.apptest_helpers import run_view

    links = dict(page_links())
    result = {"device": device, "pages": {}, "actions": {}, "torch_threads": torch.get_num_threads()}

    def keep() -> None:  # after every page and action: a process stopped at its deadline leaves what it found
        out.with_suffix(".part").write_bytes(pickle.dumps(result))
        os.replace(out.with_suffix(".part"), out)

    for url in urls:
        if time.time() > deadline:
            result["pages"][url] = {"not_run": "the deadline had passed"}
            continue
        start = time.perf_counter()
        try:
            at = run_view(url, links.get(url, {}), timeout=max(10.0, deadline - time.time()))
            result["pages"][url] = outcome(at, time.perf_counter() - start)
        except Exception as err:  # noqa: BLE001  the script's or AppTest's own failure, not an exception box
            result["pages"][url] = {"failed": f"{type(err).__name__}: {err}"[:500]}
        print(f"  {device} /{url}: {result['pages'][url].get('seconds', '-')} s", flush=True)
        keep()
    for action in actions_at(long_n):
        if action.name not in actions:
            continue
        if time.time() > deadline:
            result["actions"][action.name] = {"not_run": "the deadline had passed"}
            continue
        try:
            result["actions"][action.name] = run_action(action, device, max(10.0, deadline - time.time()), deadline)
        except Exception as err:  # noqa: BLE001
            result["actions"][action.name] = {"failed": f"{type(err).__name__}: {err}"[:500]}
        runs = result["actions"][action.name].get("runs", [])
        print(f"  {device} {action.url}: {[r.get('seconds') for r in runs]} s", flush=True)
        keep()
    keep()
    sys.stdout.flush()
    os._exit(0)  # a run AppTest gave up on at its timeout may still hold a thread: do not wait for it


# --- comparing ---------------------------------------------------------------------------------------------------


def compare_figures(ours: list[dict], theirs: list[dict]) -> dict:
    """Whether two runs of a page sent the same figures: numbers within RTOL/ATOL, text equal, the same traces."""
    differences, worst = [], 0.0
    if len(ours) != len(theirs):
        return {"equal": False, "differences": [f"{len(ours)} figures against {len(theirs)}"], "max_abs_diff": None}
    for fig, other in zip(ours, theirs):
        where = fig["key"] or f"figure {ours.index(fig)}"
        if len(fig["traces"]) != len(other["traces"]):
            differences.append(f"{where}: {len(fig['traces'])} traces against {len(other['traces'])}")
            continue
        for i, (trace, trace2) in enumerate(zip(fig["traces"], other["traces"])):
            for name in sorted(set(trace) | set(trace2)):
                a, b = trace.get(name), trace2.get(name)
                label = f"{where} trace {i} {name}"
                if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
                    if a.shape != b.shape:
                        differences.append(f"{label}: shape {a.shape} against {b.shape}")
                    elif a.size:
                        gap = np.abs(a - b)
                        gap = np.where(np.isnan(a) & np.isnan(b), 0.0, gap)
                        worst = max(worst, float(np.nanmax(gap)) if np.isfinite(gap).any() else 0.0)
                        if not np.allclose(a, b, rtol=RTOL, atol=ATOL, equal_nan=True):
                            differences.append(f"{label}: differs by up to {float(np.nanmax(gap)):.3g}")
                elif a != b:
                    differences.append(f"{label}: {str(a)[:80]!r} against {str(b)[:80]!r}")
    return {"equal": not differences, "differences": differences[:20], "max_abs_diff": worst}


def median(values: list[float]) -> float | None:
    return round(statistics.median(values), 3) if values else None


def report(device_run: dict, cpu_run: dict, links: list[tuple[str, dict]], long_n: int) -> dict:
    """The JSON's pages, actions and summary from the two processes' results."""
    device = device_run["device"]
    pages, differing, boxes, not_run = [], [], 0, []
    for url, link in links:
        ours, theirs = device_run["pages"].get(url, {}), cpu_run["pages"].get(url, {})
        entry = {"url": f"/{url}", "link": link}
        for name, run in ((device, ours), ("cpu", theirs)):
            entry[name] = {k: run[k] for k in ("seconds", "exceptions", "errors", "not_run", "failed") if k in run}
            entry[name]["figures"] = len(run.get("figures", []))
        if "figures" in ours and "figures" in theirs:
            entry["comparison"] = compare_figures(ours["figures"], theirs["figures"])
            if not entry["comparison"]["equal"]:
                differing.append(f"/{url}")
        else:
            not_run.append(f"/{url}")
        boxes += len(ours.get("exceptions", [])) + (
            len(theirs.get("exceptions", [])) if cpu_run is not device_run else 0
        )
        pages.append(entry)
    actions = []
    for action in actions_at(long_n):
        ours, theirs = device_run["actions"].get(action.name), cpu_run["actions"].get(action.name)
        if ours is None and theirs is None:
            continue
        entry = {"page": f"/{action.url}", "action": action.name, "link": action.link}
        for name, run in ((device, ours or {}), ("cpu", theirs or {})):
            runs = run.get("runs", [])
            shown = [*([run["open"]] if "open" in run else []), *runs]  # the opening run's boxes count too
            seconds = [r["seconds"] for r in runs if "seconds" in r]
            entry[name] = {"seconds": seconds, "median_s": median(seconds),
                           "open_s": run.get("open", {}).get("seconds"),
                           "exceptions": sum(len(r.get("exceptions", [])) for r in shown),
                           "errors": [e for r in shown for e in r.get("errors", [])][:3],
                           **{k: run[k] for k in ("failed", "not_run") if k in run}}  # fmt: skip
            if any("not_run" in r for r in runs):
                entry[name]["not_run"] = (
                    f"{sum('not_run' in r for r in runs)} of {len(runs)} runs: the deadline had passed"
                )
        boxes += entry[device]["exceptions"] + (entry["cpu"]["exceptions"] if cpu_run is not device_run else 0)
        if entry[device]["median_s"] and entry["cpu"]["median_s"]:
            entry["cpu_over_" + device] = round(entry["cpu"]["median_s"] / entry[device]["median_s"], 2)
        if ours and theirs and "figures" in ours and "figures" in theirs:
            entry["comparison"] = compare_figures(ours["figures"], theirs["figures"])
            entry["comparison"]["code_equal"] = ours.get("code") == theirs.get("code")
            if not entry["comparison"]["code_equal"]:
                entry["comparison"]["code"] = {device: ours.get("code"), "cpu": theirs.get("code")}
        actions.append(entry)
    summary = {
        "pages": len(links),
        "pages_opened": sum(1 for p in pages if "seconds" in p[device]),
        "exception_boxes": boxes,
        "pages_with_figures_differing": differing,
        "pages_not_compared": not_run,
        "actions_figures_differing": [a["page"] for a in actions if not a.get("comparison", {}).get("equal", True)],
        "actions_code_differing": [a["page"] for a in actions if not a.get("comparison", {}).get("code_equal", True)],
    }
    return {"pages": pages, "actions": actions, "summary": summary}


# --- the whole check ---------------------------------------------------------------------------------------------


def versions(device: str) -> dict:
    import platform

    import streamlit
    import torch
    import transformers

    return {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "device": device,
        "device_name": torch.cuda.get_device_name(0) if device == "cuda" else platform.processor() or "cpu",
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "transformers": transformers.__version__,
        "streamlit": streamlit.__version__,
        "python": sys.version.split()[0],
        "cpu_count": os.cpu_count(),
        "loadavg_1min_before": os.getloadavg()[0],
    }


def run_child(device: str, urls: list[str], actions: list[str], deadline: float, stop: float, env: dict,
              folder: Path, long_n: int) -> dict:  # fmt: skip
    """The results of one device's process: it starts nothing after `deadline` and is stopped at `stop`."""
    out = folder / f"{device}-{time.monotonic_ns()}.pickle"
    child_env = {**os.environ, **env, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    child_env["PYTHONPATH"] = gpu_carry.python_path(ROOT, *(Path(p) for p in env.get("PYTHONPATH", "").split(":") if p))
    if device == "cpu":
        child_env[DEVICE_ENV] = "cpu"
    else:
        child_env.pop(DEVICE_ENV, None)
    command = [sys.executable, str(Path(__file__)), "--child", device, "--pages", ",".join(urls),
               "--actions", "|".join(actions), "--deadline", str(deadline), "--child-out", str(out),
               "--long-maps-tokens", str(long_n)]  # fmt: skip
    try:
        rc = subprocess.run(command, cwd=ROOT, env=child_env, timeout=max(5.0, stop - time.time())).returncode
    except subprocess.TimeoutExpired:
        rc = "stopped at the budget's end"
    found = pickle.loads(out.read_bytes()) if out.is_file() else {"device": device, "pages": {}, "actions": {}}
    if rc != 0:
        found["failed"] = f"the {device} process: {rc if isinstance(rc, str) else f'exit status {rc}'}"
    return found


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    ap.add_argument("--pages", default="", help="comma-separated URLs (default: every page of the catalog)")
    ap.add_argument("--no-actions", action="store_true", help="open the pages only; time no action")
    ap.add_argument("--long-maps-tokens", type=int, default=32768, help="/long-maps' length for its action")
    ap.add_argument(
        "--cpu-twice",
        action="store_true",
        help="with --device cpu: a second CPU process as the baseline (what differs is measured live)",
    )
    ap.add_argument("--carried", type=Path, default=None, help="scripts/gpu_carry.py's folder (.gpu) to stage")
    ap.add_argument("--budget-s", type=float, default=240.0, help="start nothing after this many seconds")
    ap.add_argument("--out", type=Path, default=ROOT / "results" / "gpu_pages.json")
    ap.add_argument("--dry-run", action="store_true", help="list the pages, links and actions; run nothing")
    ap.add_argument("--child", choices=["cuda", "cpu"], help=argparse.SUPPRESS)
    ap.add_argument("--actions", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--deadline", type=float, help=argparse.SUPPRESS)
    ap.add_argument("--child-out", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        urls = [u for u in args.pages.split(",") if u]
        chosen = [a for a in (args.actions or "").split("|") if a]
        child(args.child, urls, chosen, args.deadline, args.child_out, args.long_maps_tokens)
        return 0
    if not args.dry_run:
        import torch

        if args.device == "cuda" and not torch.cuda.is_available():
            print("No CUDA device here: nothing was run (`--device cpu` runs the same check on the CPU alone).")
            return 2
    start = time.time()
    deadline = start + args.budget_s
    env, provenance = {}, {}
    if args.carried is not None:  # before anything imports the app: Streamlit may come from there
        site = gpu_carry.stage_site(args.carried)
        if site is not None:
            sys.path.insert(0, str(site))
            os.environ["PYTHONPATH"] = env["PYTHONPATH"] = gpu_carry.python_path(site)
        if not args.dry_run:
            provenance, weights_env = gpu_carry.stage_weights(args.carried)
            env.update(weights_env)
    if not provenance:
        from core.models import registry

        provenance = {k: registry.model_status().get(k) or "the installed package" for k in ("smollm2", "minilm")}
    links = page_links()
    if args.pages:
        wanted = args.pages.split(",")
        unknown = sorted(set(wanted) - {u for u, _ in links})
        if unknown:
            ap.error(f"no such page: {', '.join(unknown)}")
        links = [(u, link) for u, link in links if u in wanted]
    actions = [] if args.no_actions else [a.name for a in ACTIONS if not args.pages or a.url in args.pages.split(",")]
    if args.dry_run:
        print(f"would open {len(links)} pages on {args.device} and on the CPU, within {args.budget_s:.0f} s:")
        print("\n".join(f"  /{u} {link or ''}" for u, link in links))
        print("and time:\n" + "\n".join(f"  /{a.url}: {a.name}" for a in ACTIONS if a.name in actions))
        return 0
    urls = [u for u, _ in links]
    machine = versions(args.device)  # the date and the load before the processes ran
    with tempfile.TemporaryDirectory() as tmp:
        twice = args.device != "cpu" or args.cpu_twice
        half = start + (args.budget_s * 0.5 if twice else args.budget_s)  # the device's share first
        device_run = run_child(
            args.device, urls, actions, half, half + STOP_AFTER_S, env, Path(tmp), args.long_maps_tokens
        )
        if twice:
            stop = deadline + STOP_AFTER_S
            cpu_run = run_child("cpu", urls, actions, deadline, stop, env, Path(tmp), args.long_maps_tokens)
        else:
            cpu_run = device_run
    shown = " ".join(["python", "scripts/gpu_pages.py", *(argv if argv is not None else sys.argv[1:])])
    result = {"command": shown, **machine, "weights": provenance,
              "tolerance": {"rtol": RTOL, "atol": ATOL}, "budget_s": args.budget_s,
              "cpu_torch_threads": cpu_run.get("torch_threads"),
              **report(device_run, cpu_run, links, args.long_maps_tokens), "seconds": round(time.time() - start, 1)}  # fmt: skip
    for run in (device_run, cpu_run):
        if "failed" in run:
            result.setdefault("failed", []).append(run["failed"])
    result["loadavg_1min_after"] = os.getloadavg()[0]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    s = result["summary"]
    print(f"{s['pages_opened']} of {s['pages']} pages opened, {s['exception_boxes']} exception boxes, figures "
          f"differing on {s['pages_with_figures_differing'] or 'none'}; wrote {args.out} ({result['seconds']:.0f} s)")  # fmt: skip
    return 0 if not s["exception_boxes"] and not s["pages_with_figures_differing"] and "failed" not in result else 1


if __name__ == "__main__":
    sys.exit(main())
