"""SDPA backends and grouped-query attention (/sdpa-gqa): PyTorch's attention kernels against a naive
matmul-softmax-matmul (backends.py), the size of a decoder's key/value cache and what sharing key/value heads saves
(configs.py: published models' attention shapes; the bytes formula is core/kv_cache/memory.py), and the data each
part of the page draws (views.py)."""
