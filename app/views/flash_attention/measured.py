"""Part 3: the paper's claimed speed-up beside the committed H200 figures (core/flash_attention_measured.py)."""

import streamlit as st

from core import flash_attention_measured as fm


def _x(v: float | None) -> str:
    return "–" if v is None else f"{v:.1f}×"


def _ms(T, ms: float | None, why: str | None) -> str:
    """A time, or why the run has none, in the reader's words (core maps the run's status to `why`)."""
    return T(f"gpu_why_{why}") if ms is None else f"{ms:.2f}"


def show(T) -> None:
    st.subheader(T("gpu_header"))
    run = fm.committed_gpu_run()
    if run is None:
        st.info(T("gpu_none", path=f"results/{fm.GPU_RESULT}.json"))
        return
    view = fm.measured_run(run)
    if view.seq_lo is None:  # a run file that timed nothing
        st.info(T("gpu_none", path=f"results/{fm.GPU_RESULT}.json"))
        return
    rows, m = view.rows, fm.MATERIAL_SHAPE
    st.markdown(T("gpu_claim", low=fm.PAPER_CLAIM[0], high=fm.PAPER_CLAIM[1], **m,
                  b=", ".join(map(str, view.batches)), h=", ".join(map(str, view.heads)),
                  n_lo=view.seq_lo, n_hi=view.seq_hi, ds=", ".join(map(str, view.head_dims))))  # fmt: skip
    st.dataframe(
        {
            T("gpu_col_shape"): [f"B={r.batch} H={r.heads} N={r.seq_len:,} D={r.head_dim}" for r in rows],
            T("gpu_col_dtype"): [r.dtype + (" " + T("gpu_causal") if r.causal else "") for r in rows],
            T("gpu_col_naive"): [_ms(T, r.naive_ms, r.naive_reason) for r in rows],
            T("gpu_col_flash"): [_ms(T, r.flash_ms, r.flash_reason) for r in rows],
            T("gpu_col_speedup"): [_x(r.flash_speedup) for r in rows],
            T("gpu_col_efficient_ms"): [_ms(T, r.efficient_ms, r.efficient_reason) for r in rows],
            T("gpu_col_efficient"): [_x(r.efficient_speedup) for r in rows],
        },
        hide_index=True,
    )
    if view.without_standard:
        st.markdown(T("gpu_no_standard", missing=view.without_standard, shapes=view.shapes))
    like = view.like_material
    if like is not None:
        st.markdown(T(f"gpu_verdict_{like.within_claim}", flash=like.flash_ms, naive=like.naive_ms, x=like.flash_speedup,
                      batch=like.batch, heads=like.heads, **{k: v for k, v in m.items() if k not in ("batch", "heads")}))  # fmt: skip
    fp32 = view.fp32_without_flash
    if fp32 is not None:
        st.markdown(T("gpu_fp32", n=fp32.seq_len, d=fp32.head_dim, x=_x(fp32.efficient_speedup)))
    st.caption(T("gpu_meta", command=run["command"], date=run["date"][:10], device=run["device_name"],
                 torch=run["torch"], path=f"results/{fm.GPU_RESULT}.json"))  # fmt: skip
