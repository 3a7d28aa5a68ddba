"""Exact attention maps of a long document (the /long-maps page), never holding the n x n matrix.

    pooled.py          every head's exact softmax weights pooled block-wise to <= 512 x 512 mean and max cells
    triton_kernels.py  the same two passes as fused Triton kernels (CUDA; torch is the fallback and reference)
    maps.py            one layer's q and k (a model on a document, or random), pooled maps, exact coarsening,
                       causal future cells, numbers read off the maps, full-resolution windows
    views.py           the data of each part of the page, one object per part
    sources.py         what the page may compute with a model, from its Capabilities: exact or not, layers, heads,
                       lengths (a learned position table stops them), causal or bidirectional

Bins are core.pooling.bin_edges, as in every pooled view. A pooled mean here is the mean of a block of the full
n x n matrix, in which a causal model's future weights are exactly 0 (they count as 0, as in
core.pooling.block_mean without a mask); cells whose every key is in the future are marked masked.
The names of maps.py are re-exported here (`from core import long_maps as lm; lm.layer_maps`).
"""

from .maps import (
    RANDOM_SHAPE,
    LayerMaps,
    LayerQK,
    coarsen,
    document_batch,
    full_matrix_bytes,
    future_cells,
    head_summary,
    layer_maps,
    layer_qk_of,
    log_colour_range,
    pooled_layer,
    random_qk,
    zoom_window,
)

__all__ = [
    "RANDOM_SHAPE",
    "LayerMaps",
    "LayerQK",
    "coarsen",
    "document_batch",
    "full_matrix_bytes",
    "future_cells",
    "head_summary",
    "layer_maps",
    "layer_qk_of",
    "pooled_layer",
    "log_colour_range",
    "random_qk",
    "zoom_window",
]
