"""Part 2: the KV cache of a model as MHA, GQA and MQA, and the check that GQA is MHA with repeated K/V."""

import streamlit as st

from app import ui
from core import slips
from core.kv_cache.memory import DTYPE_BYTES
from core.sdpa_gqa import configs as kvc
from core.sdpa_gqa.views import kv_cache_view
from core.timing import human_bytes
from viz.sdpa_gqa import kv_cache_figure, variant_labels

PRESET_KEYS = [*kvc.PRESETS, "custom"]
DTYPES = list(DTYPE_BYTES)


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


def part(T) -> None:
    st.subheader(T("h_gqa"))
    st.markdown(T("gqa"))
    st.caption(T("slip_gqa", ratios="; ".join(f"{name} {r}" for name, r in slips.gqa_ratios().items())))
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
    view = kv_cache_view(cfg, ctx, batch, dtype)
    st.markdown(
        T(
            "formula",
            layers=cfg.layers,
            kv=cfg.kv_heads,
            hd=cfg.head_dim,
            ctx=ctx,
            bytes=view.bytes_per_value,
            batch=batch,
            total=view.total,
            human=human_bytes(view.total),
            per_token=human_bytes(view.per_token),
        )
    )
    if view.window_positions is not None:
        w, pos = cfg.sliding_window, view.window_positions
        st.markdown(T("window", w=w, pos=pos, human=human_bytes(view.windowed)))
    rows = view.variants
    words = ui.texts("sdpa_gqa.figure")
    st.dataframe(
        {
            T("col_variant"): variant_labels(view, words),
            T("col_kv"): [r["kv_heads"] for r in rows],
            T("col_cache"): [human_bytes(r["bytes"]) for r in rows],
            T("col_per_token"): [human_bytes(r["bytes_per_token"]) for r in rows],
            T("col_saving"): [f"{r['saving_vs_mha']:,.1f}×" for r in rows],
        },
        hide_index=True,
    )
    data = {k: [r[k] for r in rows] for k in ("variant", "kv_heads", "bytes")}
    ui.show_figure(kv_cache_figure(view, words), f"kv-cache-{cfg.name}-{ctx}", data=data, key="fig-kv")
    chk = view.check
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
