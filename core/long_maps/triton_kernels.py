"""Fused Triton kernels for core.long_maps.pooled: the same exact maps, but no score tile ever leaves the chip.

    _row_lse_kernel   one program per (block of BLOCK_M queries, batch x head): streams the keys in tiles of
                      BLOCK_N, keeps an online max and sum (as FlashAttention does, without the V product) and
                      writes lse2_i = log2 sum_j 2^(s_ij), with s = scale * log2(e) * q . k (base 2: exp2 is the
                      GPU's native exponential).
    _pooled_kernel    one program per (query bin a, batch x head): for each key bin b, computes that cell's tiles,
                      w_ij = 2^(s_ij - lse2_i) (exact softmax weights), and reduces them to the cell's sum and max;
                      the host divides the sums by the cell sizes. When a query bin fits in one row tile
                      (ONE_ROW_TILE), its queries are loaded once for all key bins, and with the config's
                      fused_stats (off by default) the program computes its rows' lse2 itself (FUSED_STATS: one
                      launch, no log-sum-exp in memory).

With the config's one_pass (off by default until a GPU's sweep shows it faster), q k^T is computed once instead of
twice, with one exponential per score instead of two, as in SDPA's forward (which adds only the P V product):
    _bin_stats_kernel one program per (block of BLOCK_M queries, batch x head): for each key bin b, its rows' max
                      m_ib = max_j s_ij and sum l_ib = sum_j 2^(s_ij - m_ib) over the bin's keys (one tile when a
                      bin fits BLOCK_N keys, ONE_KEY_TILE; else an online max and sum over the bin's tiles), written
                      to a scratch of (B*H, s_k, rows).
    _bins_lse_kernel  each row's lse2_i = log2 sum_b 2^(m_ib) l_ib, from the scratch alone.
    _bins_cells_kernel one program per (query bin a, block of key bins, batch x head): cell (a, b)'s sum is
                      sum_i 2^(m_ib - lse2_i) l_ib and its max max_i 2^(m_ib - lse2_i) (a bin's largest weight is
                      its largest score's), over the rows of bin a.
The scratch holds 8 bytes per (row, key bin, head): the query bins are taken in consecutive groups whose scratch
fits the config's scratch_mib, each group one launch of each kernel.

Scores are accumulated in float32 by tl.dot whatever the input type (float32 inputs use IEEE float32, never
TF32). Extra memory: the (B, H, n) float32 log-sum-exp (one_pass: its scratch, at most scratch_mib) and the two
(B, H, s, s) outputs, nothing of size n x n.
Tested against the torch implementation on a GPU, and on CPU through Triton's interpreter (TRITON_INTERPRET=1).
"""

from __future__ import annotations

import math
import os

import numpy as np
import torch

try:
    import triton
    import triton.language as tl
except ImportError:  # the CPU-only install: core.long_maps.pooled falls back to torch
    triton = None

LOG2E = 1.4426950408889634


def interpreted() -> bool:
    return os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")


def available(q: torch.Tensor) -> bool:
    """Can the kernels run on q's device here?"""
    return triton is not None and (q.is_cuda or interpreted())


def _pow2(x: int, lo: int = 16) -> int:
    return max(lo, 1 << max(0, math.ceil(math.log2(max(1, x)))))


