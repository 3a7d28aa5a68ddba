"""viz/logit_lens.py: the stage x position map from a small core.logit_lens.LensView (3 stages, 4 positions, top 2),
read back: colour = the probability of the final prediction, text = the lens's top token (escaped), stages down
from the embeddings, positions across."""

import functools

import numpy as np
import torch

from app import i18n
from core.logit_lens import LensView
from tests.phone_figures import placed_in_the_way_on_a_phone
from viz import logit_lens as figures

t = functools.partial(i18n.text, "en", "logit_lens.figure")


def small_view() -> LensView:
    top_tokens = [[["a", "b"], ["<b>", "c"], ["d", "e"], ["f", "g"]] for _ in range(3)]
    top_probs = torch.tensor([[[0.6, 0.3], [0.5, 0.2], [0.9, 0.05], [0.4, 0.4]]]).expand(3, 4, 2)
    final_prob = torch.tensor([[0.1, 0.2, 0.3, 0.4], [0.2, 0.3, 0.5, 0.4], [0.6, 0.5, 0.9, 0.4]])
    return LensView(
        tokens=["The", " cat", "<i>", " sat"],
        top_ids=torch.zeros(3, 4, 2, dtype=torch.long),
        top_tokens=top_tokens,
        top_probs=top_probs,
        final_ids=torch.zeros(4, dtype=torch.long),
        final_prob=final_prob,
        final_is_top=final_prob > 0.45,
        first_stage=[2, 2, 1, None],
    )


def test_lens_figure_is_the_final_predictions_probability_by_stage_and_position():
    view = small_view()
    fig = figures.lens_figure(view, t)
    (heat,) = fig.data
    z = np.array(heat.z, dtype=float)
    assert z.shape == (3, 4)
    np.testing.assert_allclose(z, view.final_prob.numpy(), atol=1e-6)
    assert list(heat.y) == [t("stage_embed"), t("stage_layer", l=0), t("stage_layer", l=1)]
    assert list(heat.x) == ["0: The", "1:  cat", "2: &lt;i&gt;", "3:  sat"]
    assert np.array(heat.text)[0].tolist() == ["a", "&lt;b&gt;", "d", "f"]  # the lens's top token, escaped
    assert (heat.zmin, heat.zmax) == (0.0, 1.0)
    assert fig.layout.yaxis.autorange == "reversed"  # embeddings on top
    assert (fig.layout.yaxis.title.text, fig.layout.xaxis.title.text) == (t("stage_axis"), t("position_axis"))
    assert fig.layout.title.text == t("figure_title", n=4, s=3)
    # the colour bar's title stands up its side: across its top it made the bar a third of a phone's figure
    assert not placed_in_the_way_on_a_phone(fig.to_plotly_json())
