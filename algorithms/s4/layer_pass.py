"""The float64 route for many kernels at once: every output vector of every head of a layer.

The kernels of one S4 layer come in heads that share a state matrix (Lambda, P, Q, B
and the step) and differ in their output vector C~ (one per channel).  This runs
``midrad.filter_kernel_midrad``'s procedure for all of them together
(``proofs/layer_pass.md``):

1. per head, the set-up in ball arithmetic once (partition, poles mu_j, gains g_j and the
   weights that do not involve C~), and the products g_j v_j (v = B, the columns of P)
   rounded to disks; the C~ weights are then conj(C~_j) (g_j v_j), one disk product per
   channel;
2. per head, one call of the direct Cauchy sums for all of its weight sets (the shared
   ones and every channel's), on the head's poles;
3. for a chunk of heads, the blocks of all its kernels laid end to end (kernel-major,
   M roots each), and the correction, its Gauss-Jordan inverse and H as one pass of
   numpy over those arrays; H(-1) of each kernel from its balls;
4. the inverse DFT of every kernel's row at once, each entry with its own bound.

A head whose exact model is conjugate-closed (``Head.conjugate_pairs``: the second half of
the states is the conjugate of the first, in Lambda, P, Q, B and every C~, as the
reference's full state is; no exceptional index) has ``H(conj z) = conj H(z)``, so steps 2
and 3 run on the roots z_k with k <= M/2 only and the other half of H is their conjugate
(``proofs/layer_pass.md``, Lemma 3).

Each step is the single-kernel route's, on longer arrays, so the single route's proof
covers every kernel.  A head whose set-up does not end ok, or a chunk where some disk
cannot decide a pivot, is reported (its kernels' rows are NaN with infinite radius) and
the other kernels still come back.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from flint import ctx

from ...arith import BallField
from ...arith.disk_convert import pairs_of_balls as dd_from_balls
from ...arith.midrad import MR, U, RangeError, roots_of_unity, roots_of_unity_dd, sum_upper, up
from ..linalg import dot
from . import correction, transfer_loop
from ..dft import next_power_of_two
from .dplr import DPLR, check_length
from .midrad import _disks, cauchy_direct_midrad, disk_setup, idft_midrad_rows, transfer_disks

#: a chunk of kernels holds at most this many (kernel, root) disks in each array
CHUNK_DISKS = 1 << 19


@dataclass
class Head:
    """One head of a layer: its model (the C it holds is not used), the C~ for the grid's
    M points of each of its kernels, and the exact partition (the j with
    lambda_j = -2/step) when it was decided elsewhere."""

    model: DPLR
    c_tildes: Sequence[list]
    exceptional: list[int] | None = None
    #: the exact model and C~s are conjugate-closed with state j paired with j + N/2
    conjugate_pairs: bool = False
    #: the C~s were given, so G = I - (step/2) A must be certified invertible here: by the
    #: set-up's W(0) (``correction.g_certainly_invertible``), else the head is not run
    check_g: bool = False


@dataclass
class _Prepared:
    """A head after steps 1-2: its kernels' blocks over the grid, and what H(-1) needs."""

    blocks: list[dict]
    half_delta: Any
    c_tildes: Sequence[list]
    B: list
    half: bool = False      # the blocks hold the roots k <= M/2 only (H there, the rest by conjugation)
    #: per kernel the disk of H(-1), when the set-up formed it (else it is formed from the balls)
    minus_one: list | None = None


