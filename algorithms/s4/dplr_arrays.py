"""The float64 layer pass's set-up for every head at once, on double-double disk arrays.

``layer_pass`` sets each head up in ball arithmetic (``filter.setup``: the partition,
the poles mu_j, the gains g_j and the weights, then rounded to disks), one Python call
per element.  For the heads of a layer that are conjugate-closed at step 1 (the S4 DPLR
layouts: the full state is the stored modes j < N/2 followed by their conjugates), this
module forms the same quantities as double-double disks over (heads, N/2) arrays, with
``arith.double_double.DD`` operations (``proofs/layer_pass.md``, Lemma 5):

* s_j = 2 + lambda_j, certainly nonzero for every j (then no index is exceptional:
  lambda_j = -2 never holds), mu_j = (2 - lambda_j) / s_j, g_j = -2 / s_j;
* the weights g_j conj(u_j) v_j for u in {C~, Q_i}, v in {B, P_k}, as conj(u_j) (g_j v_j);
* the second half of the state as the conjugates (exact): mu_(j + N/2) = conj mu_j and
  likewise every weight;
* H(-1) = (1/2) C~* B = Re sum_(j < N/2) conj(C~_j) B_j (the two halves are conjugate);
* for ranks one and two, G = I - A/2 certainly invertible by Lemma G of
  ``proofs/ball_mode.md``: every mu_j certainly nonzero and det W(0) certainly nonzero,
  W(0)_ik = delta_ik - Re sum_(j < N/2) a^(ik)_j / mu_j.

Heads for which some disk cannot decide (s_j or mu_j not certainly nonzero, W(0) not
certainly nonzero, a magnitude out of range) are reported; the caller sets them up in
balls instead.  Each head's Cauchy sums and the rest of the pass are those of
``layer_pass`` (``prepare_head``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...arith.array_field import DDArrayField
from ...arith.double_double import DD, concat, normalized
from ...arith.midrad import MR
from ..dft import next_power_of_two
from . import bilinear_map, correction
from .dplr import check_length
from .midrad import cauchy_direct_midrad
from .layer_pass import _HeadFailed, _Prepared, run_heads
from .midrad_quotient import mr_of_dd, mr_pairs


@dataclass
class DPLRArrays:
    """Conjugate-closed DPLR heads at step 1 as double-double disks: the first half of
    the full state (modes j < N/2; mode j + N/2 is the conjugate of mode j in every
    quantity).  ``lam``, ``B``: (heads, N/2); ``P``, ``Q``: r arrays (heads, N/2) each,
    the right and left low-rank factors (A = diag(lam) - P Q*); ``Ct``: (channels, heads,
    N/2), C~ for the grid's M points."""

    lam: DD
    B: DD
    P: list[DD]
    Q: list[DD]
    Ct: DD


@dataclass
class ArraySetup:
    """What ``setup_arrays`` forms, over the full state (heads, N): the poles, the weight
    sets by key (the shared ones (heads, N), the C~ ones (channels, heads, N)), H(-1) per
    (channel, head) and which heads it decided (``ok``; ``why`` the others' reasons)."""

    poles: DD
    shared: dict
    with_c: dict
    minus_one: DD
    ok: np.ndarray
    why: dict


def _full(x: DD) -> DD:
    """The full state's disks from the first half's: [x, conj x] along the last axis."""
    return concat([x, x.conj()], axis=-1)


def _sum_last(x: DD) -> DD:
    """sum over the last axis, as a halving tree of ``DD.add`` (exact zeros pad the axis)."""
    n = x.rh.shape[-1]
    size = 1 << max(0, (n - 1).bit_length())
    if size != n:
        pad = [(0, 0)] * (x.rh.ndim - 1) + [(0, size - n)]
        x = DD(*(np.pad(a, pad) for a in (x.rh, x.rl, x.ih, x.il, x.rad)))
    while x.rh.shape[-1] > 1:
        h = x.rh.shape[-1] // 2
        x = x[..., :h].add(x[..., h:])
    return x[..., 0]


