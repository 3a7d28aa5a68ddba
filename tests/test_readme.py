"""The README stays true: its first lines are the two commands CI and newcomers run, it describes every page in
the navigation, its pictures exist, and it says why each dependency is there."""

import json
import re
import tomllib
from pathlib import Path

from app import catalog

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_first_lines_are_the_two_commands_and_ci_runs_the_second():
    first_block = re.search(r"```bash\n(.*?)```", README, re.S)
    assert first_block and README.index("```bash") < 40, "the two commands come first"
    commands = [line.split("#")[0].strip() for line in first_block.group(1).splitlines() if line.strip()]
    assert commands == ["bash scripts/dev.sh run", "bash scripts/dev.sh test"]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "exec bash scripts/dev.sh test" in ci


def test_every_page_of_the_navigation_is_described():
    for page in catalog.PAGES[1:]:
        assert f"(`/{page.url}`)" in README, page.url


def test_every_picture_the_readme_shows_exists():
    for path in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", README):
        assert (ROOT / path).is_file(), path


def test_every_picture_under_docs_is_one_the_readme_shows():
    shown = set(re.findall(r"!\[[^\]]*\]\(([^)]+)\)", README))
    kept = {str(p.relative_to(ROOT)) for p in (ROOT / "docs").rglob("*.png")}
    assert kept and sorted(kept - shown) == []


def test_every_dependency_is_explained():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    names = [re.split(r"[<>=!~ \[]", d)[0] for d in project["dependencies"]]
    names += [re.split(r"[<>=!~ \[]", d)[0] for deps in project["optional-dependencies"].values() for d in deps]
    table = README[README.index("## Dependencies") :]
    for name in names:
        assert re.search(rf"^\|[^|\n]*\b{re.escape(name)}\b", table, re.M), name


def _mean_loss(run: dict, start: int, stop: int) -> float:
    """Token-weighted mean loss of the buckets that lie within positions [start, stop)."""
    inside = [
        (m, c)
        for s, e, m, c in zip(run["start"], run["end"], run["mean_loss"], run["count"])
        if s >= start and e < stop
    ]
    return sum(m * c for m, c in inside) / sum(c for _, c in inside)


def _readme_rows(results: dict, columns) -> list[str]:
    """The table rows the README must show for a results file: one row for no scaling, one per method with its
    factors side by side ("linear ×2 / ×4 / ×8 | a / b / c | ..."), each cell rounded to 2 decimals."""
    names = {"linear": "linear", "dynamic": "dynamic NTK", "yarn": "YaRN"}
    runs = {(r["method"], float(r["factor"])): r for r in results["runs"]}
    rows = ["| no scaling | " + " | ".join(f"{col(runs[('default', 1.0)]):.2f}" for col in columns) + " |"]
    for method, name in names.items():
        factors = sorted(f for m, f in runs if m == method)
        cells = [" / ".join(f"{col(runs[(method, f)]):.2f}" for f in factors) for col in columns]
        label = name + " " + " / ".join(f"×{f:g}" for f in factors)
        rows.append(f"| {label} | " + " | ".join(cells) + " |")
    return rows


def test_the_long_context_tables_are_the_committed_results():
    """Every figure in the README's scaled-RoPE tables is read from results/long_context*.json, not typed in."""
    from core.rope_scaling.experiment import results_by_length

    files = results_by_length()
    ctx = files[16384]["original_context"]
    columns_16k = [
        lambda r: r["mean_loss_within_context"],
        lambda r: r["mean_loss_beyond_context"],
        lambda r: r["mean_loss"][-1],
    ]
    expected = _readme_rows(files[16384], columns_16k)
    if 32768 in files:
        columns_32k = [
            lambda r: r["mean_loss_within_context"],
            lambda r: _mean_loss(r, ctx, 2 * ctx),
            lambda r: _mean_loss(r, 2 * ctx, 32768),
            lambda r: r["mean_loss"][-1],
        ]
        expected += _readme_rows(files[32768], columns_32k)
    for row in expected:
        assert row in README, row


