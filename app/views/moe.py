"""Mixture-of-Experts routing you can see: the repo's own small Mixtral-style model, trained on labelled simple
English, shows for your text where each token goes, how full each expert is, what capacity drops, and what each
expert specialises in; a balanced and a collapsed checkpoint side by side; and the sizes of real MoE models."""

import numpy as np
import streamlit as st
import torch

from app import ui
from core import moe, moe_catalog, moe_training
from core.models import ModelUnavailable, moe_model
from viz import moe as vmoe
from viz.labels import indexed_labels

CAPACITY_FACTORS = [round(0.25 * i, 2) for i in range(1, 17)]  # 0.25 .. 4.0 (= experts / k here)
DEFAULT_TEXT = "The little cat sees a big dog. She runs to the park quickly, and they play together!"


@st.cache_resource(show_spinner=False)
def load(variant: str):
    return moe_model.load_moe(variant)


@st.cache_resource(show_spinner=False, max_entries=8)
def route_text(variant: str, text: str) -> dict:
    """Router logits of every layer for one text (the run is cached; the page slices it)."""
    model = load(variant)
    batch = model.tokenize([text])
    trace = model.run(batch)
    full = len(model.tokenizer(text)["input_ids"])
    return {
        "tokens": batch.tokens[0],
        "ids": batch.input_ids[0],
        "logits": trace.router_logits,
        "n_full": full,
        "truncated": batch.truncated[0],
    }


@st.cache_resource(show_spinner=False)
def held_out(variant: str) -> dict:
    return moe_training.evaluate(load(variant).model, moe_training.held_out_batch())


# --- real models ---------------------------------------------------------------------------------------------


