"""/moe, part 4: published sizes of real MoE models, and this page's own model for comparison."""

import pandas as pd
import streamlit as st

from app import shared
from core import slips
from core.moe import checkpoint_views


def _experts(routed: int, shared: int) -> str:
    return f"{routed} + {shared}" if shared else str(routed)


def table(view: checkpoint_views.RealModels, T) -> pd.DataFrame:
    """The published sizes as the page's table, headed in the reader's language."""
    table = view.table
    return pd.DataFrame(
        {
            T("c_model"): table["model"],
            T("c_experts"): [_experts(r, s) for r, s in zip(table["routed_experts"], table["shared_experts"])],
            T("c_active"): [_experts(k, s) for k, s in zip(table["routed_per_token"], table["shared_experts"])],
            T("c_total"): [f"{t:g}B" for t in table["total_params_b"]],
            T("c_active_p"): [f"{a:g}B" for a in table["active_params_b"]],
            T("c_frac"): [f"{f:.1%}" for f in table["active_fraction"]],
            T("c_routed"): [f"{f:.1%}" for f in table["routed_fraction"]],
            T("c_source"): table["source"],
        }
    )


def show(T, model=None) -> None:
    """model: the balanced MoEModel, or None when the checkpoints are missing (the table still shows)."""
    # the same for every visitor: the view once per model, its table once per language (not at every run)
    view = shared.view(checkpoint_views.real_models, model)
    st.header(T("real_h"))
    st.caption(T("real_intro"))
    st.dataframe(shared.table(table, view, "moe"), hide_index=True, width="stretch")
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