def test_the_long_context_timings_and_dynamic_ntk_claim_are_computed():
    """The minutes quoted for each run are the sum of the runs' own seconds, and 'dynamic ×s at length L raises the
    base as much as NTK-aware scaling by a fixed α' is read off transformers' dynamic inv_freq:
    inv_freq[1] = base_eff^(-2/d), α = (base_eff / base)^((d-2)/d)."""
    from core.rope_scaling import scaled_inv_freq
    from core.rope_scaling.experiment import results_by_length

    for n, res in results_by_length().items():
        minutes = round(sum(r["seconds"] for r in res["runs"]) / 60)
        assert f"{n:,} tokens, {minutes} min" in README, (n, minutes)
    d, base, ctx = 64, 100000.0, 8192
    said = []
    for length in (32768, 16384):
        alphas = []
        for s in (2.0, 4.0, 8.0):
            inv, _ = scaled_inv_freq("dynamic", s, length, head_dim=d, rope_theta=base, original_context=ctx)
            base_eff = float(inv[1]) ** (-d / 2)
            alpha = (base_eff / base) ** ((d - 2) / d)
            assert abs(alpha - round(alpha)) < 1e-4  # inv_freq comes from float32
            alphas.append(round(alpha))
        said.append(f"{alphas[0]}, {alphas[1]} and {alphas[2]}")
    assert f"by a fixed {said[0]} would (at 16,384: {said[1]})" in " ".join(README.split())


SECURITY = (ROOT / "SECURITY.md").read_text(encoding="utf-8")


def test_every_setting_the_server_reads_is_named():
    code = "\n".join(p.read_text(encoding="utf-8") for d in ("app", "core") for p in (ROOT / d).rglob("*.py"))
    settings = set(re.findall(r"[\"'](ATTENTION_LAB_[A-Z0-9_]+)[\"']", code))
    assert len(settings) > 15 and "ATTENTION_LAB_ROOM_FALLBACK_S" in settings
    assert sorted(s for s in settings if not re.search(rf"\b{s}\b", README)) == []


def test_security_names_only_files_functions_and_settings_that_exist():
    paths = set(re.findall(r"\b((?:app|core|scripts|deploy|tests|\.streamlit)/[\w./-]*\w)", SECURITY))
    paths |= {p for p in ("compose.yaml", "Dockerfile") if p in SECURITY}
    assert len(paths) > 10
    for path in paths:
        assert (ROOT / path).exists(), path
    named = re.findall(r"`?((?:app|core)/[\w/]+\.py)`?\s+`(\w+)(?:\(\))?`", SECURITY)
    assert len(named) >= 8, named
    for path, name in named:
        assert re.search(rf"^(def|class) {name}\b|^{name} = ", (ROOT / path).read_text(), re.M), (path, name)
    code = "\n".join(
        p.read_text(encoding="utf-8") for d in ("app", "core", "scripts") for p in (ROOT / d).rglob("*.py")
    )
    code += (ROOT / "compose.yaml").read_text() + (ROOT / "Dockerfile").read_text()
    for setting in set(re.findall(r"\b(ATTENTION_LAB_\w+|LAB_DB_PASSWORD)\b", SECURITY)):
        assert setting in code, setting