if triton is not None:

    @triton.jit
    def _row_lse_kernel(
        Q,
        K,
        LSE,
        sqb,
        sqh,
        sqn,
        sqd,
        skb,
        skh,
        skn,
        skd,
        n_q,
        n_k,
        H,
        REP,
        head_dim,
        qk_scale,
        CAUSAL: tl.constexpr,
        BLOCK_M: tl.constexpr,
        BLOCK_N: tl.constexpr,
        D_PAD: tl.constexpr,
        PRECISION: tl.constexpr,
    ):
        pid_m = tl.program_id(0)
        bh = tl.program_id(1)
        b = bh // H
        h = bh % H
        hk = h // REP
        rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        dims = tl.arange(0, D_PAD)
        row_ok = rows < n_q
        q = tl.load(
            Q + b * sqb + h * sqh + rows[:, None] * sqn + dims[None, :] * sqd,
            mask=row_ok[:, None] & (dims[None, :] < head_dim),
            other=0.0,
        )
        end = n_k
        if CAUSAL:
            end = tl.minimum(n_k, (pid_m + 1) * BLOCK_M)
        lse2 = _row_lse2(q, rows, K + b * skb + hk * skh, skn, skd, dims, head_dim, n_k, end, qk_scale,
                         CAUSAL, BLOCK_M, BLOCK_N, PRECISION)  # fmt: skip
        tl.store(LSE + bh * n_q + rows, lse2, mask=row_ok)

    @triton.jit
    def _row_lse2(
        q,
        rows,
        k_base,
        skn,
        skd,
        dims,
        head_dim,
        n_k,
        end,
        qk_scale,
        CAUSAL: tl.constexpr,
        BLOCK_M: tl.constexpr,
        BLOCK_N: tl.constexpr,
        PRECISION: tl.constexpr,
    ):
        """log2 sum_j 2^(s_ij) over the keys before `end` of the rows loaded in q: an online max and sum."""
        m_i, l_i = _row_max_sum(q, rows, k_base, skn, skd, dims, head_dim, 0, end, n_k, qk_scale,
                                CAUSAL, BLOCK_M, BLOCK_N, PRECISION)  # fmt: skip
        return m_i + tl.log2(l_i)

    @triton.jit
    def _row_max_sum(
        q,
        rows,
        k_base,
        skn,
        skd,
        dims,
        head_dim,
        lo,
        hi,
        limit,
        qk_scale,
        CAUSAL: tl.constexpr,
        BLOCK_M: tl.constexpr,
        BLOCK_N: tl.constexpr,
        PRECISION: tl.constexpr,
    ):
        """(m_i, l_i): the largest score max_j s_ij of each row loaded in q over keys lo..hi (those before `limit`),
        and sum_j 2^(s_ij - m_i), by an online max and sum over tiles of BLOCK_N keys."""
        m_i = tl.full([BLOCK_M], -1.0e30, tl.float32)  # finite: a fully masked tile then adds exactly 0
        l_i = tl.zeros([BLOCK_M], tl.float32)
        for start in range(lo, hi, BLOCK_N):
            s = _score_tile(q, rows, k_base, skn, skd, dims, head_dim, start, limit, qk_scale,
                            CAUSAL, BLOCK_N, PRECISION)  # fmt: skip
            m_new = tl.maximum(m_i, tl.max(s, 1))
            l_i = l_i * tl.exp2(m_i - m_new) + tl.sum(tl.exp2(s - m_new[:, None]), 1)
            m_i = m_new
        return m_i, l_i

    @triton.jit
    def _score_tile(
        q,
        rows,
        k_base,
        skn,
        skd,
        dims,
        head_dim,
        start,
        limit,
        qk_scale,
        CAUSAL: tl.constexpr,
        BLOCK_N: tl.constexpr,
        PRECISION: tl.constexpr,
    ):
        """The scores (log2 units) of the rows loaded in q against keys start..start + BLOCK_N, -inf for keys at or
        after `limit` and (causal) after the row."""
        cols = start + tl.arange(0, BLOCK_N)
        col_ok = cols < limit
        k = tl.load(
            k_base + cols[:, None] * skn + dims[None, :] * skd,
            mask=col_ok[:, None] & (dims[None, :] < head_dim),
            other=0.0,
        )
        s = tl.dot(q, tl.trans(k), input_precision=PRECISION) * qk_scale
        ok = col_ok[None, :]
        if CAUSAL:
            ok = ok & (cols[None, :] <= rows[:, None])
        return tl.where(ok, s, float("-inf"))

    @triton.jit
    def _cell_tiles(
        q,
        lse,
        rows,
        row_ok,
        k_base,
        skn,
        skd,
        dims,
        head_dim,
        c0,
        c1,
        qk_scale,
        acc_sum,
        acc_max,
        CAUSAL: tl.constexpr,
        BLOCK_N: tl.constexpr,
        PRECISION: tl.constexpr,
    ):
        """Add the tiles of key columns c0..c1 (one key bin) for the rows loaded in q to the column-wise
        accumulators."""
        for start in range(c0, c1, BLOCK_N):
            cols = start + tl.arange(0, BLOCK_N)
            col_ok = cols < c1
            k = tl.load(
                k_base + cols[:, None] * skn + dims[None, :] * skd,
                mask=col_ok[:, None] & (dims[None, :] < head_dim),
                other=0.0,
            )
            s = tl.dot(q, tl.trans(k), input_precision=PRECISION) * qk_scale
            ok = row_ok[:, None] & col_ok[None, :]
            if CAUSAL:
                ok = ok & (cols[None, :] <= rows[:, None])
            w = tl.where(ok, tl.exp2(s - lse[:, None]), 0.0)
            acc_sum += tl.sum(w, 0)
            acc_max = tl.maximum(acc_max, tl.max(w, 0))
        return acc_sum, acc_max

    @triton.jit
    def _pooled_kernel(
        Q,
        K,
        LSE,
        ROW_EDGES,
        COL_EDGES,
        COL_END,
        OUT_SUM,
        OUT_MAX,
        sqb,
        sqh,
        sqn,
        sqd,
        skb,
        skh,
        skn,
        skd,
        n_q,
        H,
        REP,
        head_dim,
        s_q,
        s_k,
        qk_scale,
        n_k,
        CAUSAL: tl.constexpr,
        ONE_ROW_TILE: tl.constexpr,
        FUSED_STATS: tl.constexpr,
        BLOCK_M: tl.constexpr,
        BLOCK_N: tl.constexpr,
        D_PAD: tl.constexpr,
        PRECISION: tl.constexpr,
    ):
        a = tl.program_id(0)
        bh = tl.program_id(1)
        b = bh // H
        h = bh % H
        hk = h // REP
        r0 = tl.load(ROW_EDGES + a)
        r1 = tl.load(ROW_EDGES + a + 1)
        last_bin = tl.load(COL_END + a)  # key bins >= last_bin are all in the future (causal): zeros
        dims = tl.arange(0, D_PAD)
        q_base = Q + b * sqb + h * sqh
        k_base = K + b * skb + hk * skh
        lse_base = LSE + bh * n_q
        out = bh * s_q * s_k + a * s_k
        if ONE_ROW_TILE:
            rows = r0 + tl.arange(0, BLOCK_M)
            row_ok = rows < r1
            q = tl.load(
                q_base + rows[:, None] * sqn + dims[None, :] * sqd,
                mask=row_ok[:, None] & (dims[None, :] < head_dim),
                other=0.0,
            )
            if FUSED_STATS:  # this bin's rows' statistics here: one launch, q loaded once, no LSE round trip
                end = n_k
                if CAUSAL:
                    end = tl.minimum(n_k, r1)
                lse = _row_lse2(q, rows, k_base, skn, skd, dims, head_dim, n_k, end, qk_scale,
                                CAUSAL, BLOCK_M, BLOCK_N, PRECISION)  # fmt: skip
            else:
                lse = tl.load(lse_base + rows, mask=row_ok, other=0.0)
            for cb in range(0, last_bin):
                c0 = tl.load(COL_EDGES + cb)
                c1 = tl.load(COL_EDGES + cb + 1)
                acc_sum = tl.zeros([BLOCK_N], tl.float32)
                acc_max = tl.zeros([BLOCK_N], tl.float32)
                acc_sum, acc_max = _cell_tiles(
                    q,
                    lse,
                    rows,
                    row_ok,
                    k_base,
                    skn,
                    skd,
                    dims,
                    head_dim,
                    c0,
                    c1,
                    qk_scale,
                    acc_sum,
                    acc_max,
                    CAUSAL,
                    BLOCK_N,
                    PRECISION,
                )
                tl.store(OUT_SUM + out + cb, tl.sum(acc_sum, 0))
                tl.store(OUT_MAX + out + cb, tl.max(acc_max, 0))
        else:
            for cb in range(0, last_bin):
                c0 = tl.load(COL_EDGES + cb)
                c1 = tl.load(COL_EDGES + cb + 1)
                acc_sum = tl.zeros([BLOCK_N], tl.float32)
                acc_max = tl.zeros([BLOCK_N], tl.float32)
                for start in range(r0, r1, BLOCK_M):
                    rows = start + tl.arange(0, BLOCK_M)
                    row_ok = rows < r1
                    q = tl.load(
                        q_base + rows[:, None] * sqn + dims[None, :] * sqd,
                        mask=row_ok[:, None] & (dims[None, :] < head_dim),
                        other=0.0,
                    )
                    lse = tl.load(lse_base + rows, mask=row_ok, other=0.0)
                    acc_sum, acc_max = _cell_tiles(
                        q,
                        lse,
                        rows,
                        row_ok,
                        k_base,
                        skn,
                        skd,
                        dims,
                        head_dim,
                        c0,
                        c1,
                        qk_scale,
                        acc_sum,
                        acc_max,
                        CAUSAL,
                        BLOCK_N,
                        PRECISION,
                    )
                tl.store(OUT_SUM + out + cb, tl.sum(acc_sum, 0))
                tl.store(OUT_MAX + out + cb, tl.max(acc_max, 0))

    @triton.jit
    def _bin_stats_kernel(
        Q,
        K,
        COL_EDGES,
        TILE_BINS,
        M_OUT,
        L_OUT,
        sqb,
        sqh,
        sqn,
        sqd,
        skb,
        skh,
        skn,
        skd,
        r0,
        r1,
        n_rows,
        H,
        REP,
        head_dim,
        s_k,
        qk_scale,
        CAUSAL: tl.constexpr,
        ONE_KEY_TILE: tl.constexpr,
        BLOCK_M: tl.constexpr,
        BLOCK_N: tl.constexpr,
        D_PAD: tl.constexpr,
        PRECISION: tl.constexpr,
    ):
        pid_m = tl.program_id(0)
        bh = tl.program_id(1)
        b = bh // H
        h = bh % H
        hk = h // REP
        rows = r0 + pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        row_ok = rows < r1
        dims = tl.arange(0, D_PAD)
        q = tl.load(
            Q + b * sqb + h * sqh + rows[:, None] * sqn + dims[None, :] * sqd,
            mask=row_ok[:, None] & (dims[None, :] < head_dim),
            other=0.0,
        )
        k_base = K + b * skb + hk * skh
        out = bh * s_k * n_rows + (rows - r0)
        n_bins = tl.load(TILE_BINS + pid_m)  # causal: the key bins that start at or before this tile's last row
        for cb in range(0, n_bins):
            c0 = tl.load(COL_EDGES + cb)
            c1 = tl.load(COL_EDGES + cb + 1)
            if ONE_KEY_TILE:  # the bin in one tile: a single loop, over the bins, whose loads Triton can pipeline
                s = _score_tile(q, rows, k_base, skn, skd, dims, head_dim, c0, c1, qk_scale,
                                CAUSAL, BLOCK_N, PRECISION)  # fmt: skip
                m_i = tl.maximum(tl.max(s, 1), -1.0e30)  # finite: a row with no key of this bin yet adds 0
                l_i = tl.sum(tl.exp2(s - m_i[:, None]), 1)
            else:
                m_i, l_i = _row_max_sum(q, rows, k_base, skn, skd, dims, head_dim, c0, c1, c1, qk_scale,
                                        CAUSAL, BLOCK_M, BLOCK_N, PRECISION)  # fmt: skip
            tl.store(M_OUT + out + cb * n_rows, m_i, mask=row_ok)
            tl.store(L_OUT + out + cb * n_rows, l_i, mask=row_ok)

    @triton.jit
    def _bins_lse_kernel(
        M_IN,
        L_IN,
        COL_EDGES,
        LSE,
        r0,
        r1,
        n_rows,
        s_k,
        CAUSAL: tl.constexpr,
        BLOCK_R: tl.constexpr,
        BLOCK_B: tl.constexpr,
    ):
        pid_r = tl.program_id(0)
        bh = tl.program_id(1)
        rows = r0 + pid_r * BLOCK_R + tl.arange(0, BLOCK_R)
        row_ok = rows < r1
        base = bh * s_k * n_rows + (rows - r0)
        mx = tl.full([BLOCK_R], -1.0e30, tl.float32)
        total = tl.zeros([BLOCK_R], tl.float32)
        for start in range(0, s_k, BLOCK_B):
            bins = start + tl.arange(0, BLOCK_B)
            ok = (bins[:, None] < s_k) & row_ok[None, :]
            if CAUSAL:  # a key bin that starts after row i was not computed for it: it holds only future keys
                ok = ok & (tl.load(COL_EDGES + bins, mask=bins < s_k, other=0)[:, None] <= rows[None, :])
            m = tl.load(M_IN + base[None, :] + bins[:, None] * n_rows, mask=ok, other=-1.0e30)
            l_ = tl.load(L_IN + base[None, :] + bins[:, None] * n_rows, mask=ok, other=0.0)
            mx_new = tl.maximum(mx, tl.max(m, 0))
            total = total * tl.exp2(mx - mx_new) + tl.sum(tl.exp2(m - mx_new[None, :]) * l_, 0)
            mx = mx_new
        total = tl.where(row_ok, total, 1.0)  # rows past the group's end: nothing summed, nothing stored
        tl.store(LSE + bh * n_rows + (rows - r0), mx + tl.log2(total), mask=row_ok)

    @triton.jit
    def _bins_cells_kernel(
        M_IN,
        L_IN,
        LSE,
        ROW_EDGES,
        COL_EDGES,
        OUT_SUM,
        OUT_MAX,
        a0,
        r0,
        n_rows,
        s_q,
        s_k,
        CAUSAL: tl.constexpr,
        BLOCK_R: tl.constexpr,
        BLOCK_B: tl.constexpr,
    ):
        a = a0 + tl.program_id(0)
        bins = tl.program_id(1) * BLOCK_B + tl.arange(0, BLOCK_B)
        bh = tl.program_id(2)
        bin_ok = bins < s_k
        ra0 = tl.load(ROW_EDGES + a)
        ra1 = tl.load(ROW_EDGES + a + 1)
        starts = tl.load(COL_EDGES + bins, mask=bin_ok, other=0)
        acc_sum = tl.zeros([BLOCK_B], tl.float32)
        acc_max = tl.zeros([BLOCK_B], tl.float32)
        for start in range(ra0, ra1, BLOCK_R):
            rows = start + tl.arange(0, BLOCK_R)
            row_ok = rows < ra1
            ok = bin_ok[:, None] & row_ok[None, :]
            if CAUSAL:
                ok = ok & (starts[:, None] <= rows[None, :])
            offs = bh * s_k * n_rows + bins[:, None] * n_rows + (rows - r0)[None, :]
            m = tl.load(M_IN + offs, mask=ok, other=-1.0e30)
            l_ = tl.load(L_IN + offs, mask=ok, other=0.0)
            lse = tl.load(LSE + bh * n_rows + (rows - r0), mask=row_ok, other=0.0)
            w = tl.where(ok, tl.exp2(m - lse[None, :]), 0.0)  # the largest weight of row i in bin b
            acc_sum += tl.sum(w * l_, 1)
            acc_max = tl.maximum(acc_max, tl.max(w, 1))
        out = bh * s_q * s_k + a * s_k + bins
        tl.store(OUT_SUM + out, acc_sum, mask=bin_ok)
        tl.store(OUT_MAX + out, acc_max, mask=bin_ok)


