"""/moe, part 4: published sizes of real MoE models, and this page's own model for comparison."""

import streamlit as st

from core import slips
from core.moe import checkpoint_views


def _experts(routed: int, shared: int) -> str:
    return f"{routed} + {shared}" if shared else str(routed)


def show(T, model=None) -> None:
    """model: the balanced MoEModel, or None when the checkpoints are missing (the table still shows)."""
    view = checkpoint_views.real_models(model)
    table = view.table
    st.header(T("real_h"))
    st.caption(T("real_intro"))
    st.dataframe(
        {
            T("c_model"): table["model"],
            T("c_experts"): [_experts(r, s) for r, s in zip(table["routed_experts"], table["shared_experts"])],
            T("c_active"): [_experts(k, s) for k, s in zip(table["routed_per_token"], table["shared_experts"])],
            T("c_total"): [f"{t:g}B" for t in table["total_params_b"]],
            T("c_active_p"): [f"{a:g}B" for a in table["active_params_b"]],
            T("c_frac"): [f"{f:.1%}" for f in table["active_fraction"]],
            T("c_routed"): [f"{f:.1%}" for f in table["routed_fraction"]],
            T("c_source"): table["source"],
        },
        hide_index=True,
        width="stretch",
    )
    mixtral = slips.mixtral_8x22b()
    st.caption(T("slip_mixtral", wrong=mixtral["wrong_b"], total=mixtral["total_b"], active=mixtral["active_b"]))
    low, high = slips.moe_active_shares()
    st.caption(T("slip_active", low=low, high=high))
    if view.ours_total is not None:
        st.caption(
            T(
                "ours",
                total=view.ours_total,
                active=view.ours_active,
                frac=view.ours_fraction,
                k=view.top_k,
                n=view.n_experts,
            )
        )