def test_security_quotes_the_limits_the_code_sets():
    from app import serving, ui
    from core import room

    nginx = (ROOT / "deploy" / "nginx.conf").read_text()
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    text = " ".join(SECURITY.split())
    assert f"{ui.MAX_TEXT_CHARS:,} characters" in text
    assert f"at most {serving.max_sessions()} sessions" in text and f"cap ({serving.max_sessions()})" in text
    assert f"at most {serving.HEAVY.max_waiting} wait" in text
    assert f"capped at {config['server']['maxWidgetStateSize']} MB" in text
    assert f"{room.MAX_LEARNERS} seats" in text
    assert f"{room.MAX_LEARNERS_ALL:,} seated learners, {room.MAX_OPEN_ROOMS} open rooms" in text
    joins, opens, misses, guesses = (room.LIMITS[k] for k in ("join_client", "create", "join_miss", "passcode_miss"))
    assert joins.window_s == opens.window_s == misses.window_s == guesses.window_s == 600
    assert f"{joins.count} joins and {opens.count} new rooms in 10 minutes, {misses.count} codes and" in text
    assert f"{misses.count} codes and {guesses.count} passcodes tried in vain in 10 minutes" in text
    assert f"its {guesses.count} tries per browser" in text
    assert "limit_conn browser_sessions 10;" in nginx and "10 sessions (websockets) at once per browser" in text
    assert "limit_conn address_sessions 200;" in nginx and "per address, limits generous enough" in text
    assert "(200 sessions" in text
    assert "error_log stderr crit;" in nginx and "`crit`" in text


def test_security_quotes_the_committed_hostile_sessions_run():
    import json

    run = json.loads((ROOT / "results" / "hostile_sessions.json").read_text())
    text = " ".join(SECURITY.split())
    assert f"peaked at {run['rss_mb']['peak']:,.0f} MB" in text and f"back at {run['rss_mb']['after']:,.0f} MB" in text
    assert run["rss_mb"]["peak"] < run["limits"]["memory_mib"]


def test_the_per_page_capacity_table_is_the_committed_run():
    """The README's page-by-page table is what `scripts/load_pages.py --table` prints for results/load_pages.json,
    and the sentence above it gives that run's date."""
    from scripts import load_pages

    result = json.loads((ROOT / "results" / "load_pages.json").read_text(encoding="utf-8"))
    rows = load_pages.table(result).splitlines()
    start = README.index(rows[0])
    assert README[start : start + sum(len(r) + 1 for r in rows)].splitlines() == rows
    intro = README[README.rindex("prints the table below from a run", 0, start) : start]
    assert result["date"][:10] in intro


def test_the_study_group_round_is_the_committed_run():
    """The whole-app row of 'Capacity of one replica' is results/load_test.json: /attention's p95 at each swept
    count of visitors and the last first page of those arriving together; the sentences after it give the run's
    date."""
    result = json.loads((ROOT / "results" / "load_test.json").read_text(encoding="utf-8"))

    def seconds(ms: float) -> str:
        return f"{ms / 1000:.2f} s" if ms < 995 else f"{ms / 1000:.1f} s"

    p95 = [seconds(step["by_page"]["attention"]["p95_ms"]) for step in result["sweep"]]
    first = seconds(result["burst"]["first_page"]["max_ms"])
    row = next(line for line in README.splitlines() if line.startswith("| A study group's round"))
    cells = [cell.strip().replace("**", "") for cell in row.strip("|").split("|")][1:]
    assert cells == [f"/attention p95 {p95[0]}", *p95[1:], f"all within {first}", "`results/load_test.json`"]
    after = README.index(row) + len(row)
    assert result["date"][:10] in README[after : README.index("**Memory**", after)]