def _prepare(head: Head, step: Any, L: int, prec: int, roots_dd: tuple) -> _Prepared:
    """Steps 1 and 2 for one head; raises _HeadFailed or RangeError."""
    su = disk_setup(head.model, step, L, head.c_tildes[0], head.exceptional, prec)
    if not su.ok:
        raise _HeadFailed(f"{su.status}: {su.info.get('reason', '')}".rstrip(": "))
    _, M, F, st = su.value
    r = head.model.r
    if head.check_g:
        with ctx.workprec(prec):
            if not correction.g_certainly_invertible(F, st.poles, st.weights, st.offsets, r):
                raise _HeadFailed("G = I - (step/2) A is not certified invertible by the set-up")
    shared = [k for k in st.weights if k[0] != "C"]
    right = {("C", "B"): st.m.B, **{("C", i): [row[i] for row in st.m.P] for i in range(r)}}
    ckeys = list(right)
    gv = {key: _disks(F, [F.mul(g, v[j]) for g, j in zip(st.gains, st.regular)]) for key, v in right.items()}
    weights = [_disks(F, st.weights[k]) for k in shared]
    c_tildes = [[F.from_number(x) for x in ct] for ct in head.c_tildes]
    for ct in c_tildes:
        cj = _disks(F, [F.conj(ct[j]) for j in st.regular]) if st.regular else None
        weights += [cj.mul(gv[key]) if cj is not None else gv[key] for key in ckeys]
    poles = dd_from_balls(st.poles)
    half = head.conjugate_pairs and not st.exceptional and M >= 4
    if half:
        roots_dd = tuple(x[:M // 2 + 1] for x in roots_dd[:2]) + (roots_dd[2],)
    sums, _ = cauchy_direct_midrad(roots_dd, poles, weights)
    base = dict(zip(shared, sums[:len(shared)]))
    for key in shared:
        if key in st.offsets:
            base[key] = _add_constant(F, base[key], st.offsets[key])
    blocks = []
    for c, ct in enumerate(c_tildes):
        mine = dict(zip(ckeys, sums[len(shared) + c * len(ckeys): len(shared) + (c + 1) * len(ckeys)]))
        if st.exceptional:
            conj_ct = [F.conj(ct[j]) for j in st.exceptional]
            for key, v in right.items():
                const = F.mul(st.half_delta, dot(F, conj_ct, [v[j] for j in st.exceptional]))
                mine[key] = _add_constant(F, mine[key], const)
        blocks.append({**base, **mine})
    return _Prepared(blocks, st.half_delta, c_tildes, st.m.B, half)


def _add_constant(F, s: MR, const: Any) -> MR:
    cd = _disks(F, [const])
    return s.add(MR(np.full(len(s), cd.mid[0]), np.full(len(s), cd.rad[0])))


class _HeadFailed(Exception):
    """A head whose set-up did not end ok (the reason)."""


def _concat(parts: list[MR]) -> MR:
    return MR(np.concatenate([p.mid for p in parts]), np.concatenate([p.rad for p in parts]))


def _chunk(prepared: list[_Prepared], r: int, M: int, Z: MR, F) -> tuple[np.ndarray, np.ndarray]:
    """Steps 3 and 4 for the kernels of some prepared heads: (mid, R), both of shape (K, M)."""
    kernels = [(p, c) for p in prepared for c in range(len(p.blocks))]
    K = len(kernels)
    half = prepared[0].half
    Mh = M // 2 + 1 if half else M     # the roots the blocks hold
    keys = list(kernels[0][0].blocks[0])
    blocks = {key: _concat([p.blocks[c][key] for p, c in kernels]) for key in keys}
    minus_one = correction.minus_one_index(M)
    at = None if minus_one is None else minus_one + Mh * np.arange(K)
    if r == 1 and transfer_loop.use(K * Mh):
        H = transfer_loop.transfer_rank_one(blocks, Z, Mh, at)      # the same operations, compiled
    else:
        H, _ = transfer_disks(blocks, MR(np.tile(Z.mid[:Mh], K), np.tile(Z.rad[:Mh], K)), r, at)
    if at is not None:
        if all(p.minus_one is not None for p, _ in kernels):
            h = _concat([p.minus_one[c] for p, c in kernels])
        else:
            h = _disks(F, [correction.value_at_minus_one(F, p.half_delta, p.c_tildes[c], p.B) for p, c in kernels])
        H.mid[at], H.rad[at] = h.mid, h.rad
    mid, rad = H.mid.reshape(K, Mh), H.rad.reshape(K, Mh)
    if not half:
        return idft_midrad_rows(mid, rad, Z, per_entry=True)
    # H(z_(M-k)) = H(conj z_k) = conj H(z_k), 0 < k < M/2; H(1) and H(-1) are real, so the
    # disks there are centred on the real axis (the true value is no farther from the
    # projection of the centre): every row is then exactly Hermitian
    mid[:, 0], mid[:, M // 2] = mid[:, 0].real, mid[:, M // 2].real
    mid = np.concatenate([mid, np.conj(mid[:, M // 2 - 1:0:-1])], axis=1)
    rad = np.concatenate([rad, rad[:, M // 2 - 1:0:-1]], axis=1)
    return _paired_idft(mid, rad, Z)


def _paired_idft(mid: np.ndarray, rad: np.ndarray, Z: MR) -> tuple[np.ndarray, np.ndarray]:
    """The inverse DFT of Hermitian rows (real kernels), two rows per transform: row a + i
    row b (a last odd row alone), the kernel of a the real part of the output and that of
    b the imaginary part (Lemma 4 of proofs/layer_pass.md).  The smaller row of a pair is
    first multiplied by a power of two 2^s (exact) to the larger one's size, so that the
    transform's rounding, divided by 2^s again, stays relative to each kernel; per kernel
    the bound is that of the transform of the packed midpoints (with no radius) over 2^s
    plus the mean of the row's own radii, and of the packing's rounding over 2^s."""
    K, M = mid.shape
    a, b = mid[0::2], mid[1::2]
    nb = len(b)
    size = np.max(np.abs(mid), axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        gap = np.log2(size[0::2][:nb]) - np.log2(size[1::2])
    gap = np.where(np.isfinite(gap), np.clip(np.round(gap), -600, 600), 0).astype(int)
    sa = np.zeros(len(a), dtype=int)
    sa[:nb] = np.maximum(-gap, 0)          # a scaled up when b is the larger row
    sb = np.maximum(gap, 0)                # b scaled up when a is the larger one
    packed = a * np.ldexp(1.0, sa)[:, None]               # times 2^s: exact (unless it overflows)
    packed[:nb] += 1j * (b * np.ldexp(1.0, sb)[:, None])  # 1j * b is exact; the sum rounds once per part
    delta = np.zeros(packed.shape)
    delta[:nb] = up(U * (np.abs(packed[:nb].real) + np.abs(packed[:nb].imag)))
    out, R0 = idft_midrad_rows(packed, np.zeros(packed.shape), Z, per_entry=True)
    mids, R = np.empty((K, M), dtype=np.complex128), np.empty((K, M))
    for rows, part, sh in ((slice(0, K, 2), out.real, sa), (slice(1, K, 2), out.imag, sb)):
        n = len(range(K)[rows])
        scale = np.ldexp(1.0, -sh[:n])[:, None]      # 2^-s: exact; a product by it may underflow (up covers it)
        shared = up(up(R0[:n] + up(sum_upper(np.sum(delta[:n], axis=1), M) / M)[:, None]) * scale)
        mean = sum_upper(np.sum(rad[rows], axis=1), M) / M
        mids[rows] = part[:n] * scale
        R[rows] = up(shared + up(mean)[:, None])
    if not (np.all(np.isfinite(mids)) and np.all(np.isfinite(R))):
        R = np.where(np.isfinite(mids) & np.isfinite(R), R, np.inf)
    return mids, R


def filter_kernels_midrad(heads: Sequence[Head], step: Any, L: int, prec: int = 128,
                          progress=None) -> tuple[np.ndarray, np.ndarray, dict]:
    """Every kernel of ``heads`` (head-major, then each head's C~ in order) at length L on
    float64 disks: ``(mid, rad, failed)`` with mid and rad of shape (kernels, L) and
    |K - mid| <= rad for each kernel's true kernel, and ``failed`` mapping a kernel's
    row to why it was not done (its row NaN, its radius inf).  All heads share the rank
    r; the set-up runs in ``BallField(prec)``; ``progress(done, total)`` is called after
    each chunk.

    >>> from s4cert.algorithms.s4.dplr import DPLR
    >>> m = DPLR([-1.0, -2.0], [0.5, 0.25], [1, 1], [1, -1])
    >>> mid, rad, failed = filter_kernels_midrad([Head(m, [[1, -1], [2, 0]])], 0.5, 8)
    >>> mid.shape, bool(rad.max() < 1e-13), failed
    ((2, 8), True, {})
    """
    L = check_length(L)
    if not heads:
        return np.zeros((0, L)), np.zeros((0, L)), {}
    r = heads[0].model.r
    if any(h.model.r != r for h in heads):
        raise ValueError("filter_kernels_midrad: every head must have the same rank r")

    def prepare(i: int, roots_dd: tuple) -> _Prepared:
        with ctx.workprec(prec):  # the field's operations then skip their precision switches
            return _prepare(heads[i], step, L, prec, roots_dd)

    return run_heads([len(h.c_tildes) for h in heads], prepare, r, L, prec, progress)


def run_heads(rows: Sequence[int], prepare, r: int, L: int, prec: int = 128,
              progress=None) -> tuple[np.ndarray, np.ndarray, dict]:
    """Steps 3-4 for heads set up by ``prepare(i, roots_dd)`` (a ``_Prepared`` for head i,
    which has ``rows[i]`` kernels; it raises _HeadFailed, RangeError, ArithmeticError or
    ValueError for a head it cannot set up): ``filter_kernels_midrad``'s result."""
    M = next_power_of_two(L)
    total = sum(rows)
    mid = np.full((total, L), np.nan, dtype=np.complex128)
    rad = np.full((total, L), np.inf)
    failed: dict[int, str] = {}
    Z, roots_dd = roots_of_unity(M), roots_of_unity_dd(M)
    F = BallField(prec)
    per_chunk = max(1, CHUNK_DISKS // M)
    pending: list[tuple[int, _Prepared]] = []

    def run(group: list) -> None:
        """Steps 3-4 for some prepared heads; when a disk of the chunk cannot decide (a pivot,
        the range), each head again on its own, so that only its kernels are reported."""
        try:
            m, R = _chunk([p for _, p in group], r, M, Z, F)
        except (RangeError, ArithmeticError, ValueError) as e:
            if len(group) > 1:
                for one in group:
                    run([one])
                return
            row, p = group[0]
            for c in range(len(p.blocks)):
                failed[row + c] = f"float64 disks: {e}"
            return
        k = 0
        for row, p in group:
            n = len(p.blocks)
            mid[row:row + n] = m[k:k + n, :L]
            rad[row:row + n] = R[k:k + n, :L]
            k += n

    def flush() -> None:
        if not pending:
            return
        run(list(pending))
        done = pending[-1][0] + len(pending[-1][1].blocks)
        pending.clear()
        if progress:
            progress(done, total)

    start = 0
    for i, n in enumerate(rows):
        try:
            p = prepare(i, roots_dd)
            if sum(len(q.blocks) for _, q in pending) + n > per_chunk or pending and pending[0][1].half != p.half:
                flush()
            pending.append((start, p))
        except (_HeadFailed, RangeError, ArithmeticError, ValueError) as e:
            for c in range(n):
                failed[start + c] = str(e) if isinstance(e, _HeadFailed) else f"float64 disks: {e}"
        start += n
    flush()
    return mid, rad, failed
