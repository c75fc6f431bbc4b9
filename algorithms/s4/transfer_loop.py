"""The per-root algebra of rank one (``midrad.transfer_disks`` with r = 1) as one compiled
loop over the disk arrays.

At each position, with the disk operations of ``arith.midrad.MR`` (proofs/midrad_filter.md,
Lemmas 2-5) written out per element in the same formulas, in the same order::

    beta = (z + 1) / 2       W = 1 + beta T       (W = 1 exactly at the positions skipped)
    H = x - beta (u ((1/W) v))

and every value checked as ``MR`` checks it (finite, at most 2^400; a divisor certainly
nonzero within [2^-400, 2^400]); one failed check anywhere raises RangeError, as the
numpy operations do.  The loop is numba's (``transfer_jit``), compiled with the settings of
``arith.compiled`` (no fast-math: each operation rounds once to nearest, nothing fused or
reassociated); it is used only where ``cauchy_f64_rows``' compiled loop passed its bitwise
check in this process and this loop's H is bitwise ``transfer_disks``' on a probe
(the gate ``GATE``); otherwise ``transfer_disks`` runs on numpy.  Lemmas 2-5 hold for each
operation as computed, so the disks contain the exact H (section 5 of the proof).
"""
from __future__ import annotations

import numpy as np

from ...arith.compiled import Gate, same_floats
from ...arith.midrad import MR, RangeError
from . import cauchy_f64_rows


def _loop():
    from .transfer_jit import transfer
    return transfer


def _probe_blocks(seed: int = 20261201):
    """Random rank-one blocks over a 16-point grid's half (3 kernels), some disks wide,
    one position of W close to 0, for the bitwise check."""
    from ...arith.midrad import roots_of_unity
    rng = np.random.default_rng(seed)
    M, K = 16, 3
    Mh = M // 2 + 1
    Z = roots_of_unity(M)
    mk = lambda s: MR(s * (rng.standard_normal(K * Mh) + 1j * rng.standard_normal(K * Mh)),
                      2.0 ** rng.integers(-60, -20, K * Mh) * rng.random(K * Mh))
    blocks = {("C", "B"): mk(1.0), ("C", 0): mk(3.0), (0, "B"): mk(1e-3), (0, 0): mk(0.7)}
    return blocks, Z, Mh, M // 2 + Mh * np.arange(K)


def _agrees() -> bool:
    """Whether this loop gives bitwise ``transfer_disks``' H on a probe (NaN with NaN)."""
    from .midrad import transfer_disks
    blocks, Z, Mh, skip = _probe_blocks()
    K = len(blocks[("C", "B")]) // Mh
    try:
        want, _ = transfer_disks(blocks, MR(np.tile(Z.mid[:Mh], K), np.tile(Z.rad[:Mh], K)), 1, skip)
        got = transfer_rank_one(blocks, Z, Mh, skip)
    except RangeError:
        return False
    ok = np.ones(len(want), dtype=bool)
    ok[skip] = False
    return all(same_floats(a[ok], b[ok]) for a, b in ((want.mid.real, got.mid.real),
                                                                  (want.mid.imag, got.mid.imag), (want.rad, got.rad)))


#: fewer positions than this stay on numpy (the compiled loop's first use costs numba's
#: import and the checks, about a second)
MIN_POSITIONS = 1 << 12

#: the loop, from ``MIN_POSITIONS`` disks on: where the rows loop of ``cauchy_f64_rows`` passed
#: its bitwise check in this process (numba with the same compiler settings) and ``_agrees``
GATE = Gate("float64 rank-one transfer", MIN_POSITIONS, _agrees, requires=(cauchy_f64_rows.ROWS,))
#: whether to run the loop on so many positions (``layer_pass``'s name for ``GATE.use``)
use = GATE.use


def transfer_rank_one(blocks: dict, Z: MR, Mh: int, skip: np.ndarray | None) -> MR:
    """H at every position of the rank-one blocks (``transfer_disks``'s H for r = 1), the
    roots' disks ``Z`` repeating with period ``Mh`` along the arrays; ``skip`` the
    positions of z = -1 (W taken as exactly 1 there; the caller sets H)."""
    x, u, v, T = blocks[("C", "B")], blocks[("C", 0)], blocks[(0, "B")], blocks[(0, 0)]
    n = len(x)
    mask = np.zeros(n, dtype=np.bool_)
    if skip is not None:
        mask[skip] = True
    Hr, Hi, Hd = np.empty(n), np.empty(n), np.empty(n)
    c = np.ascontiguousarray
    parts = [a for d in (x, u, v, T) for a in (c(d.mid.real), c(d.mid.imag), c(d.rad))]
    reps = n // Mh
    z = [np.tile(a[:Mh], reps) for a in (Z.mid.real, Z.mid.imag, Z.rad)]
    fail = _loop()(*z, *parts, mask, Hr, Hi, Hd)
    if fail:
        raise RangeError("a disk of the per-root algebra is out of range or a divisor not certainly nonzero")
    H = np.empty(n, dtype=np.complex128)
    H.real, H.imag = Hr, Hi
    return MR(H, Hd)