def test_the_memory_soak_is_the_committed_run():
    """The README's soak sentence is results/load_test_soak.json: its actions, errors, /attention's p95, the server's
    memory at the start and end, and its growth a minute fitted over the whole series (least squares)."""
    import statistics

    result = json.loads((ROOT / "results" / "load_test_soak.json").read_text(encoding="utf-8"))
    soak = result["soak"]
    minutes, mb = zip(*((t / 60, m) for t, m in soak["rss_series_mb"]), strict=True)
    slope = statistics.linear_regression(minutes, mb).slope
    text = " ".join(README.split())
    start = text.index("The soak is a run of its own")
    sentence = text[start : text.index("**Cold start**", start)]
    assert result["date"][:10] in sentence and result["git"] in sentence
    assert (
        f"{soak['actions']:,} actions, {soak['errors']} errors, {soak['exception_boxes']} exception boxes" in sentence
    )
    assert f"/attention p95 {soak['by_page']['attention']['p95_ms'] / 1000:.2f} s over the soak" in sentence
    assert (
        f"went from {soak['rss_mb']['start']:.0f} to {soak['rss_mb']['end']:.0f} MB, {soak['rss_mb']['max']:.0f}"
        in sentence
    )
    assert f"fitted +{slope:.1f} MB a minute" in sentence
    pages = {page: f"/{page} {p['p95_ms'] / 1000:.2f} s" for page, p in soak["by_page"].items()}
    limits = text[text.index("A mixed class (/attention") :][:600]
    assert all(quoted in limits for quoted in pages.values()), (pages, limits)  # the known limit's figures
    growth = result["soak_rss_growth_mb"]
    assert f"first third's mean {growth['first_third_mean']:.0f} MB" in sentence
    assert f"last third's {growth['last_third_mean']:.0f}" in sentence


def test_the_installer_row_is_the_committed_setup_run():
    """The README's uv row quotes results/setup_time.json: both installers' medians, its date, and that both
    installed the same versions of everything (torch's CPU build from this machine's disk, never a download)."""
    result = json.loads((ROOT / "results" / "setup_time.json").read_text(encoding="utf-8"))
    row = next(line for line in README.splitlines() if line.startswith("| uv (set-up only) |"))
    uv, pip = result["summary"]["uv"]["median_s"], result["summary"]["pip"]["median_s"]
    assert f"median {uv:.1f} s against pip's {pip:.1f} s" in row
    assert result["machine"]["date"][:10] in row
    assert uv < pip / 2 and "less than half" in row
    assert result["same_distributions"] is True and "same versions" in row
    assert result["torch"] == ["2.13.0+cpu"]
    assert all(len(result["summary"][i]["runs_s"]) >= 2 for i in ("uv", "pip"))  # in turns, not one run each


def test_the_headless_shell_figures_are_the_committed_runs():
    """The README's browser-test times quote results/browser_headless_shell.json, and the shell it credits is the
    browser the tests drive (scripts/app_server.CHROMIUM)."""
    from scripts.app_server import CHROMIUM

    result = json.loads((ROOT / "results" / "browser_headless_shell.json").read_text(encoding="utf-8"))
    times = {
        b: [f"{r['pytest_s']:.0f}" for r in result["runs"] if r["browser"] == b]
        for b in ("chromium-headless-shell", "chromium")
    }
    text = " ".join(README.split())
    assert (
        f"took {' and '.join(times['chromium-headless-shell'])} s with the shell, {' and '.join(times['chromium'])} s with chromium"
        in text
    )
    assert result["date"] in text
    assert CHROMIUM.endswith("/chromium-headless-shell")
    assert all(0.14 < 1 - s / c < 0.16 for s, c in zip(*(result["six_pages_machine_cpu_s"][b] for b in times)))
    per_page = {b: [s / 6 for s in runs] for b, runs in result["six_pages_machine_cpu_s"].items() if b != "what"}
    shell, chromium = per_page["chromium-headless-shell"], per_page["chromium"]
    assert (
        f"costs the machine {min(shell):.1f}-{max(shell):.1f} s of CPU, server and the browser test's checks included, "
        f"with the headless shell, about 15 % less than the {min(chromium):.1f}-{max(chromium):.1f} s with chromium's"
        in text
    )


