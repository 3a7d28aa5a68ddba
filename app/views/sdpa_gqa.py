"""PyTorch's SDPA backends against a naive matmul-softmax-matmul (committed benchmark + a small live CPU run), and
grouped-query attention: what sharing key/value heads saves in the KV cache of real models."""

import streamlit as st

from app import ui
from core import kv_cache as kvc
from core import sdpa_backends as sb
from core.timing import human_bytes, machine_info
from viz.scaling import grouped_bars

LIVE_N = ["128", "256", "512", "1024"]
PRESET_KEYS = [*kvc.PRESETS, "custom"]
DTYPES = list(kvc.DTYPE_BYTES)
MIB = 1024**2


def number(x, spec: str) -> str:
    return "–" if x is None else format(x, spec)


def shape_label(r: dict) -> str:
    return sb.AttentionShape(r["batch"], r["heads"], r["seq_len"], r["head_dim"], r["causal"], r["dtype"]).label()


def short_labels(rows: list[dict]) -> dict[str, str]:
    """Full shape label -> only the parts that differ between these rows (readable bar-chart categories)."""
    fields = [("batch", "B={}"), ("heads", "H={}"), ("seq_len", "n={}"), ("head_dim", "d={}"), ("dtype", "{}")]
    varying = [(f, fmt) for f, fmt in fields if len({r[f] for r in rows}) > 1]
    out = {}
    for r in rows:
        parts = [fmt.format(r[f]) for f, fmt in varying] + (["causal"] if r["causal"] else [])
        out[shape_label(r)] = " ".join(parts) or f"n={r['seq_len']}"
    return out


def backend_rows_view(T, rows: list[dict], name: str, key: str) -> None:
    """Table, time and memory bars, and the sentence comparing the best backend to the naive version."""
    ok = [r for r in rows if r["status"] == "ok"]
    st.dataframe(
        {
            T("col_shape"): [shape_label(r) for r in rows],
            T("col_backend"): [r["backend"] for r in rows],
            T("col_status"): [r["status"] for r in rows],
            T("col_ms"): [number(r["ms"], ",.2f") for r in rows],
            T("col_tflops"): [number(r["tflops"], ".4f") for r in rows],
            T("col_peak"): [human_bytes(r["peak_bytes"]) if r["status"] == "ok" else "–" for r in rows],
            T("col_diff"): [number(r["max_abs_diff_vs_naive"], ".1e") for r in rows],
        },
        hide_index=True,
    )
    if not ok:
        return
    shapes = list(dict.fromkeys(shape_label(r) for r in ok))
    names = list(dict.fromkeys(r["backend"] for r in ok))
    cell = {(shape_label(r), r["backend"]): r for r in ok}
    short = short_labels(ok)
    categories = [short[s] for s in shapes]

    def values(field, scale=1.0):
        return {
            b: [
                None if (s, b) not in cell or cell[(s, b)][field] is None else cell[(s, b)][field] / scale
                for s in shapes
            ]
            for b in names
        }

    c1, c2 = st.columns(2)
    with c1:
        ui.show_figure(
            grouped_bars(categories, values("ms"), title=T("ms_title"), y_title=T("ms_axis"), log_y=True),
            f"{name}-ms",
            data={"shape": shapes, **values("ms")},
            key=f"{key}-ms",
        )
    with c2:
        # a log axis has no place for 0 B (a kernel that reused freed memory): no bar there, the table says 0 B
        mem = {b: [v if v else None for v in vs] for b, vs in values("peak_bytes", MIB).items()}
        ui.show_figure(
            grouped_bars(categories, mem, title=T("mem_title"), y_title=T("mem_axis"), log_y=True),
            f"{name}-memory",
            data={"shape": shapes, **values("peak_bytes")},
            key=f"{key}-mem",
        )
    biggest = max(ok, key=lambda r: r["flops"])
    same = [r for r in ok if shape_label(r) == shape_label(biggest)]
    naive = next((r for r in same if r["backend"] == sb.NAIVE), None)
    fused = [r for r in same if r["backend"] != sb.NAIVE]
    diffs = [r["max_abs_diff_vs_naive"] for r in ok if r["max_abs_diff_vs_naive"] is not None]
    if naive and fused and diffs:
        best = min(fused, key=lambda r: r["ms"])
        st.markdown(
            T(
                "backends_result",
                shape=shape_label(biggest),
                best=best["backend"],
                best_ms=best["ms"],
                naive_ms=naive["ms"],
                speedup=naive["ms"] / best["ms"],
                naive_mem=human_bytes(naive["peak_bytes"]),
                best_mem=human_bytes(best["peak_bytes"]),
                diff=max(diffs),
            )
        )