def _real_part(x: DD) -> DD:
    """The real parts' disks: |Re y - Re mid| <= |y - mid| <= rad."""
    z = np.zeros(x.rh.shape)
    return DD(x.rh, x.rl, z, z, x.rad)


def _heads_with(mask: np.ndarray) -> np.ndarray:
    """Per head (axis -2 of a (..., heads, N/2) mask): every entry true."""
    m = mask.reshape(-1, *mask.shape[-2:]).all(axis=0)
    return m.all(axis=-1)


def setup_arrays(a: DPLRArrays, check_g: bool) -> ArraySetup:
    """The set-up of every head (module docstring).  ``check_g``: certify G = I - A/2
    invertible (ranks one and two; for a higher rank no head is decided).  Raises RangeError
    only when the arrays themselves leave the double-double range."""
    H = a.lam.rh.shape[0]
    r = len(a.P)
    why: dict[int, str] = {}
    ok = np.ones(H, dtype=bool)
    rate = bilinear_map.rate(bilinear_map.NUMBERS, 1.0)            # the step is folded into lambda, B, P
    s = bilinear_map.shift_disks(a.lam, rate, DD)
    nonzero = _heads_with(_clear_of_zero(s))
    for h in np.flatnonzero(ok & ~nonzero):
        why[int(h)] = "some 2 + lambda_j is not certainly nonzero (an exceptional index?)"
    ok &= nonzero
    # heads not decided get a harmless divisor (their results are never read)
    s = _where_heads(ok, s, DD.exact(np.full(s.rh.shape, 2.0)))
    inv_s = s.inv()
    mu, g = bilinear_map.poles_gains_disks(a.lam, inv_s, rate, DD)
    gv = {"B": g.mul(a.B), **{k: g.mul(a.P[k]) for k in range(r)}}
    shared = {}
    for i in range(r):
        qc = a.Q[i].conj()
        shared[(i, "B")] = qc.mul(gv["B"])
        for k in range(r):
            shared[(i, k)] = qc.mul(gv[k])
    cc = a.Ct.conj()
    with_c = {("C", "B"): cc.mul(_broadcast(gv["B"], cc)), **{("C", k): cc.mul(_broadcast(gv[k], cc)) for k in range(r)}}
    minus_one = _real_part(_sum_last(cc.mul(_broadcast(a.B, cc))))
    if check_g:
        if r > 2:
            for h in np.flatnonzero(ok):
                why[int(h)] = "G is certified from the arrays for ranks one and two only"
            ok[:] = False
        else:
            mu_ok = _heads_with(_clear_of_zero(mu))
            for h in np.flatnonzero(ok & ~mu_ok):
                why[int(h)] = "some pole mu_j is not certainly nonzero (G not certified)"
            ok &= mu_ok
            inv_mu = _where_heads(ok, mu, DD.exact(np.ones(mu.rh.shape))).inv()
            one = DD.exact(np.ones(H))
            zero = DD.exact(np.zeros(H))
            # W(0)_ik = delta_ik - Re sum_(j < N/2) a^(ik)_j / mu_j (the halves are conjugate)
            W = [[_real_part((one if i == k else zero).sub(_sum_last(shared[(i, k)].mul(inv_mu))))
                  for k in range(r)] for i in range(r)]
            w_ok = correction.w_certainly_nonsingular(DDArrayField(), W, r)
            for h in np.flatnonzero(ok & ~w_ok):
                why[int(h)] = "W(0) = I + S_QP(0)/2 is not certainly nonsingular (G not certified)"
            ok &= w_ok
    return ArraySetup(_full(mu), {k: _full(v) for k, v in shared.items()},
                      {k: _full(v) for k, v in with_c.items()}, minus_one, ok, why)


def _clear_of_zero(x: DD) -> np.ndarray:
    """Disks that certainly exclude 0 with room to spare (|mid| >= 5 rad), so that
    ``DD.inv`` (which asks |1 - x y| <= 1/2 over the disk) succeeds on them."""
    return x.abs_lower() > 4 * x.rad