def test_the_gru_timing_sentence_is_the_committed_run():
    """/rnn-attention's time per sentence as the page reads results/rnn_attention.json (core's timing view): torch's
    nn.GRU over the Transformer encoder at the shortest length, the range from the next length on, the longest, and
    the Python-loop cell at the longest."""
    from core.results import load_result
    from core.rnn_attention import view as rv

    timing = rv.timing_view(load_result("rnn_attention", required=rv.is_result))
    ratios = [g / t for g, t in zip(timing.torch_gru_ms, timing.transformer_ms, strict=True)]
    n = timing.lengths
    text = " ".join(README.split())
    assert f"at n = {n[0]} ({ratios[0]:.2f} ×) and slower from n = {n[1]} on" in text
    assert f"({min(ratios[1:]):.1f}-{max(ratios[1:]):.1f} ×, {ratios[-1]:.1f} × at n = {n[-1]})" in text
    assert f"Python-loop cell {timing.ratio_at_longest:.1f} × at {n[-1]}" in text


def test_the_gpu_long_maps_row_is_the_committed_runs():
    """The /long-maps row of 'Measured on a GPU' as the page reads results/bench_pooled.json with the H200 run in
    place (core.long_maps.views): each Triton ratio to one cuDNN forward, its largest extra memory, and the CPU torch
    path's range against PyTorch's CPU flash kernel."""
    from core.long_maps import views

    runs = views.pooled_runs()
    gpu = {(t.seq_len, t.causal): t for t in views.exact_maps_timings(runs["cuda"]) if t.path == "pooled/triton"}
    cpu = [t for t in views.exact_maps_timings(runs["cpu"]) if t.path == "pooled/torch"]
    row = next(line for line in README.splitlines() if line.startswith("| `/long-maps` | exact pooled maps"))
    assert (
        f"{gpu[65536, False].ratio:.2f}× at 65,536 tokens, {gpu[65536, True].ratio:.2f}× causal, "
        f"{gpu[131072, True].ratio:.2f}× at 131,072 causal, {gpu[16384, True].ratio:.1f}× at 16,384 causal; "
        f"at most {max(t.peak_bytes for t in gpu.values()) / 2**20:.0f} MiB extra" in row
    )
    lo, hi = min(t.ratio for t in cpu), max(t.ratio for t in cpu)
    n_lo, n_hi = min(t.seq_len for t in cpu), max(t.seq_len for t in cpu)
    assert f"{lo:.1f}–{hi:.1f}× from {n_lo:,} to {n_hi:,}" in row


def test_the_kubernetes_sizing_quotes_the_committed_footprint():
    """The Deployment's sizing sentence gives results/memory_footprint.json in GiB: the server's memory once MiniLM is
    loaded and the peak after SmolLM2's logit lens."""
    result = json.loads((ROOT / "results" / "memory_footprint.json").read_text(encoding="utf-8"))
    minilm = next(step["VmRSS_MiB"] for step in result["steps"] if step["step"] == "MiniLM")
    text = " ".join(README.split())
    assert f"{minilm / 1024:.2f} GiB with MiniLM, a {result['peak_mib'] / 1024:.2f} GiB peak" in text


def test_the_long_maps_default_time_is_the_committed_run():
    """/long-maps' default (its length and layer from core.long_maps.state) timed as results/bench_pooled.json's
    SmolLM2 row for it records: the forward up to the layer, the pooling, their sum and the load."""
    from core.long_maps import state, views

    row = next(
        r
        for r in views.measured_smollm2()
        if (r["n_tokens"], r["layer"]) == (state.DEFAULT_LENGTH, state.DEFAULT_LAYER)
    )
    text = " ".join(README.split())
    assert (
        f"Default: {state.DEFAULT_LENGTH:,} tokens, layer {state.DEFAULT_LAYER} "
        f"({row['forward_s'] + row['pool_s']:.1f} s on the 2-core CPU at load {row['loadavg_1min']:.0f}: "
        f"the layers up to it {row['forward_s']:.2f} s, the pooling {row['pool_s']:.2f} s" in text
    )