def availability_view(T, avail: list[dict]) -> None:
    st.markdown(f"*{T('availability')}*")
    st.dataframe(
        {
            T("col_backend"): [a["backend"] for a in avail],
            T("col_available"): [T("yes") if a["available"] else T("no") for a in avail],
            T("col_reason"): [a["reason"] or "" for a in avail],
        },
        hide_index=True,
    )


def backends(T) -> None:
    st.subheader(T("h_backends"))
    st.markdown(T("backends"))
    results = sb.load_results()
    if results is None:
        st.info(T("no_results"))
    for device, run in (results or {}).items():
        st.markdown(f"**{T('committed', device=device)}**")
        if isinstance(run, str):
            st.info(T("not_measured", device=device, why=run))
            continue
        availability_view(T, run.get("availability", []))
        backend_rows_view(T, run["rows"], f"sdpa-{device}-committed", f"fig-sdpa-{device}")
        how = next((r["memory_method"] for r in run["rows"] if r.get("memory_method")), "?")
        st.caption(
            T(
                "meta",
                command=run["command"],
                date=run.get("date", "?"),
                device_name=run.get("device_name", "?"),
                torch=run.get("torch", "?"),
                threads=run.get("torch_threads", "?"),
                load_before=run.get("loadavg_1min_before", "?"),
                load_after=run.get("loadavg_1min_after", "?"),
                cpus=run.get("cpu_count", "?"),
                how=how,
            )
        )
    with st.expander(T("live"), expanded=False):
        st.markdown(T("live_intro", heads=LIVE_HEADS, d=LIVE_D, budget=LIVE_BUDGET_S))
        c1, c2 = st.columns(2)
        with c1:
            n = int(ui.select("sd_n", T("sd_n"), LIVE_N, "256"))
        with c2:
            causal = ui.checkbox("sd_causal", T("sd_causal"))
        if st.button(T("run"), key="run-sdpa"):
            bar = st.progress(0.0)
            shape = sb.AttentionShape(1, LIVE_HEADS, n, LIVE_D, causal=causal)
            rows = sb.benchmark(
                [shape],
                "cpu",
                reps=3,
                budget_s=LIVE_BUDGET_S,
                progress=lambda f, label: bar.progress(min(1.0, f), text=T("running", label=label)),
            )
            bar.empty()
            st.session_state["_sdpa_live"] = {"rows": rows, "availability": sb.availability("cpu")}
        live = st.session_state.get("_sdpa_live")
        if live:
            availability_view(T, live["availability"])
            backend_rows_view(T, live["rows"], "sdpa-cpu-live", "fig-sdpa-live")
            info = machine_info("cpu")
            st.caption(
                T(
                    "live_meta",
                    device_name=info["device_name"],
                    torch=info["torch"],
                    threads=info["torch_threads"],
                    load=info["loadavg_1min"],
                )
            )


# --- GQA ----------------------------------------------------------------------------------------------------------


def model_config(T) -> kvc.ModelConfig | None:
    key = ui.select(
        "cfg",
        T("cfg"),
        PRESET_KEYS,
        "llama-3-8b",
        format_func=lambda k: T("custom") if k == "custom" else kvc.PRESETS[k].name,
    )
    if key != "custom":
        cfg = kvc.PRESETS[key]
        st.caption(
            T(
                "config",
                name=cfg.name,
                layers=cfg.layers,
                heads=cfg.heads,
                kv=cfg.kv_heads,
                group=cfg.group_size,
                hd=cfg.head_dim,
                maxc=cfg.max_context,
                source=cfg.source,
            )
        )
        return cfg
    c = st.columns(4)
    with c[0]:
        layers = ui.number("layers", T("layers"), 1, 512, 32)
    with c[1]:
        heads = ui.number("heads", T("heads"), 1, 256, 32)
    with c[2]:
        kv = ui.number("kv", T("kv"), 1, 256, 8)
    with c[3]:
        hd = ui.number("hd", T("hd"), 1, 1024, 128)
    if kv > heads or heads % kv:
        st.error(T("bad_heads", h=heads, kv=kv))
        return None
    return kvc.ModelConfig(T("custom"), layers, heads, kv, hd, max_context=0, dtype="bfloat16", source="")