def _broadcast(x: DD, like: DD) -> DD:
    return DD(*(np.broadcast_to(v, like.rh.shape) for v in (x.rh, x.rl, x.ih, x.il, x.rad)))


def _where_heads(ok: np.ndarray, x: DD, other: DD) -> DD:
    m = ok[:, None]
    return DD(*(np.where(m, getattr(x, f), getattr(other, f)) for f in ("rh", "rl", "ih", "il", "rad")))


def head_sums(st: ArraySetup, h: int, roots_dd: tuple) -> tuple[dict, list[dict], list[MR]]:
    """Head h's Cauchy sums on the roots ``roots_dd`` (one call of the direct sums for all
    its weight sets, ``midrad.cauchy_direct_midrad``, the weights as float64 disks with
    low parts): (the shared sums by key, per channel the C~ sums by key, per channel the
    disk of H(-1)).  Raises RangeError when the disks cannot decide."""
    p = normalized(st.poles[h])
    poles = (p.rh + 1j * p.ih, p.rl + 1j * p.il, float(np.max(p.rad)))
    keys = list(st.shared)
    ckeys = list(st.with_c)
    channels = st.with_c[ckeys[0]].rh.shape[0]
    sets = [st.shared[k][h] for k in keys] + [st.with_c[k][c, h] for c in range(channels) for k in ckeys]
    pairs = [mr_pairs(normalized(w)) for w in sets]
    sums, _ = cauchy_direct_midrad(roots_dd, poles, [w for w, _ in pairs], weights_lo=[lo for _, lo in pairs])
    base = dict(zip(keys, sums[:len(keys)]))
    per = [dict(zip(ckeys, sums[len(keys) + c * len(ckeys): len(keys) + (c + 1) * len(ckeys)])) for c in range(channels)]
    m1 = mr_of_dd(st.minus_one[:, h])
    return base, per, [MR(m1.mid[c:c + 1], m1.rad[c:c + 1]) for c in range(channels)]


def filter_kernels_arrays(a: DPLRArrays, L: int, check_g: bool = False,
                          progress=None) -> tuple[np.ndarray, np.ndarray, dict]:
    """Every kernel of the heads ``a`` (head-major, then channel) at length L on float64
    disks, as ``layer_pass.filter_kernels_midrad`` returns them: (mid, rad, failed),
    a head the set-up did not decide failing with its reason (``check_g``: with C~
    supplied, G must be certified invertible, see ``setup_arrays``).  Raises RangeError
    when the arrays leave the double-double range (then no head is done here).

    >>> import numpy as np
    >>> from s4cert.arith.double_double import DD
    >>> a = DPLRArrays(DD.exact([[-0.5 + 1j]]), DD.exact([[1.0]]), [DD.exact([[0.25]])], [DD.exact([[0.5]])],
    ...                DD.exact([[[1 - 1j]]]))
    >>> mid, rad, failed = filter_kernels_arrays(a, 8, check_g=True)
    >>> mid.shape, bool(rad.max() < 1e-13), failed
    ((1, 8), True, {})
    """
    L = check_length(L)
    M = next_power_of_two(L)
    st = setup_arrays(a, check_g)
    channels = a.Ct.rh.shape[0]
    half = M >= 4

    def prepare(i: int, roots_dd: tuple) -> _Prepared:
        if not st.ok[i]:
            raise _HeadFailed(st.why.get(i, "not decided by the set-up"))
        if half:
            roots_dd = tuple(x[:M // 2 + 1] for x in roots_dd[:2]) + (roots_dd[2],)
        base, per, m1 = head_sums(st, i, roots_dd)
        return _Prepared([{**base, **per[c]} for c in range(channels)], None, [], [], half, m1)

    return run_heads([channels] * len(st.ok), prepare, len(a.P), L, progress=progress)
