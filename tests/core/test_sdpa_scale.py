"""core/sdpa.py scale_or_default: the one 1/sqrt(d_k) fallback, equal to torch SDPA's default scale."""

import pytest
import torch
import torch.nn.functional as F

from core.sdpa import attention_scores, scale_or_default


@pytest.mark.parametrize("d", [1, 4, 64, 96])
def test_default_scale_is_torch_sdpas(d):
    g = torch.Generator().manual_seed(d)
    q, k, v = (torch.randn(2, 5, d, generator=g, dtype=torch.float64) for _ in range(3))
    ours = torch.softmax(attention_scores(q, k, scale_or_default(None, d)), -1) @ v
    torch.testing.assert_close(ours, F.scaled_dot_product_attention(q, k, v))
    assert scale_or_default(None, 64) == 0.125 and scale_or_default(0.3, 64) == 0.3
