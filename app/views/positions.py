"""How transformers know where a token is: sinusoidal, learned absolute, relative (Shaw), ALiBi and RoPE.
One part at a time (a radio bound to the URL), so each run computes only what is on screen."""

import math

import numpy as np
import streamlit as st
import torch

from app import models, ui
from core import alibi, learned_positions, relative, rope, sinusoidal
from core.models.minilm import minilm_position_embeddings
from viz.heatmap import attention_heatmap, matrix_heatmap
from viz.labels import indexed_labels
from viz.positions import bars, circle_figure, collision_figure, curves, value_heatmap

DEFAULT_TEXT = "The cat sat on the mat because it was tired. Then the cat slept."
SMOL_TOKENS = 64  # tokens of the SmolLM2 text used on this page (the bands figure is n x n per band)
PARTS = ("sinusoidal", "learned", "relative", "alibi", "rope")


@st.cache_data(show_spinner=False, max_entries=8)
def _sparsity(n: int, d: int, base: float, thr: float):
    var = sinusoidal.dimension_variation(n, d, base)
    return var, sinusoidal.slow_dimension_share(n, d, base, thr), sinusoidal.neighbour_step_share(d, base, thr)


def sinusoidal_part(T) -> None:
    st.markdown(T("sin_intro"))
    c1, c2, c3 = st.columns(3)
    with c1:
        d = ui.slider("d", T("d"), 8, 256, 64, step=8)
    d -= d % 2  # sin/cos pairs: an odd width from a link is rounded down
    with c2:
        n = ui.slider("n", T("n"), 16, 256, 128, step=16)
    with c3:
        base = 10 ** ui.slider("base", T("base"), 1.0, 6.0, 4.0, step=0.1)
    st.caption(T("base_now", base=base))
    pe = sinusoidal.sinusoidal_encoding(n, d, base)
    ui.show_figure(
        value_heatmap(
            pe, title=T("pe_title"), x_title=T("dimension"), y_title=T("position"), value_name="PE", decimals=3
        ),
        "sinusoidal-pe",
        data=pe,
        key="fig-pe",
    )

    dots = pe @ pe.T
    spread = max(float(np.ptp(np.diagonal(dots, offset=k))) for k in range(-(n - 1), n))
    c1, c2 = st.columns(2)
    with c1:
        ui.show_figure(
            value_heatmap(
                dots,
                title=T("dot_title"),
                x_title="j",
                y_title="i",
                value_name=T("dot"),
                colorscale="Viridis",
                zmid=None,
            ),
            "sinusoidal-dot",
            data=dots,
            key="fig-dot",
        )
    with c2:
        k = np.arange(-(n - 1), n)
        by = sinusoidal.pe_dot_by_distance(k, d, base)
        ui.show_figure(
            curves(k, {T("dot"): by}, title=T("dot_line_title"), x_title=T("distance"), y_title=T("dot")),
            "sinusoidal-dot-distance",
            data={"distance": k, "dot": by},
            key="fig-dot-line",
        )
    st.success(T("dot_check", pairs=n * n, spread=spread))

    st.subheader(T("why_both"))
    i = ui.slider("pair", T("pair"), 0, d // 2 - 1, min(2, d // 2 - 1))
    omega = float(sinusoidal.sinusoidal_frequencies(d, base)[i])
    col = sinusoidal.sine_collision(omega, n)
    positions = np.arange(n)
    c1, c2 = st.columns(2)
    with c1:
        ui.show_figure(
            collision_figure(
                positions,
                np.sin(positions * omega),
                col["p"],
                col["q"],
                title=T("collision_title", omega=omega),
                x_title=T("position"),
            ),
            "sine-collision",
            data={"position": positions, "sin": np.sin(positions * omega)},
            key="fig-collision",
        )
    with c2:
        pts = np.stack([np.sin(positions * omega), np.cos(positions * omega)], 1)
        ui.show_figure(
            circle_figure(
                pts,
                [(col["p"], f"p = {col['p']}"), (col["q"], f"p = {col['q']}")],
                title=T("circle_title"),
                x_title="sin",
                y_title="cos",
                colour_title=T("position"),
            ),
            "sin-cos-circle",
            key="fig-circle",
        )
    st.info(
        T(
            "collision",
            p=col["p"],
            q=col["q"],
            sp=col["sin_p"],
            sq=col["sin_q"],
            gap=col["sine_gap"],
            dist=col["pair_distance"],
        )
    )
    so = sinusoidal.sine_only_encoding(n, d, base)
    neighbour = np.einsum("pd,pd->p", so[:-1], so[1:])
    st.info(T("sine_only", lo=float(neighbour.min()), hi=float(neighbour.max())))

    st.subheader(T("sparsity"))
    c1, c2, c3 = st.columns(3)
    with c1:
        sp_d = int(ui.select("sp_d", T("sp_d"), ["512", "1024", "2048", "3072", "4096"], "3072"))
    with c2:
        sp_n = int(
            ui.select(
                "sp_n", T("sp_n"), ["128", "512", "2048", "8192", "32768"], "8192", format_func=lambda v: f"{int(v):,}"
            )
        )
    with c3:
        thr = float(
            ui.select(
                "thr", T("thr"), ["0.001", "0.01", "0.05", "0.1"], "0.01", format_func=lambda v: f"{float(v):.1%}"
            )
        )
    var, share, step = _sparsity(sp_n, sp_d, base, thr)
    cols = np.arange(sp_d)
    fig = curves(
        cols[0::2],
        {T("sin_cols"): var[0::2], T("cos_cols"): var[1::2]},
        title=T("var_title", n=sp_n, d=sp_d),
        x_title=T("dimension"),
        y_title=T("variation"),
        log_y=True,
        x_per_series={T("cos_cols"): cols[1::2]},
        hlines=[(thr, T("threshold"))],
    )
    ui.show_figure(fig, "sinusoidal-variation", data={"dimension": cols, "variation": var}, key="fig-var")
    st.info(
        T(
            "sparsity_result",
            share=share["share"],
            d=sp_d,
            count=share["count"],
            thr=thr,
            n=sp_n,
            s_share=share["sin_share"],
            c_share=share["cos_share"],
            least=float(var.min()),
            step=step,
        )
    )
    st.caption(T("sparsity_note"))


def learned_part(T) -> None:
    st.markdown(T("learned_intro"))
    model = models.load("minilm")
    if model is None:
        return
    table = minilm_position_embeddings(model)
    n = int(ui.select("npos", T("npos"), ["64", "128", "256", "512"], "128"))
    n = min(n, table.shape[0])
    sim = learned_positions.cosine_similarity_matrix(table[:n])
    k = 2 if n > 256 else 1
    shown = learned_positions.block_mean(sim, k)
    axis = np.arange(0, n, k) + (k - 1) / 2
    title = T("sim_title") + (T("pooled", k=k) if k > 1 else "")
    c1, c2 = st.columns(2)
    with c1:
        ui.show_figure(
            value_heatmap(
                shown,
                x=axis,
                y=axis,
                title=title,
                x_title=T("position"),
                y_title=T("position"),
                value_name=T("similarity"),
                zmin=-1.0,
                zmax=1.0,
            ),
            "minilm-position-similarity",
            data=shown,
            key="fig-sim",
        )
    by = learned_positions.similarity_by_distance(sim)
    with c2:
        ui.show_figure(
            curves(
                by["distance"],
                {T("mean"): by["mean"]},
                bands={T("mean"): (by["min"], by["max"])},
                title=T("sim_dist_title"),
                x_title=T("distance"),
                y_title=T("similarity"),
            ),
            "minilm-similarity-by-distance",
            data=by,
            key="fig-sim-dist",
        )
    far = min(100, n - 1)
    st.info(T("learned_result", s1=by["mean"][1], s10=by["mean"][min(10, n - 1)], far=far, sfar=by["mean"][far]))


def relative_part(T) -> None:
    st.markdown(T("rel_intro"))
    c1, c2, c3, c4 = st.columns(4)
    with c1:
        n = ui.slider("rel_n", T("rel_n"), 3, 24, 10)
    with c2:
        d = ui.slider("rel_d", T("rel_d"), 2, 32, 8, step=2)
    with c3:
        k = ui.slider("clip", T("clip"), 0, 12, 2)
    with c4:
        seed = ui.number("seed", T("seed"), 0, 9999, 0)
    g = torch.Generator().manual_seed(seed)
    q, key = torch.randn(n, d, generator=g), torch.randn(n, d, generator=g)
    table = torch.randn(2 * k + 1, d, generator=g)
    out = relative.shaw_attention(q, key, table, k)
    labels = [str(i) for i in range(n)]
    offsets = relative.clipped_offset_index(n, k).numpy() - k
    c1, c2 = st.columns(2)
    with c1:
        ui.show_figure(
            matrix_heatmap(
                offsets,
                labels,
                labels,
                title=T("offset_title"),
                x_title=T("key_axis"),
                y_title=T("query_axis"),
                value_name="clip(i−j)",
                decimals=0,
                show_values=n <= 16,
            ),
            "shaw-offsets",
            data=offsets,
            key="fig-offsets",
        )
    with c2:
        s = out["relative"].numpy()
        ui.show_figure(
            matrix_heatmap(
                s, labels, labels, title=T("s_title"), x_title=T("key_axis"), y_title=T("query_axis"), value_name="S"
            ),
            "shaw-s",
            data=s,
            key="fig-s",
        )
    w = out["weights"].numpy()
    ui.show_figure(
        attention_heatmap(w, labels, labels, title=T("rel_w_title"), x_title=T("key_axis"), y_title=T("query_axis")),
        "shaw-weights",
        data=w,
        key="fig-shaw-w",
    )
    # every row: keys beyond the clipping distance share one vector, on each side
    rel_idx = relative.relative_offsets(n)
    spread = 0.0
    for side in (rel_idx > k, rel_idx < -k):
        for i in range(n):
            vals = out["relative"][i][side[i]]
            if vals.numel() > 1:
                spread = max(spread, float(vals.max() - vals.min()))
    content_only = torch.softmax(out["content"] / math.sqrt(d), -1)
    st.info(T("rel_result", k=k, spread=spread, delta=float((out["weights"] - content_only).abs().max())))


def alibi_part(T) -> None:
    st.markdown(T("alibi_intro"))
    c1, c2, c3 = st.columns(3)
    with c1:
        heads = ui.slider("heads", T("heads"), 1, 32, 8)
    with c2:
        n = ui.slider("al_n", T("al_n"), 4, 64, 16)
    with c3:
        h = ui.slider("al_head", T("al_head"), 0, heads - 1, 0) if heads > 1 else 0
    slopes = alibi.alibi_slopes(heads)
    names = [str(i) for i in range(heads)]
    text = [f"2^{math.log2(m):.3g}" for m in slopes.tolist()]
    ui.show_figure(
        bars(
            names, slopes.numpy(), title=T("slopes_title"), x_title=T("head"), y_title=T("slope"), text=text, log_y=True
        ),
        "alibi-slopes",
        data={"head": names, "slope": slopes.numpy()},
        key="fig-slopes",
    )
    bias = alibi.alibi_bias(heads, n)[h]
    future = torch.isinf(bias)
    labels = [str(i) for i in range(n)]
    c1, c2 = st.columns(2)
    with c1:
        fig = attention_heatmap(
            bias.masked_fill(future, 0.0).numpy(),
            labels,
            labels,
            masked=future.numpy(),
            title=T("bias_title", h=h),
            x_title=T("key_axis"),
            y_title=T("query_axis"),
            zmin=None,
            zmax=0.0,
            colorscale="Reds_r",
            value_name=T("bias"),
            decimals=3,
        )
        ui.show_figure(fig, f"alibi-bias-head{h}", data=bias.numpy(), key="fig-bias")
    with c2:
        w = alibi.alibi_weights(heads, n)[h].numpy()
        ui.show_figure(
            attention_heatmap(
                w,
                labels,
                labels,
                masked=future.numpy(),
                title=T("al_w_title", h=h),
                x_title=T("key_axis"),
                y_title=T("query_axis"),
                value_name=T("weight"),
            ),
            f"alibi-weights-head{h}",
            data=w,
            key="fig-alibi-w",
        )
    span = alibi.effective_span(slopes)
    st.dataframe({T("head"): names, T("slope"): slopes.numpy(), T("span_col"): span.long().numpy()})
    st.caption(T("span_note"))


def rope_part(T) -> None:
    st.markdown(T("rope_intro"))
    c1, c2, c3 = st.columns(3)
    with c1:
        d = ui.slider("rope_d", T("rope_d"), 4, 64, 16, step=2)
    d -= d % 2  # keep RoPE pairs whole whatever the widget returns
    with c2:
        base = 10 ** ui.slider("rope_base", T("rope_base"), 1.0, 6.0, 4.0, step=0.1)
    with c3:
        m = ui.slider("m", T("m"), 0, 500, 3)
    layout = ui.select(
        "layout",
        T("layout"),
        ["adjacent", "rotate_half"],
        "adjacent",
        format_func=lambda v: T(f"layout_{v}"),
        radio=True,
        horizontal=True,
    )
    inv = rope.rope_inv_freq(d, base)
    R = rope.rotation_matrix(m, inv, layout).numpy()
    dims = [str(i) for i in range(d)]
    ui.show_figure(
        matrix_heatmap(
            R,
            dims,
            dims,
            title=T("r_title", m=m),
            x_title=T("in_dim"),
            y_title=T("out_dim"),
            value_name="R",
            show_values=d <= 12,
        ),
        f"rope-rotation-m{m}",
        data=R,
        key="fig-rot",
    )

    c1, c2 = st.columns(2)
    with c1:
        n = ui.slider("rope_n", T("rope_n"), 8, 512, 64, step=8)
    with c2:
        i = ui.slider("rope_pair", T("rope_pair"), 0, d // 2 - 1, 0)
    angles = torch.remainder(rope.rope_angles(torch.arange(n), inv), 2 * math.pi).numpy()
    ui.show_figure(
        value_heatmap(
            angles,
            title=T("angles_title"),
            x_title=T("pair_axis"),
            y_title=T("position"),
            colorscale="Twilight",
            zmid=None,
            zmin=0.0,
            zmax=2 * math.pi,
            value_name=T("angle"),
        ),
        "rope-angles",
        data=angles,
        key="fig-angles",
    )
    theta = float(inv[i])
    pts = rope.pair_trajectory([1.0, 0.0], theta, torch.arange(min(n, 64))).numpy()
    ui.show_figure(
        circle_figure(pts, [(0, "m = 0")], title=T("traj_title", i=i, theta=theta), colour_title=T("position")),
        f"rope-pair{i}",
        key="fig-traj",
    )

    st.subheader(T("check_title"))
    g = torch.Generator().manual_seed(0)
    q, k = torch.randn(d, generator=g, dtype=torch.float64), torch.randn(d, generator=g, dtype=torch.float64)
    n_check = min(n, 64)
    check = rope.relative_score_check(q, k, n_check, inv)
    c1, c2 = st.columns(2)
    with c1:
        s = check["scores"].numpy()
        ui.show_figure(
            value_heatmap(
                s, title=T("scores_title"), x_title=T("key_pos"), y_title=T("query_pos"), value_name=T("score")
            ),
            "rope-score-check",
            data=s,
            key="fig-check",
        )
    with c2:
        off = check["offsets"].numpy()
        ui.show_figure(
            curves(
                off,
                {T("score"): check["score_by_offset"].numpy()},
                title="q_m · k_n  vs  m − n",
                x_title="m − n",
                y_title=T("score"),
                markers=n_check <= 32,
            ),
            "rope-score-by-offset",
            data={"offset": off, "score": check["score_by_offset"].numpy()},
            key="fig-check-line",
        )
    st.success(T("check_result", pairs=n_check * n_check, range=check["score_range"], spread=check["max_spread"]))

    st.subheader(T("layouts"))
    perm = rope.half_permutation(d)
    x = torch.randn(5, d, generator=g, dtype=torch.float64)
    pos = torch.arange(5) * 7 + m
    diff = float(
        (rope.apply_rope_rotate_half(x[..., perm], pos, inv) - rope.apply_rope_adjacent(x, pos, inv)[..., perm])
        .abs()
        .max()
    )
    nodiff = float((rope.apply_rope_rotate_half(x, pos, inv) - rope.apply_rope_adjacent(x, pos, inv)).abs().max())
    perm_text = str(perm.tolist()) if d <= 16 else str(perm[:8].tolist())[:-1] + ", …]"
    st.info(T("layouts_result", perm=perm_text, diff=diff, nodiff=nodiff))

    if ui.checkbox("smol", T("smol"), False):
        smollm2_bands(T)


def smollm2_bands(T) -> None:
    model = models.load("smollm2")
    if model is None:
        return
    text = ui.text_area("text", T("text"), DEFAULT_TEXT, height=80)
    c1, c2, c3 = st.columns(3)
    with c1:
        layer = ui.slider("layer", T("layer"), 0, model.n_layers - 1, 3)
    with c2:
        head = ui.slider("head", T("smol_head"), 0, model.n_heads - 1, 0)
    with c3:
        n_bands = int(ui.select("bands", T("bands"), ["2", "4", "8"], "4"))
    if not text.strip():
        st.info(T("empty"))
        return
    trace = models.run("smollm2", model, [text], SMOL_TOKENS)
    q = trace.queries[layer][0, head].double()
    g = trace.kv_head(head)
    k = trace.keys[layer][0, g].double()
    tokens = indexed_labels(trace.batch.tokens[0])
    dims = [str(j) for j in range(q.shape[-1])]
    c1, c2 = st.columns(2)
    with c1:
        ui.show_figure(
            matrix_heatmap(
                q.numpy(),
                tokens,
                dims,
                title=T("q_title", l=layer, h=head),
                x_title=T("dimension"),
                y_title=T("token"),
                value_name="q",
                show_values=False,
            ),
            f"smollm2-q-l{layer}-h{head}",
            data=q.numpy(),
            row_labels=tokens,
            col_labels=dims,
            key="fig-q",
        )
    with c2:
        ui.show_figure(
            matrix_heatmap(
                k.numpy(),
                tokens,
                dims,
                title=T("k_title", l=layer, g=g),
                x_title=T("dimension"),
                y_title=T("token"),
                value_name="k",
                show_values=False,
            ),
            f"smollm2-k-l{layer}-g{g}",
            data=k.numpy(),
            row_labels=tokens,
            col_labels=dims,
            key="fig-k",
        )
    visible = trace.mask(0)
    scale = trace.scale
    half = q.shape[-1] // 2
    per_pair = rope.frequency_band_contributions(q, k, half) * scale  # (d/2, n, n): one band per pair
    abs_total = per_pair.abs().sum(0)
    share = (per_pair.abs() / abs_total.clamp_min(1e-30))[:, visible].mean(-1).numpy()
    pairs = [str(j) for j in range(half)]
    ui.show_figure(
        bars(pairs, share, title=T("band_share_title"), x_title=T("pair_label"), y_title=T("share")),
        f"smollm2-pair-share-l{layer}-h{head}",
        data={"pair": pairs, "share": share},
        key="fig-share",
    )
    bands = rope.frequency_band_contributions(q, k, n_bands) * scale
    edges = rope.band_edges(half, n_bands)
    full = (q @ k.T) * scale
    diff = float((bands.sum(0) - full)[visible].abs().max())
    band_share = [float((bands[b].abs() / bands.abs().sum(0).clamp_min(1e-30))[visible].mean()) for b in range(n_bands)]
    b = ui.slider("band", T("band"), 0, n_bands - 1, 0)
    fig = attention_heatmap(
        bands[b].numpy(),
        tokens,
        tokens,
        masked=(~visible).numpy(),
        title=T("band_title", b=b, a=edges[b][0], z=edges[b][1] - 1),
        zmin=None,
        colorscale="RdBu",
        value_name=T("score"),
        decimals=2,
    )
    fig.data[0].update(zmid=0.0)  # signed contributions: white at 0
    ui.show_figure(
        fig,
        f"smollm2-band{b}-l{layer}-h{head}",
        data=bands[b].numpy(),
        row_labels=tokens,
        col_labels=tokens,
        key="fig-band",
    )
    st.info(T("band_result", n=n_bands, diff=diff, shares=", ".join(f"{s:.0%}" for s in band_share)))


def page() -> None:
    global T
    T = ui.page_setup("positions")
    st.title(T("title"))
    st.markdown(T("intro"))
    part = ui.select(
        "part", T("part"), PARTS, "sinusoidal", format_func=lambda v: T(f"part_{v}"), radio=True, horizontal=True
    )
    {
        "sinusoidal": sinusoidal_part,
        "learned": learned_part,
        "relative": relative_part,
        "alibi": alibi_part,
        "rope": rope_part,
    }[part](T)
    ui.page_end()
