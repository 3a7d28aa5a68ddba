"""FlashAttention (Dao et al. 2022, arXiv:2205.14135): exact attention in tiles, without the n x n matrix.

Q is cut into query tiles of Br rows and K, V into key tiles of Bc rows (the last tile of each is shorter when the
block size does not divide n; a block larger than n is one tile). For one query tile the key tiles arrive one at a
time and an online softmax keeps, per query row, only

    m  the largest score seen so far,
    l  the sum of exp(score - m) over the keys seen so far,
    O~ the sum of exp(score - m) * v over the same keys (unnormalised output).

When a new tile raises the maximum from m to m', everything accumulated so far was measured against the old m:
l and O~ are multiplied by exp(m - m') before the new tile's terms are added. After the last tile O = O~ / l is
softmax(QK^T / sqrt(d)) V exactly (up to rounding), and m + log l (the log-sum-exp) is all the backward pass needs
to recompute the weights of any tile instead of storing the n x n matrix.

A row whose keys are all masked has m = -inf and l = 0: we define its output as zeros (there is nothing to
average), which is what torch's SDPA returns for such rows (a naive softmax gives NaN).

The second half counts memory traffic between HBM (the GPU's main memory) and on-chip SRAM of size M, for standard
attention and for the paper's Algorithm 1, next to Theorem 2's orders Theta(n d + n^2) and Theta(n^2 d^2 / M).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from core.state import Choice, Flag, Int, State

NEG_INF = float("-inf")


# --- tiles -------------------------------------------------------------------------------------------------------


def tile_ranges(n: int, block: int) -> list[tuple[int, int]]:
    """[start, stop) of each tile of `block` rows over n rows; the last one is shorter when block does not divide
    n, and a block >= n gives a single tile."""
    if n < 1 or block < 1:
        raise ValueError("n and the block size must be >= 1")
    return [(s, min(s + block, n)) for s in range(0, n, block)]


def allowed_mask(n_q: int, n_k: int, causal: bool = False, padded_keys: int = 0) -> torch.Tensor:
    """Bool (n_q, n_k), True where query i may see key j. causal: j <= i (top-left aligned, as SDPA's is_causal).
    padded_keys: the first `padded_keys` keys are padding (left padding), hidden from every query; with causal,
    the first queries then have no key left at all (fully masked rows)."""
    allowed = torch.ones(n_q, n_k, dtype=torch.bool)
    if causal:
        allowed = torch.tril(allowed)
    allowed[:, : max(0, min(padded_keys, n_k))] = False
    return allowed


# --- the online softmax over key tiles ---------------------------------------------------------------------------


@dataclass
class KeyTileStep:
    """The state of one query tile's rows after key tile `key_tile` arrived. Arrays have one row per query."""

    key_tile: int
    keys: tuple[int, int]  # [start, stop) of the key tile
    scores: np.ndarray  # (br, bc) QK^T * scale of this tile, -inf where masked
    tile_max: np.ndarray  # (br,) max of this tile's scores (-inf: nothing visible in it)
    m_before: np.ndarray  # (br,) running max before the tile
    m: np.ndarray  # (br,) running max after it
    rescale: np.ndarray  # (br,) exp(m_before - m): what l and O~ are multiplied by (0 while nothing was seen)
    l_before: np.ndarray  # (br,)
    l: np.ndarray  # (br,) running sum of exp(score - m)
    acc: np.ndarray  # (br, d) O~, unnormalised
    output: np.ndarray  # (br, d) O~ / l: the softmax-weighted mean of the values seen so far (0 where l = 0)
    skipped: bool  # every score of the tile is masked: a kernel does not even load it


def _online_softmax(q_rows, k, v, key_tiles, allowed_rows, scale, record: bool):
    """One query tile through every key tile. q_rows (br, d), k and v (n_k, d), allowed_rows (br, n_k).
    Returns output (br, d), m (br,), l (br,) and the list of steps when `record`."""
    br, d_v = q_rows.shape[0], v.shape[-1]
    m = torch.full((br,), NEG_INF, dtype=q_rows.dtype)
    l = torch.zeros(br, dtype=q_rows.dtype)
    acc = torch.zeros(br, d_v, dtype=q_rows.dtype)
    steps = []
    for j, (s, e) in enumerate(key_tiles):
        scores = (q_rows @ k[s:e].T) * scale  # (br, bc)
        scores = scores.masked_fill(~allowed_rows[:, s:e], NEG_INF)
        tile_max = scores.max(dim=-1).values  # (br,)
        m_new = torch.maximum(m, tile_max)
        # exp(-inf - -inf) is NaN: rows that have seen nothing yet keep m = -inf, l = 0, acc = 0
        seen = m_new > NEG_INF
        rescale = torch.where(seen, torch.exp(m - torch.where(seen, m_new, 0.0)), torch.zeros_like(m))
        p = torch.where(seen[:, None], torch.exp(scores - torch.where(seen, m_new, 0.0)[:, None]), 0.0)  # (br, bc)
        l_new = rescale * l + p.sum(dim=-1)
        acc_new = rescale[:, None] * acc + p @ v[s:e]  # (br, d)
        if record:
            out = torch.where(l_new[:, None] > 0, acc_new / l_new.clamp_min(1e-300)[:, None], 0.0)
            steps.append(
                KeyTileStep(
                    key_tile=j,
                    keys=(s, e),
                    scores=scores.numpy().copy(),
                    tile_max=tile_max.numpy().copy(),
                    m_before=m.numpy().copy(),
                    m=m_new.numpy().copy(),
                    rescale=rescale.numpy().copy(),
                    l_before=l.numpy().copy(),
                    l=l_new.numpy().copy(),
                    acc=acc_new.numpy().copy(),
                    output=out.numpy().copy(),
                    skipped=not bool(allowed_rows[:, s:e].any()),
                )
            )
        m, l, acc = m_new, l_new, acc_new
    output = torch.where(l[:, None] > 0, acc / l.clamp_min(1e-300)[:, None], 0.0)
    return output, m, l, steps


def tiled_attention(q, k, v, br: int, bc: int, allowed: torch.Tensor | None = None, scale: float | None = None):
    """FlashAttention's forward on one head: q (n_q, d), k (n_k, d), v (n_k, d_v), allowed bool (n_q, n_k) or
    None. Returns (output (n_q, d_v), m (n_q,), l (n_q,)); rows with no visible key give zeros."""
    n_q, n_k = q.shape[0], k.shape[0]
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    allowed = torch.ones(n_q, n_k, dtype=torch.bool) if allowed is None else allowed
    key_tiles = tile_ranges(n_k, bc)
    outs, ms, ls = [], [], []
    for s, e in tile_ranges(n_q, br):
        o, m, l, _ = _online_softmax(q[s:e], k, v, key_tiles, allowed[s:e], scale, record=False)
        outs.append(o)
        ms.append(m)
        ls.append(l)
    return torch.cat(outs), torch.cat(ms), torch.cat(ls)


def recompute_weights(q, k, m, l, allowed: torch.Tensor | None = None, scale: float | None = None) -> torch.Tensor:
    """What the backward pass does instead of reading a stored P: P = exp(QK^T * scale - m) / l from the two
    saved statistics per row (0 where masked or where the row saw nothing). (n_q, n_k)."""
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = (q @ k.T) * scale
    if allowed is not None:
        scores = scores.masked_fill(~allowed, NEG_INF)
    seen = (l > 0)[:, None]
    p = torch.exp(scores - torch.where(seen, m[:, None], 0.0)) / torch.where(seen, l[:, None], 1.0)
    return torch.where(seen, p, 0.0)


def sdpa_reference(q, k, v, allowed: torch.Tensor | None = None) -> torch.Tensor:
    """torch's own scaled_dot_product_attention on the same head (n_q, d_v)."""
    return F.scaled_dot_product_attention(q[None], k[None], v[None], attn_mask=allowed)[0]


# --- the view of the page's step-by-step part -------------------------------------------------------------------


@dataclass
class TileWalk:
    """One query tile of a small random head, key tile by key tile, with the finished result to compare."""

    n: int
    d: int
    br: int
    bc: int
    query_tiles: list[tuple[int, int]]
    key_tiles: list[tuple[int, int]]
    q_tile: int
    queries: tuple[int, int]  # [start, stop) of the walked query tile
    allowed: np.ndarray  # (n, n) bool
    steps: list[KeyTileStep]
    output: np.ndarray  # (n, d) the tiled result for every query tile
    reference: np.ndarray  # (n, d) torch SDPA
    max_abs_diff: float  # max |tiled - SDPA|
    fully_masked_rows: list[int]  # queries with no visible key (output 0)
    weights: np.ndarray  # (n, n) softmax weights, 0 where masked, for the overview heatmap

    @property
    def matches_sdpa(self) -> bool:
        """The tiled output is SDPA's up to float64 rounding: the page's check says so (or that it differs)."""
        return self.max_abs_diff < 1e-9

    @property
    def labels(self) -> list[str]:
        """The positions naming the rows (queries) and columns (keys) of `weights`, as its figure and CSV name them."""
        return [str(i) for i in range(self.n)]

    @property
    def tile_rows(self) -> list[str]:
        """The queries of the walked tile, the rows of a step's `output`."""
        return [str(i) for i in range(*self.queries)]

    @property
    def dims(self) -> list[str]:
        """The value dimensions, the columns of a step's `output`."""
        return [str(j) for j in range(self.d)]

    @property
    def block_notes(self) -> list[tuple[str, str, int, int]]:
        """Each block size that does not tile n evenly: (name, "larger" (one tile of all n rows) or "uneven", the
        block size, the last tile's rows)."""
        notes = []
        for name, b, tiles in (("Br", self.br, self.query_tiles), ("Bc", self.bc, self.key_tiles)):
            start, stop = tiles[-1]
            if b > self.n:
                notes.append((name, "larger", b, stop - start))
            elif stop - start != b:
                notes.append((name, "uneven", b, stop - start))
        return notes


def walk(
    n: int, d: int, br: int, bc: int, q_tile: int = 0, causal: bool = False, padded_keys: int = 0, seed: int = 0
) -> TileWalk:
    """Random Q, K, V (n, d) from `seed`; every query tile through the tiled algorithm, and `q_tile` recorded step by
    step. q_tile is clamped to the tiles that exist."""
    if min(n, d, br, bc) < 1:
        raise ValueError("n, d and the block sizes must be >= 1")
    gen = torch.Generator().manual_seed(seed)
    q, k, v = (torch.randn(n, d, generator=gen, dtype=torch.float64) for _ in range(3))
    allowed = allowed_mask(n, n, causal, padded_keys)
    output, m, l = tiled_attention(q, k, v, br, bc, allowed)
    reference = sdpa_reference(q, k, v, allowed)
    query_tiles, key_tiles = tile_ranges(n, br), tile_ranges(n, bc)
    q_tile = max(0, min(q_tile, len(query_tiles) - 1))
    s, e = query_tiles[q_tile]
    *_, steps = _online_softmax(q[s:e], k, v, key_tiles, allowed[s:e], 1.0 / math.sqrt(d), record=True)
    return TileWalk(
        n=n,
        d=d,
        br=br,
        bc=bc,
        query_tiles=query_tiles,
        key_tiles=key_tiles,
        q_tile=q_tile,
        queries=(s, e),
        allowed=allowed.numpy(),
        steps=steps,
        output=output.numpy(),
        reference=reference.numpy(),
        max_abs_diff=float((output - reference).abs().max()),
        fully_masked_rows=[int(i) for i in torch.nonzero(~allowed.any(dim=-1)).flatten()],
        weights=recompute_weights(q, k, m, l, allowed).numpy(),
    )


def step_table(view: TileWalk, step: int) -> dict[str, list]:
    """The numbers of one step per query row, rounded for a table: tile max, m before and after, the rescale
    factor exp(m_before - m), l before and after, and whether the row has seen any key yet."""
    st = view.steps[max(0, min(step, len(view.steps) - 1))]

    def col(a):
        return [None if not np.isfinite(x) else round(float(x), 4) for x in a]

    return {
        "query": list(range(*view.queries)),
        "tile_max": col(st.tile_max),
        "m_before": col(st.m_before),
        "m": col(st.m),
        "rescale": col(st.rescale),
        "l_before": col(st.l_before),
        "l": col(st.l),
    }


# --- memory traffic (elements moved between HBM and SRAM) ------------------------------------------------------


@dataclass(frozen=True)
class Traffic:
    reads: int  # elements read from HBM
    writes: int  # elements written to HBM

    @property
    def total(self) -> int:
        return self.reads + self.writes


def paper_block_sizes(m_sram: int, d: int) -> tuple[int, int]:
    """Algorithm 1's choice for on-chip memory of m_sram elements: Bc = ceil(M / 4d), Br = min(ceil(M / 4d), d),
    so that K_j, V_j, Q_i, O_i and the Br x Bc tile of scores fit in SRAM together."""
    if m_sram < 1 or d < 1:
        raise ValueError("M and d must be >= 1")
    bc = math.ceil(m_sram / (4 * d))
    return min(bc, d), bc


def naive_traffic(n: int, d: int) -> Traffic:
    """Standard attention (the paper's Algorithm 0): read Q, K, write S (n x n); read S, write P; read P, V,
    write O."""
    reads = 2 * n * d + n * n + (n * n + n * d)
    writes = n * n + n * n + n * d
    return Traffic(reads, writes)


def flash1_traffic(n: int, d: int, br: int, bc: int) -> Traffic:
    """Algorithm 1 counted loop by loop: write O = 0, l = 0, m = -inf; for each key tile j load K_j, V_j, and for
    each query tile i load Q_i, O_i, l_i, m_i and write back O_i, l_i, m_i. The inner loop touches every query row
    once per key tile, so the count depends on the number of key tiles, not on Br."""
    reads, writes = 0, n * d + 2 * n
    for ks, ke in tile_ranges(n, bc):
        reads += 2 * (ke - ks) * d
        for qs, qe in tile_ranges(n, br):
            rows = qe - qs
            reads += rows * d + rows * d + 2 * rows
            writes += rows * d + 2 * rows
    return Traffic(reads, writes)


def flash2_traffic(n: int, d: int, br: int, bc: int) -> Traffic:
    """The loop order of the step-by-step view (FlashAttention-2, Dao 2023): for each query tile load Q_i once,
    stream every K_j, V_j through, write O_i and its log-sum-exp once. Depends on the number of query tiles."""
    reads, writes = 0, 0
    for qs, qe in tile_ranges(n, br):
        rows = qe - qs
        reads += rows * d
        for ks, ke in tile_ranges(n, bc):
            reads += 2 * (ke - ks) * d
        writes += rows * d + rows
    return Traffic(reads, writes)


def theta_naive(n: int, d: int) -> float:
    """Theorem 2: standard attention needs Theta(n d + n^2) HBM accesses (the order, without constant)."""
    return float(n * d + n * n)


def theorem2_holds(n: int, d: int, m_sram: int) -> bool:
    """Theorem 2 is stated for on-chip memory d <= M <= n d: below d not even one row fits; above n d all of
    Q (or K, V) fits on chip and the bound n^2 d^2 / M would fall below reading the inputs once (n d)."""
    return d <= m_sram <= n * d


def theta_flash(n: int, d: int, m_sram: int) -> float | None:
    """Theorem 2: FlashAttention needs Theta(n^2 d^2 / M) HBM accesses (the order, without constant), for
    d <= M <= n d; None outside that range, where the theorem says nothing."""
    return n * n * d * d / m_sram if theorem2_holds(n, d, m_sram) else None


@dataclass
class TrafficView:
    """Counts for the user's n, d, M and over a range of n, in elements and bytes."""

    n: int
    d: int
    m_sram: int  # elements that fit on chip
    bytes_per_element: int
    br: int
    bc: int  # the paper's block sizes for this M
    naive: Traffic
    flash1: Traffic
    flash2: Traffic
    sizes: list[int]
    curves: dict[str, list[float]]  # series over `sizes`: naive, flash1, flash2, theta_naive, theta_flash

    @property
    def theta_naive(self) -> float:
        return theta_naive(self.n, self.d)

    @property
    def theta_flash(self) -> float | None:
        """None outside d <= M <= n d, where Theorem 2 says nothing."""
        return theta_flash(self.n, self.d, self.m_sram)

    @property
    def ratio(self) -> float:
        """Standard attention's HBM accesses over FlashAttention's (forward, the paper's block sizes)."""
        return self.naive.total / self.flash1.total

    @property
    def theta_constant(self) -> float:
        """The constant in FlashAttention's count ~ c n^2 d^2 / M at Bc = M / 4d: 12 from 3 n d Tc, plus the
        statistics' share 16 / d (flash1_traffic_closed)."""
        return 12 + 16 / self.d

    @property
    def nd(self) -> int:
        return self.n * self.d

    def bytes_of(self, traffic: Traffic) -> int:
        return traffic.total * self.bytes_per_element


def flash1_traffic_closed(n: int, d: int, bc: int) -> Traffic:
    """flash1_traffic summed in closed form (the tile sizes add up to n), with Tc = ceil(n / Bc) key tiles:
    reads 2nd + Tc (2nd + 2n), writes nd + 2n + Tc (nd + 2n). Total ~ 3 n d Tc = 12 n^2 d^2 / M for Bc = M / 4d."""
    tc = math.ceil(n / bc)
    return Traffic(2 * n * d + tc * (2 * n * d + 2 * n), n * d + 2 * n + tc * (n * d + 2 * n))


def flash2_traffic_closed(n: int, d: int, br: int) -> Traffic:
    """flash2_traffic in closed form, Tr = ceil(n / Br) query tiles: reads nd + 2nd Tr, writes nd + n."""
    tr = math.ceil(n / br)
    return Traffic(n * d + tr * 2 * n * d, n * d + n)


def sram_elements(sram_kib: int, bytes_per_element: int) -> int:
    """Elements of `bytes_per_element` bytes that fit in sram_kib KiB of on-chip memory (at least one)."""
    return max(1, sram_kib * 1024 // bytes_per_element)


def traffic_view(n: int, d: int, m_sram: int, bytes_per_element: int = 2) -> TrafficView:
    """Counts at the paper's block sizes for M (closed forms: the loop counts above agree, tests check)."""
    if min(n, d, m_sram, bytes_per_element) < 1:
        raise ValueError("n, d, M and bytes per element must be >= 1")
    br, bc = paper_block_sizes(m_sram, d)
    sizes = sorted({int(x) for x in np.geomspace(64, max(4 * n, 65536), 13)} | {n})
    curves = {
        "naive": [float(naive_traffic(s, d).total) for s in sizes],
        "flash1": [float(flash1_traffic_closed(s, d, bc).total) for s in sizes],
        "flash2": [float(flash2_traffic_closed(s, d, br).total) for s in sizes],
        "theta_naive": [theta_naive(s, d) for s in sizes],
        "theta_flash": [theta_flash(s, d, m_sram) or float("nan") for s in sizes],  # a gap outside d <= M <= nd
    }
    return TrafficView(
        n=n,
        d=d,
        m_sram=m_sram,
        bytes_per_element=bytes_per_element,
        br=br,
        bc=bc,
        naive=naive_traffic(n, d),
        flash1=flash1_traffic_closed(n, d, bc),
        flash2=flash2_traffic_closed(n, d, br),
        sizes=sizes,
        curves=curves,
    )


# --- why the backward pass recomputes ----------------------------------------------------------------------------


@dataclass(frozen=True)
class BackwardMemory:
    n: int
    heads: int
    stored_p_bytes: int  # P (n x n per head) kept for the backward pass, as standard attention does
    statistics_bytes: int  # m and l (2 numbers per query row per head), float32 as kernels keep them
    logsumexp_bytes: int  # FlashAttention-2 keeps one number per row: m + log l

    @property
    def ratio(self) -> float:
        """How many times more memory keeping P takes than keeping m and l."""
        return self.stored_p_bytes / self.statistics_bytes


def backward_memory(n: int, heads: int = 1, bytes_per_element: int = 2) -> BackwardMemory:
    """Memory to keep for the backward pass of one attention layer, batch 1: the weights P, or the statistics
    the backward recomputes them from (one extra QK^T per tile, instead of reading n^2 values from HBM)."""
    if n < 1 or heads < 1 or bytes_per_element < 1:
        raise ValueError("n, heads and bytes per element must be >= 1")
    return BackwardMemory(
        n=n,
        heads=heads,
        stored_p_bytes=heads * n * n * bytes_per_element,
        statistics_bytes=heads * 2 * n * 4,
        logsumexp_bytes=heads * n * 4,
    )


# --- the page's link, declared once (app/ui.py binds the widgets from it; the lessons read a step's state with it)

MAX_N = 48
MAX_D = 16
MAX_BLOCK = 64  # larger than MAX_N on purpose: a block may exceed n


def walk_of(c) -> TileWalk:
    """The tiles part's walk for a state read so far (n, d, br, bc, causal, pad, seed, qtile)."""
    return walk(c.n, c.d, c.br, c.bc, int(c.qtile), c.causal, c.pad, c.seed)


STATE = State(
    Int("n", 10, 1, MAX_N),
    Int("d", 4, 1, MAX_D),
    Int("br", 4, 1, MAX_BLOCK),
    Int("bc", 3, 1, MAX_BLOCK),
    Flag("causal", False),
    Int("pad", 0, 0, MAX_N),
    Int("seed", 0, 0, 9999),
    Choice("qtile", "0", options=lambda c: tuple(str(i) for i in range(len(tile_ranges(c.n, c.br))))),
    Int("step", lambda c: c.n_steps - 1, 0, lambda c: c.n_steps - 1),  # one step per key tile of the walk
    Int("tn", 4096, 1, 1_048_576),
    Choice("td", 64, options=(16, 32, 64, 128, 256), number=int),
    Int("sram", 192, 1, 4096),
    Choice("bytes", 2, options=(2, 4), number=int),
    Int("heads", 9, 1, 128),
    context=lambda c: _WalkContext(walk_of(c)),
)


@dataclass(frozen=True)
class _WalkContext:
    walk: TileWalk

    @property
    def n_steps(self) -> int:
        return len(self.walk.steps)