def default_config(q: torch.Tensor, row_edges: np.ndarray, col_edges: np.ndarray) -> dict:
    """Block sizes: the row tile covers a whole query bin when that takes at most 128 rows; 64-key tiles (32
    for a head size over 128, to keep registers in bounds). Not tuned on hardware; benchmarks/bench_pooled.py
    --parts sweep measures others and the fused statistics pass beside it on a GPU."""
    d_pad = _pow2(q.shape[-1])
    largest_row_bin = int(np.diff(row_edges).max())
    block_m = _pow2(largest_row_bin) if largest_row_bin <= 128 else 64
    block_n = min(64 if d_pad <= 128 else 32, _pow2(int(np.diff(col_edges).max())))
    return {
        "lse_block_m": 64,
        "lse_block_n": 64 if d_pad <= 128 else 32,
        "block_m": block_m,
        "block_n": block_n,
        "num_warps": 8 if block_m * block_n >= 128 * 64 else 4,
        "num_stages": 2,
        "one_pass": False,
        "scratch_mib": 96,
    }


def pooled_attention(
    q, k, row_edges: np.ndarray, col_edges: np.ndarray, causal: bool, scale: float, config: dict | None = None
):
    """(mean, max), each (B, H, s_q, s_k) float32, for core.long_maps.pooled.pooled_attention."""
    if triton is None:
        raise RuntimeError("Triton is not installed")
    b, h, n_q, d = q.shape
    h_kv, n_k = k.shape[1], k.shape[2]
    cfg = {**default_config(q, row_edges, col_edges), **(config or {})}
    d_pad = _pow2(d)
    precision = "ieee" if q.dtype == torch.float32 else "tf32"  # ignored for 16-bit inputs
    qk_scale = float(scale) * LOG2E
    if cfg["one_pass"]:
        return _pooled_one_pass(q, k, row_edges, col_edges, causal, qk_scale, cfg, d_pad, precision)
    largest_row_bin = int(np.diff(row_edges).max())
    one_row_tile = largest_row_bin <= cfg["block_m"]
    fused = bool(cfg.get("fused_stats")) and one_row_tile
    lse = torch.empty(b * h, 1 if fused else n_q, dtype=torch.float32, device=q.device)
    launch = {"num_warps": cfg["num_warps"], "num_stages": cfg["num_stages"]}
    if not fused:
        _row_lse_kernel[(triton.cdiv(n_q, cfg["lse_block_m"]), b * h)](
            q,
            k,
            lse,
            *q.stride(),
            *k.stride(),
            n_q,
            n_k,
            h,
            h // h_kv,
            d,
            qk_scale,
            CAUSAL=causal,
            BLOCK_M=cfg["lse_block_m"],
            BLOCK_N=cfg["lse_block_n"],
            D_PAD=d_pad,
            PRECISION=precision,
            **launch,
        )
    s_q, s_k = len(row_edges) - 1, len(col_edges) - 1
    if causal:  # key bins starting after a query bin's last row are all future keys: skipped, left at 0
        last_bin = np.searchsorted(col_edges[:-1], row_edges[1:], side="left")
    else:
        last_bin = np.full(s_q, s_k)
    device = q.device
    as_int = lambda a: torch.as_tensor(np.asarray(a), dtype=torch.int32, device=device)  # noqa: E731
    out_sum = torch.zeros(b * h, s_q, s_k, dtype=torch.float32, device=device)
    out_max = torch.zeros_like(out_sum)
    _pooled_kernel[(s_q, b * h)](
        q,
        k,
        lse,
        as_int(row_edges),
        as_int(col_edges),
        as_int(last_bin),
        out_sum,
        out_max,
        *q.stride(),
        *k.stride(),
        n_q,
        h,
        h // h_kv,
        d,
        s_q,
        s_k,
        qk_scale,
        n_k,
        CAUSAL=causal,
        ONE_ROW_TILE=one_row_tile,
        FUSED_STATS=fused,
        BLOCK_M=cfg["block_m"],
        BLOCK_N=cfg["block_n"],
        D_PAD=d_pad,
        PRECISION=precision,
        **launch,
    )
    counts = torch.as_tensor(np.outer(np.diff(row_edges), np.diff(col_edges)), dtype=torch.float32, device=device)
    return (out_sum / counts).view(b, h, s_q, s_k), out_max.view(b, h, s_q, s_k)