def page() -> None:
    global model, text, variant
    T = ui.page_setup("moe")
    st.title(T("title"))
    st.markdown(T("intro"))
    try:
        models = {v: load(v) for v in moe_model.VARIANTS}
    except ModelUnavailable as err:
        st.error(T("unavailable", message=str(err)))
        models = None
    if models is not None:
        text = ui.text_area("text", T("text"), DEFAULT_TEXT)
        c1, c2, c3 = st.columns(3)
        with c1:
            variant = ui.select("ckpt", T("ckpt"), list(moe_model.VARIANTS), "balanced", format_func=T)
        model = models[variant]
        with c2:
            layer = ui.slider("layer", T("layer"), 0, model.n_layers - 1, 1)
        with c3:
            cf = ui.slider("cf", T("cf"), 0.25, 4.0, 1.25, step=0.25, help=T("cf_help"))
        st.caption(T("weights", note=model.weights_note))
        n_experts, top_k = model.n_experts, model.top_k
        ckpt_name = T(f"{variant}_short")

        routed = route_text(variant, text) if text.strip() else None
        if routed is None:
            st.info(T("empty"))
        else:
            if routed["truncated"]:
                st.info(T("truncated", n=routed["n_full"], limit=model.max_positions))
            tokens = routed["tokens"]
            words = [t for t in tokens[1:]]
            n_unk = sum(t == "[UNK]" for t in words)
            if n_unk:
                st.warning(T("unknown", n=n_unk, total=len(words)))
            logits = routed["logits"][layer]
            routing = moe.route_tokens(logits, top_k, capacity_factor=cf)
            no_cap = moe.route_tokens(logits, top_k)
            load_shares = moe.expert_load(routing.top_k_index, n_experts)
            entropy = moe.router_entropy(routing.probs)
            labels = indexed_labels(tokens)

            st.subheader(T("routing_h", layer=layer))
            m1, m2, m3, m4 = st.columns(4)
            m1.metric(
                T("m_switch"),
                f"{float(moe.switch_balance_loss(routing.probs, routing.top_k_index)):.3f}",
                help=T("m_switch_help", n=n_experts),
            )
            m2.metric(
                T("m_dev"),
                f"{float(moe.uniform_deviation_loss(load_shares)):.3f}",
                help=T("m_dev_help", m=n_experts - 1),
            )
            m3.metric(
                T("m_entropy"),
                f"{float(entropy.mean()):.3f}",
                help=T("m_entropy_help", n=n_experts, max=float(np.log(n_experts))),
            )
            n_dropped = int((~routing.kept).sum())
            m4.metric(
                T("m_dropped"),
                f"{n_dropped} / {routing.kept.numel()}",
                help=T("m_dropped_help", tokens=int((~routing.kept.any(-1)).sum()), cap=routing.capacity),
            )

            fig = vmoe.router_heatmap(
                routing.probs.numpy(),
                labels,
                routing.chosen().numpy(),
                routing.dropped().numpy(),
                title=T("heatmap_title", ckpt=ckpt_name, layer=layer, cf=cf),
                x_title=T("expert_axis"),
                y_title=T("token_axis"),
                chosen_name=T("chosen"),
                dropped_name=T("dropped"),
            )
            ui.show_figure(
                fig,
                f"moe-router-{variant}-layer{layer}",
                data=routing.probs.numpy(),
                row_labels=labels,
                col_labels=vmoe.expert_labels(n_experts),
                key="router",
            )

            left, right = st.columns(2)
            with left:
                cap_share = routing.capacity / max(1, routing.kept.numel())
                fig = vmoe.load_bars(
                    {ckpt_name: load_shares.numpy()},
                    title=T("load_title", layer=layer),
                    y_title=T("share_axis"),
                    uniform_label=T("uniform"),
                    capacity_share=cap_share if cap_share < 1 else None,
                    capacity_label=T("capacity_line"),
                )
                ui.show_figure(
                    fig,
                    f"moe-load-{variant}-layer{layer}",
                    data={
                        "expert": vmoe.expert_labels(n_experts),
                        "share": load_shares.tolist(),
                        "count": moe.expert_counts(routing.top_k_index, n_experts).tolist(),
                    },
                    key="load",
                )
                shares = moe.dropped_share_by_capacity(no_cap.top_k_index, n_experts, CAPACITY_FACTORS)
                fig = vmoe.dropped_curve(
                    CAPACITY_FACTORS,
                    shares,
                    current=cf,
                    title=T("drop_title", layer=layer),
                    x_title=T("drop_x"),
                    y_title=T("drop_y"),
                    current_label=T("slider"),
                )
                ui.show_figure(
                    fig,
                    f"moe-dropped-{variant}-layer{layer}",
                    data={"capacity_factor": CAPACITY_FACTORS, "dropped_share": shares},
                    key="dropped",
                )
            with right:
                fig = vmoe.entropy_bars(
                    entropy.numpy(),
                    labels,
                    float(np.log(n_experts)),
                    title=T("entropy_title", layer=layer),
                    x_title=T("entropy_axis"),
                    max_label=T("entropy_max"),
                )
                ui.show_figure(
                    fig,
                    f"moe-entropy-{variant}-layer{layer}",
                    data={"token": labels, "entropy_nats": entropy.tolist()},
                    key="entropy",
                )

            st.markdown(f"**{T('first_choice', layer=layer)}**")
            first = routing.top_k_index[:, 0].tolist()
            rows = {T("col_expert"): [], T("col_tokens"): []}
            for e in range(n_experts):
                picked = sorted({tokens[i] for i, f in enumerate(first) if f == e})
                rows[T("col_expert")].append(f"expert {e}")
                rows[T("col_tokens")].append(" · ".join(picked[:40]) + (" …" if len(picked) > 40 else ""))
            st.dataframe(rows, hide_index=True, width="stretch")  # dataframe cells are text, never HTML

        # --- specialisation (held-out, labelled) ---------------------------------------------------------------
        st.subheader(T("spec_h"))
        stats = held_out(variant)
        names = moe_model.category_names()
        counts = torch.tensor(stats["layers"][layer]["category_counts"], dtype=torch.float32)
        keep = counts.sum(0) > 0  # categories the held-out text contains (no [UNK] there)
        counts, shown_names = counts[:, keep], [n for n, k in zip(names, keep.tolist()) if k]
        st.caption(T("spec_intro", n=stats["held_out_tokens"]))
        shares, lift = moe.category_shares(counts), moe.category_lift(counts)
        fig = vmoe.category_heatmap(
            shares.numpy(),
            lift.numpy(),
            shown_names,
            title=T("spec_title", ckpt=ckpt_name, layer=layer),
            x_title=T("category_axis"),
            y_title=T("expert_axis"),
        )
        ui.show_figure(
            fig,
            f"moe-specialisation-{variant}-layer{layer}",
            data=shares.numpy(),
            row_labels=vmoe.expert_labels(n_experts),
            col_labels=shown_names,
            key="spec",
        )
        layer_load = stats["layers"][layer]["expert_load"]
        for e, (cat, share, lf) in enumerate(moe.top_categories(counts, shown_names)):
            st.markdown(
                "- "
                + (
                    T("spec_line", e=e, cat=cat, share=share, lift=lf, load=layer_load[e])
                    if cat
                    else T("spec_unused", e=e)
                )
            )

        # --- balanced vs collapsed -----------------------------------------------------------------------------
        st.subheader(T("compare_h"))
        st.caption(T("compare_intro"))
        columns = st.columns(len(moe_model.VARIANTS))
        for col, v in zip(columns, moe_model.VARIANTS):
            s = held_out(v)
            loads = np.array([lay["expert_load"] for lay in s["layers"]])
            with col:
                a, b, c = st.columns(3)
                a.metric(T("m_loss"), f"{s['held_out_loss']:.3f}")
                b.metric(T("m_min"), f"{loads.min():.1%}", help=T("m_min_help", u=1 / n_experts))
                c.metric(T("m_max"), f"{loads.max():.1%}")
                fig = vmoe.layer_load_heatmap(
                    loads,
                    title=T("layer_load_title", ckpt=T(f"{v}_short")),
                    x_title=T("expert_axis"),
                    y_title=T("layer_axis"),
                    zmax=0.5,
                )
                ui.show_figure(
                    fig,
                    f"moe-layer-load-{v}",
                    data=loads,
                    row_labels=[f"layer {i}" for i in range(len(loads))],
                    col_labels=vmoe.expert_labels(n_experts),
                    key=f"layer-load-{v}",
                )
        if routed is not None:
            both = {}
            for v in moe_model.VARIANTS:
                r = moe.route_tokens(route_text(v, text)["logits"][layer], top_k)
                both[T(f"{v}_short")] = moe.expert_load(r.top_k_index, n_experts).numpy()
            fig = vmoe.load_bars(
                both, title=T("compare_text", layer=layer), y_title=T("share_axis"), uniform_label=T("uniform")
            )
            ui.show_figure(
                fig,
                f"moe-compare-layer{layer}",
                data={"expert": vmoe.expert_labels(n_experts), **{k: v.tolist() for k, v in both.items()}},
                key="compare",
            )
        curves = {
            T(f"{v}_short"): (
                [e["step"] for e in models[v].report["loss_curve"]],
                [e["lm_loss"] for e in models[v].report["loss_curve"]],
            )
            for v in moe_model.VARIANTS
        }
        fig = vmoe.loss_curves(curves, title=T("curves_title"), x_title=T("step_axis"), y_title=T("loss_axis"))
        ui.show_figure(fig, "moe-training-loss", key="curves")
        st.caption(T("curves_note"))
    st.subheader(T("real_h"))
    st.caption(T("real_intro"))
    table = moe_catalog.moe_table()
    st.dataframe(
        {
            T("c_model"): table["model"],
            T("c_experts"): [
                f"{r} + {s}" if s else str(r) for r, s in zip(table["routed_experts"], table["shared_experts"])
            ],
            T("c_active"): [
                f"{k} + {s}" if s else str(k) for k, s in zip(table["routed_per_token"], table["shared_experts"])
            ],
            T("c_total"): [f"{t:g}B" for t in table["total_params_b"]],
            T("c_active_p"): [f"{a:g}B" for a in table["active_params_b"]],
            T("c_frac"): [f"{f:.1%}" for f in table["active_fraction"]],
            T("c_routed"): [f"{f:.1%}" for f in table["routed_fraction"]],
            T("c_source"): table["source"],
        },
        hide_index=True,
        width="stretch",
    )
    if models is not None:
        total, active = moe_model.parameter_counts(models["balanced"].model)
        st.caption(T("ours", total=total, active=active, frac=moe_catalog.active_fraction(active, total)))
    ui.page_end()