def test_the_replica_count_quotes_the_committed_load_tests():
    """'How many replicas' gives each load test's capacity at p95 1.5 s: /attention alone
    (results/load_test_attention.json, its p95 there) and the whole round (results/load_test.json: the most visitors
    at which every page of the round, and of every smaller stage, is within the target), and the round's slowest
    page at 30."""

    def run(name: str) -> dict:
        return json.loads((ROOT / "results" / f"{name}.json").read_text(encoding="utf-8"))

    alone, round_ = run("load_test_attention"), run("load_test")
    target = round_["config"]["target_p95_ms"]
    assert target == alone["config"]["target_p95_ms"] == 1500
    held = alone["capacity_sessions_at_target"]
    p95 = next(s["by_page"]["attention"]["p95_ms"] for s in alone["sweep"] if s["sessions"] == held)
    within = 0
    for stage in round_["sweep"]:
        if max(p["p95_ms"] for p in stage["by_page"].values()) > target:
            break
        within = stage["sessions"]
    at_30 = next(s["by_page"] for s in round_["sweep"] if s["sessions"] == 30)
    slowest = max(at_30, key=lambda page: at_30[page]["p95_ms"])
    text = " ".join(README.split())
    assert f"holds **{held} learners** on /attention (p95 {p95 / 1000:.2f} s) and **{within}** doing the mixed" in text
    assert f"its slowest, /{slowest}, {at_30[slowest]['p95_ms'] / 1000:.2f} s at 30): count {held} learners" in text


def test_the_transformer_xl_losses_are_the_committed_run():
    """/transformer-xl's five mean losses in the README are results/transformer_xl.json's, from the position its
    verdict reads them from and over the whole text, and its settings."""
    result = json.loads((ROOT / "results" / "transformer_xl.json").read_text(encoding="utf-8"))
    order = ("full", "sinks_window", "independent", "xl", "window")
    past, whole = result["mean_loss_past_window"], result["mean_loss"]
    text = " ".join(README.split())
    assert (
        f"{result['tokens']:,} tokens, L = W = {result['segment']}, {result['sinks']} sinks), its mean from position "
        f"{result['past_window_from']} on" in text
    )
    assert result["segment"] == result["window"]
    names = ("full {:.3f} nats", "sinks + window {:.3f}", "independent segments {:.3f}", "XL memory {:.3f}",
             "window alone {:.3f}")  # fmt: skip
    assert ", ".join(n.format(past[m]) for n, m in zip(names, order, strict=True)) in text
    assert f"(over all {result['tokens']:,} positions: " + ", ".join(f"{whole[m]:.3f}" for m in order) + ")" in text


def test_the_rope_scaling_benchmark_row_is_the_committed_run():
    """The benchmarks table's scaled-RoPE row quotes results/bench_rope_scaling.json: the worst p50 per view, the
    load it ran at, each view's bytes and the run's date."""
    result = json.loads((ROOT / "results" / "bench_rope_scaling.json").read_text(encoding="utf-8"))
    row = next(line for line in README.splitlines() if line.startswith("| `benchmarks/bench_rope_scaling.py` |"))
    views = result["views"]
    assert f"worst p50 {max(v['p50_s'] for v in views):.2f} s per view" in row
    assert f"at load {result['loadavg_1min_before']:.1f}-{result['loadavg_1min_after']:.1f}" in row
    assert f"{min(v['json_kb'] for v in views):.0f}–{max(v['json_kb'] for v in views):.0f} KB per view" in row
    assert result["date"][:10] in row


def test_the_image_saving_adds_up_the_image_parts_it_names():
    """The known limit's saving is the CJK fonts plus half of SmolLM2's cache (float16 instead of the float32 it is
    stored in, core/models/smollm2.py), from the image's parts as the container paragraph gives them."""
    text = " ".join(README.split())
    parts = re.search(r"SmolLM2 cache (\d+) MB, CJK fonts (\d+) MB\)", text)
    cache, fonts = int(parts.group(1)), int(parts.group(2))
    assert '"dtype": "float32"' in (ROOT / "core" / "models" / "smollm2.py").read_text(encoding="utf-8")
    assert (
        f"would save about {(fonts + cache / 2) / 1000:.1f} GB (the fonts' {fonts} MB and half of the float32 cache's "
        f"{cache} MB)" in text
    )