def gqa(T) -> None:
    st.subheader(T("h_gqa"))
    st.markdown(T("gqa"))
    cfg = model_config(T)
    c1, c2, c3 = st.columns(3)
    with c1:
        ctx = ui.number("ctx", T("ctx"), 1, 10_000_000, 8192)
    with c2:
        batch = ui.number("batch", T("batch"), 1, 4096, 1)
    with c3:
        dtype = ui.select("dtype", T("dtype"), DTYPES, "bfloat16")
    if cfg is None:
        return
    nbytes = kvc.DTYPE_BYTES[dtype]
    total = kvc.kv_cache_bytes(cfg.layers, cfg.kv_heads, cfg.head_dim, ctx, nbytes, batch)
    per_token = kvc.kv_cache_bytes(cfg.layers, cfg.kv_heads, cfg.head_dim, 1, nbytes, 1)
    st.markdown(
        T(
            "formula",
            layers=cfg.layers,
            kv=cfg.kv_heads,
            hd=cfg.head_dim,
            ctx=ctx,
            bytes=nbytes,
            batch=batch,
            total=total,
            human=human_bytes(total),
            per_token=human_bytes(per_token),
        )
    )
    if cfg.sliding_window is not None:
        pos = kvc.cached_positions(ctx, cfg.sliding_window)
        windowed = kvc.kv_cache_bytes(cfg.layers, cfg.kv_heads, cfg.head_dim, pos, nbytes, batch)
        st.markdown(T("window", w=cfg.sliding_window, pos=pos, human=human_bytes(windowed)))
    rows = kvc.attention_variants(cfg.layers, cfg.heads, cfg.kv_heads, cfg.head_dim, ctx, nbytes, batch)
    labels = [r["variant"] + (T("this_model") if r["configured"] else "") for r in rows]
    st.dataframe(
        {
            T("col_variant"): labels,
            T("col_kv"): [r["kv_heads"] for r in rows],
            T("col_cache"): [human_bytes(r["bytes"]) for r in rows],
            T("col_per_token"): [human_bytes(r["bytes_per_token"]) for r in rows],
            T("col_saving"): [f"{r['saving_vs_mha']:,.1f}×" for r in rows],
        },
        hide_index=True,
    )
    gib = [r["bytes"] / 1024**3 for r in rows]
    fig = grouped_bars(labels, {T("col_cache"): gib}, title=T("cache_title"), y_title=T("gib"), height=360)
    ui.show_figure(
        fig,
        f"kv-cache-{cfg.name}-{ctx}",
        data={
            "variant": [r["variant"] for r in rows],
            "kv_heads": [r["kv_heads"] for r in rows],
            "bytes": [r["bytes"] for r in rows],
        },
        key="fig-kv",
    )
    chk = sb.gqa_check(cfg.heads, cfg.kv_heads)
    st.markdown(
        T(
            "check",
            heads=cfg.heads,
            kv=cfg.kv_heads,
            group=cfg.group_size,
            same=chk["max_abs_diff_repeated"],
            wrong=chk["max_abs_diff_wrong_order"],
            wrong_note=T("wrong_same") if cfg.kv_heads in (1, cfg.heads) else "",
        )
    )


def page() -> None:
    global LIVE_BUDGET_S, LIVE_D, LIVE_HEADS, T
    LIVE_HEADS, LIVE_D, LIVE_BUDGET_S = 4, 64, 1.0
    T = ui.page_setup("sdpa_gqa")
    st.title(T("title"))
    st.markdown(T("intro"))
    backends(T)
    gqa(T)
    ui.page_end()