def _row_groups(row_edges: np.ndarray, budget_rows: int) -> list[tuple[int, int]]:
    """Consecutive query bins [a0, a1) of at most budget_rows rows together (at least one bin each)."""
    groups, start = [], 0
    for a in range(1, len(row_edges)):
        if a - 1 > start and row_edges[a] - row_edges[start] > budget_rows:
            groups.append((start, a - 1))
            start = a - 1
    groups.append((start, len(row_edges) - 1))
    return groups


def _pooled_one_pass(q, k, row_edges, col_edges, causal, qk_scale, cfg, d_pad, precision):
    """The one_pass path of pooled_attention (the module's docstring): each score computed once."""
    b, h, n_q, d = q.shape
    h_kv = k.shape[1]
    s_q, s_k = len(row_edges) - 1, len(col_edges) - 1
    device = q.device
    as_int = lambda a: torch.as_tensor(np.asarray(a), dtype=torch.int32, device=device)  # noqa: E731
    budget_rows = max(1, int(cfg["scratch_mib"]) * 2**20 // (8 * b * h * s_k))
    groups = _row_groups(row_edges, budget_rows)
    most_rows = max(int(row_edges[a1] - row_edges[a0]) for a0, a1 in groups)
    scratch_m = torch.empty(b * h * s_k * most_rows, dtype=torch.float32, device=device)
    scratch_l = torch.empty_like(scratch_m)
    lse = torch.empty(b * h * most_rows, dtype=torch.float32, device=device)
    out_sum = torch.zeros(b * h, s_q, s_k, dtype=torch.float32, device=device)
    out_max = torch.zeros_like(out_sum)
    col_edges_t, row_edges_t = as_int(col_edges), as_int(row_edges)
    launch = {"num_warps": cfg["num_warps"], "num_stages": cfg["num_stages"]}
    block_m, block_r, block_b = cfg["block_m"], 16, 64
    for a0, a1 in groups:
        r0, r1 = int(row_edges[a0]), int(row_edges[a1])
        n_rows = r1 - r0
        tiles = triton.cdiv(n_rows, block_m)
        if causal:  # the key bins starting at or before each row tile's last row; the rest are all future keys
            last_rows = np.minimum(r0 + (np.arange(tiles) + 1) * block_m, r1) - 1
            tile_bins = np.searchsorted(col_edges[:-1], last_rows, side="right")
        else:
            tile_bins = np.full(tiles, s_k)
        _bin_stats_kernel[(tiles, b * h)](
            q,
            k,
            col_edges_t,
            as_int(tile_bins),
            scratch_m,
            scratch_l,
            *q.stride(),
            *k.stride(),
            r0,
            r1,
            n_rows,
            h,
            h // h_kv,
            d,
            s_k,
            qk_scale,
            CAUSAL=causal,
            ONE_KEY_TILE=int(np.diff(col_edges).max()) <= cfg["block_n"],
            BLOCK_M=block_m,
            BLOCK_N=cfg["block_n"],
            D_PAD=d_pad,
            PRECISION=precision,
            **launch,
        )
        _bins_lse_kernel[(triton.cdiv(n_rows, block_r), b * h)](
            scratch_m, scratch_l, col_edges_t, lse, r0, r1, n_rows, s_k, CAUSAL=causal, BLOCK_R=block_r, BLOCK_B=block_b
        )
        _bins_cells_kernel[(a1 - a0, triton.cdiv(s_k, block_b), b * h)](
            scratch_m,
            scratch_l,
            lse,
            row_edges_t,
            col_edges_t,
            out_sum,
            out_max,
            a0,
            r0,
            n_rows,
            s_q,
            s_k,
            CAUSAL=causal,
            BLOCK_R=block_r,
            BLOCK_B=block_b,
        )
    counts = torch.as_tensor(np.outer(np.diff(row_edges), np.diff(col_edges)), dtype=torch.float32, device=device)
    return (out_sum / counts).view(b, h, s_q, s_k), out_max.view(b, h, s_q, s_k)