def test_what_the_per_page_table_says_is_the_committed_run():
    """The sentences under the page-by-page table read results/load_pages.json: on two processes the pages above
    p95 1.5 s, the slowest of the others and the next; on one process how many others are above it and the worst."""
    result = json.loads((ROOT / "results" / "load_pages.json").read_text(encoding="utf-8"))
    p95 = {n: {page: r["work"]["p95_ms"] for page, r in runs.items()} for n, runs in result["by_processes"].items()}
    queued = {"/logit-lens", "/kv-cache"}  # SmolLM2 for every new sentence, through the visible queue
    assert {page for page, ms in p95["2"].items() if ms > 1500} == queued
    others = sorted(((ms, page) for page, ms in p95["2"].items() if page not in queued), reverse=True)
    (slowest_ms, slowest), (next_ms, next_page) = others[:2]
    text = " ".join(README.split())
    assert "every page but /logit-lens and /kv-cache, which run SmolLM2 for every new sentence, holds 30" in text
    assert (
        f"({slowest} the slowest at {slowest_ms / 1000:.2f} s, the rest ≤ {next_ms / 1000:.2f} s, {next_page}'s" in text
    )
    above_one = [ms for page, ms in p95["1"].items() if page not in queued and ms > 1500]
    count = "zero one two three four five six seven eight nine ten".split()[len(above_one)]
    assert f"On **one process** {count} pages are above p95 1.5 s (up to {max(above_one) / 1000:.1f} s" in text


def test_the_families_the_models_paragraph_names_are_the_tested_ones():
    """'Tested on N families' in the /models paragraph counts and names tests/tiny_models.FAMILIES, the families
    tests/core/test_models_families.py checks layer by layer against transformers' eager attention."""
    from tests.tiny_models import FAMILIES

    names = {"bert": "BERT", "roberta": "RoBERTa", "gpt2": "GPT-2", "gpt_neox": "GPT-NeoX", "gptj": "GPT-J",
             "llama": "Llama", "mistral": "Mistral", "qwen2": "Qwen2", "gemma2": "Gemma 2", "phi3": "Phi-3",
             "mixtral": "Mixtral", "gpt_oss": "gpt-oss", "cohere": "Cohere", "olmo2": "OLMo 2",
             "deepseek_v3": "DeepSeek-V3", "stablelm": "StableLM", "starcoder2": "Starcoder2", "bloom": "Bloom",
             "marian": "Marian"}  # fmt: skip
    text = " ".join(README.split())
    start = text.index(f"Tested on {len(FAMILIES)} families built from transformers' own config classes")
    listed = text[start : text.index("(its encoder).", start)]
    assert sorted(FAMILIES) == sorted(names)
    assert all(re.search(rf"(?:[:,]| and) {re.escape(names[f])}\b", listed) for f in FAMILIES), listed


def test_the_lessons_paragraph_counts_and_names_the_shipped_lessons():
    """'N lessons, Q questions' in the /lessons paragraph is what lessons/*.toml ship, and the paragraph names every
    lesson: each title's first words (before its colon), or the topic the lesson file is named after."""
    files = sorted(p for p in (ROOT / "lessons").glob("*.toml") if p.name != "paths.toml")
    lessons = [tomllib.loads(p.read_text(encoding="utf-8")) for p in files]
    questions = sum(1 for lesson in lessons for step in lesson["steps"] if "question" in step)
    text = " ".join(README.split())
    start = text.index("- **Lessons** (`/lessons`).")
    paragraph = text[start : text.index(f"{len(lessons)} lessons, {questions} questions in English", start)]
    said = {
        "why-head": "why a head attends",
        "rnn-attention": "attention before the Transformer",
        "models": "looking at your own model",
        "kv-cache": "the KV cache while generating",
        "logit-lens": "the logit lens",
        "ablation": "ablation against a placebo",
        "antecedents": "antecedent heads",
        "long-maps": "attention maps of a long document",
        "padded-batch": "padding masks on a real batch",
    }
    for path in files:
        words = said.get(path.stem)
        assert words is None or words in paragraph, (path.name, words)
    assert len(files) - len(said) == 12 and "Twelve lessons follow the material in order" in paragraph


