"""Part 2: the KV cache of a model as MHA, GQA and MQA, and the check that GQA is MHA with repeated K/V."""

from types import SimpleNamespace

import streamlit as st

from app import ui
from core import slips
from core.sdpa_gqa import configs as kvc
from core.sdpa_gqa.state import CUSTOM, STATE
from core.sdpa_gqa.state import model_config as config_of
from core.sdpa_gqa.views import kv_cache_view
from core.timing import human_bytes
from viz.sdpa_gqa import kv_cache_figure, variant_labels


def model_config(T) -> kvc.ModelConfig | None:
    key = ui.field(STATE["cfg"], T("cfg"), format_func=lambda k: T("custom") if k == CUSTOM else kvc.PRESETS[k].name)
    if key != CUSTOM:
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
        layers = ui.field(STATE["layers"], T("layers"), widget="number")
    with c[1]:
        heads = ui.field(STATE["heads"], T("heads"), widget="number")
    with c[2]:
        kv = ui.field(STATE["kv"], T("kv"), widget="number")
    with c[3]:
        hd = ui.field(STATE["hd"], T("hd"), widget="number")
    cfg = config_of(SimpleNamespace(cfg=key, layers=layers, heads=heads, kv=kv, hd=hd), T("custom"))
    if cfg is None:
        st.error(T("bad_heads", h=heads, kv=kv))
    return cfg


def part(T) -> None:
    st.header(T("h_gqa"))
    st.markdown(T("gqa"))
    st.caption(T("slip_gqa", ratios="; ".join(f"{name} {r}" for name, r in slips.gqa_ratios().items())))
    cfg = model_config(T)
    c1, c2, c3 = st.columns(3)
    with c1:
        ctx = ui.field(STATE["ctx"], T("ctx"), widget="number")
    with c2:
        batch = ui.field(STATE["batch"], T("batch"), widget="number")
    with c3:
        dtype = ui.field(STATE["dtype"], T("dtype"))
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