def test_the_model_load_times_are_the_committed_run():
    """SmolLM2's first start (de-quantising its GGUF file) and later starts, and MiniLM's loads, as the README
    gives them in three places, are results/bench_models.json's."""
    result = json.loads((ROOT / "results" / "bench_models.json").read_text(encoding="utf-8"))
    load = {r["model"]: (r["load_cold_s"], r["load_warm_s"]) for r in result["rows"]}
    (cold, warm), (mini_cold, mini_warm) = load["smollm2"], load["minilm"]
    text = " ".join(README.split())
    assert f"the first start de-quantises it ({cold:.0f} s on this 2-core CPU, `results/bench_models.json`)" in text
    assert f"later starts take {warm:.1f} s." in text
    assert f"The first start converts them ({cold:.0f} s here: `results/bench_models.json`)" in text
    before, after = result["conditions_before"]["loadavg_1min"], result["conditions_after"]["loadavg_1min"]
    assert (
        f"SmolLM2 cold start (GGUF → cache) {cold:.1f} s, warm {warm:.1f} s; MiniLM {mini_cold:.1f} s, {mini_warm:.2f} s "
        f"({result['date'][:10]}, load {before:.1f} → {after:.1f};" in text
    )


def _seconds_half_up(ms: int) -> str:
    """Whole milliseconds as seconds to 2 decimals, a half rounded up (305 ms: 0.31 s; 995 ms: 1.00 s). Not
    f"{ms / 1000:.2f}": that rounds the nearest binary float (0.305 is stored as 0.30499…), so 305, 735 and 995 ms
    came out 0.30, 0.73 and 0.99 while 225 ms came out 0.23."""
    from decimal import ROUND_HALF_UP, Decimal

    return str((Decimal(ms) / 1000).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def test_the_room_table_is_the_committed_runs():
    """Each row of the 30-learner room table is its results file: per step change the p50 (as scripts/load_test_room.py
    computes it) and the max of the learners' times, the largest max in bold, whether the target was met, the
    answers' slowest arrival on the facilitator's histogram and the idle room's share of a core. One rounding rule
    for all its seconds: _seconds_half_up."""
    from scripts.load_test import percentiles

    files = ["load_test_room", "load_test_room_2proc", "load_test_room_masks", "load_test_room_masks_2proc"]
    for name in files:
        run = json.loads((ROOT / "results" / f"{name}.json").read_text(encoding="utf-8"))
        row = next(line for line in README.splitlines() if line.startswith("| `") and f"`results/{name}.json`" in line)
        step, _cpu, answer, idle = (cell.strip() for cell in row.strip("|").split("|")[1:5])
        changes = run["follow"]["changes"]
        largest = max(max(c["ms"]) for c in changes)
        cells = []
        for c in changes:
            top = _seconds_half_up(max(c["ms"])) + " s"
            cells.append(
                f"{_seconds_half_up(percentiles(c['ms'])['p50_ms'])} / "
                + (f"**{top}**" if max(c["ms"]) == largest else top)
            )
        (target,) = [k for k in run["targets"] if k.startswith("step_to_all_within_")]
        met = "met" if run["targets"][target] else "missed"
        assert step == ", ".join(cells) + f" (target {target.removeprefix('step_to_all_within_')[:-1]} s: {met})", name
        assert answer.replace("**", "") == _seconds_half_up(run["answer"]["answer_to_histogram_ms"]["max_ms"]) + " s"
        assert idle.replace("**", "").startswith(f"{run['idle']['server_cores_used']} core"), (name, idle)
