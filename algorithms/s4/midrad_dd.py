"""The S4 filter at every root at once, in double-double midpoint-radius arrays.

The stages of ``s4.midrad`` (the float64 disk route) with the arithmetic of
``arith.double_double``: midpoints carried as unevaluated pairs of float64 arrays, radii
bounded per element (``proofs/double_double_filter.md``):

1. set-up (partition, poles mu_j, weights) in ball arithmetic, rounded to double-double
   disks element by element;
2. the (r+1)^2 Cauchy sums directly over blocks of (root, pole) pairs
   (``cauchy_pairs``): d = z_k - mu_j as a pair, 1/d from a float64 inverse and its
   residual by exact products, the sums over the poles by matrix products of exact
   slices (BLAS);
3. per root, W = I + beta T inverted by Gauss-Jordan on disks (every pivot certainly
   nonzero, else the route stops undecided), then H;
4. the inverse DFT by radix-2 butterflies on the double-double midpoints, its rounding
   bounded a priori per stage, plus the mean of the input radii.

The kernel's disks hold K_j for every j < L; the result's ``info`` carries the bounds the
filter constants need (b, w, d, A_wt), as in ``s4.midrad``.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ...arith.double_double import DD, dd_of_balls, normalized, roots_of_unity_dd, two_sum
from ...arith.midrad import RangeError, sum_upper, up

from ..result import Result, Status, undecided
from . import correction
from .cauchy_pairs import cauchy_pairs
from .dplr import DPLR
from .midrad import bit_reverse, constant_bounds, disk_setup, transfer_disks

#: the name of this arithmetic in results and certificates
ARITHMETIC = "double-double midpoint-radius"


def cauchy_direct_dd(Z: DD, poles: DD, weights: list[DD]) -> tuple[list[DD], float]:
    """Disks of S_k = sum_j a_j / (z_k - mu_j) for each weight set (poles and weights as
    double-double disks), and a lower bound of min |z_k - mu_j| (inf without poles), by
    ``cauchy_pairs.cauchy_pairs`` (exact products and matrix products of exact slices).
    RangeError when a difference's disk may contain 0 or a magnitude leaves the range."""
    return cauchy_pairs(Z, poles, weights)


def _split(x):
    """Veltkamp's split (``arith.double_double.split``)."""
    c = 134217729.0 * x
    h = c - (c - x)
    return h, x - h


def _mul_pairs_split(xh, xl, xH, xL, yh, yl, yH, yL):
    """``mul_pairs`` of x and y given their high parts' splits (Lemma 8's kernel, its
    operations unchanged): (zh, zl)."""
    p = xh * yh
    e = ((xH * yH - p) + xH * yL + xL * yH) + xL * yL
    e *= np.abs(p) >= 2.0 ** -900                        # Lemma 1: e = 0 below 2^-900
    return two_sum(p, e + (xh * yl + xl * yh))


def _add_pairs_into(xh, xl, yh, yl, zh, zl):
    """``add_pairs`` of x and y written into the views (zh, zl)."""
    sh, se = two_sum(xh, yh)
    se += xl + yl
    h, l = two_sum(sh, se)
    zh[...], zl[...] = h, l


def idft_dd(H: DD, M: int) -> DD:
    """Disks of (1/M) sum_k h_k conj(z_k)^j (numpy's ifft convention) for every h in the
    disks H: the radix-2 transform of the midpoints by the pair kernels (real and imaginary
    parts stacked), its rounding bounded a priori stage by stage, plus the mean of the input
    radii (proofs/double_double_filter.md, Lemma 13)."""
    x = normalized(H[bit_reverse(M)])
    X, XL = np.stack([x.rh, x.ih]), np.stack([x.rl, x.il])   # 2 x M: (re, im)
    Zc = normalized(roots_of_unity_dd(M).conj())
    r_w = float(np.max(Zc.rad)) if M > 1 else 0.0
    c_loc = up(up(15.93 * 2.0 ** -106 * (1 + 2.0 ** -40)) + up(1.01 * r_w))  # the product's share per unit of X
    sign = np.array([-1.0, 1.0])[:, None, None]
    E = 0.0
    Xmax = float(np.max(up(np.abs(x.rh) + np.abs(x.ih)), initial=0.0))
    size = 2
    while size <= M:
        half = size // 2
        v, vl = X.reshape(2, -1, size), XL.reshape(2, -1, size)
        eh, el, oh, ol = v[:, :, :half], vl[:, :, :half], v[:, :, half:], vl[:, :, half:]
        if size <= 4:                                    # twiddles 1 and i: p = w o exactly
            ph, pl = oh, ol
            if size == 4:                                # the second column times i: (re, im) -> (-im, re)
                ph, pl = oh.copy(), ol.copy()
                ph[:, :, 1], pl[:, :, 1] = sign[:, :, 0] * oh[::-1, :, 1], sign[:, :, 0] * ol[::-1, :, 1]
            loc = 0.0
        else:
            tw = Zc[0:M:M // size][:half]                # exp(+2 pi i j / size)
            wr, wrl, wi, wil = (y[None, None] for y in (tw.rh, tw.rl, tw.ih, tw.il))
            (wrH, wrL), (wiH, wiL) = _split(wr), _split(wi)
            oH, oL = _split(oh)
            a = _mul_pairs_split(wr, wrl, wrH, wrL, oh, ol, oH, oL)                    # [wr o_re, wr o_im]
            b = _mul_pairs_split(wi, wil, wiH, wiL, oh[::-1], ol[::-1], oH[::-1], oL[::-1])  # [wi o_im, wi o_re]
            ph, pl = np.empty_like(oh), np.empty_like(oh)
            _add_pairs_into(a[0], a[1], sign * b[0], sign * b[1], ph, pl)              # w o: (re, im)
            loc = c_loc
        Y, YL = np.empty_like(v), np.empty_like(vl)
        _add_pairs_into(eh, el, ph, pl, Y[:, :, :half], YL[:, :, :half])
        _add_pairs_into(eh, el, -ph, -pl, Y[:, :, half:], YL[:, :, half:])
        X, XL = Y.reshape(2, M), YL.reshape(2, M)
        if not Xmax <= 2.0 ** 500:                       # NaN fails too (Lemma 8's range)
            raise RangeError("the inverse transform left the double-double range")
        E = up(up(up(2 * E) + up(up(loc + 7.51 * 2.0 ** -106 * (1 + 2.0 ** -40)) * Xmax)) + 2.0 ** -945)
        Xmax = float(np.max(up(np.abs(X[0]) + np.abs(X[1]))))
        size *= 2
    mean_rad = float(sum_upper(float(np.sum(x.rad)), M)) / M
    R = up(up(mean_rad * (1 + 2.0 ** -50)) + up(E / M))   # E/M, M a power of two: exact but for underflow
    c = 1.0 / M
    out = DD(X[0] * c, XL[0] * c, X[1] * c, XL[1] * c, np.full(M, up(R + 4 * 2.0 ** -940)))
    return out._make(out.rh, out.rl, out.ih, out.il, out.rad)


def filter_kernel_dd(model: DPLR, step: Any, L: int, c_tilde: list | None = None,
                     exceptional: list[int] | None = None, prec: int = 192) -> Result:
    """The length-L kernel as double-double disks, the set-up done in ``BallField(prec)``.

    Result: ``value`` = (midpoints, radii): complex128 midpoints (the double-double
    midpoints rounded) and float64 radii, so |K_j - mid_j| <= rad_j.  ``info`` as in
    ``s4.midrad.filter_kernel_midrad``: ``"M"``, ``"exceptional"``, ``"poles"``,
    ``"cauchy"`` (``"route"``: ``"direct"``, ``"arithmetic"``), ``"b"``, ``"w"`` (upper
    bounds, floats >= 1), ``"d"`` (a lower bound of min |z_k - mu_j|), ``"A_wt"`` (upper
    bounds of sum_j |a_j| by weight key), and ``"dd"``: (hi, lo, rad), the complex parts
    of the double-double midpoints and their radii (|K_j - hi_j - lo_j| <= rad_j).  Statuses: ``undecided`` (``info["reason"]``) and the set-up's.

    >>> from s4cert.algorithms.s4.dplr import DPLR
    >>> res = filter_kernel_dd(DPLR([-1.0, -2.0], [0.5, 0.25], [1, 1], [1, -1]), 0.5, 8)
    >>> hi, lo, rad = res.info["dd"]
    >>> res.ok, bool(rad.max() < 1e-28)
    (True, True)
    """
    su = disk_setup(model, step, L, c_tilde, exceptional, prec)
    if not su.ok:
        return su
    L, M, F, st = su.value
    r = model.r
    try:
        Z = roots_of_unity_dd(M)
        keys = list(st.weights)
        wdisks = [dd_of_balls([F.enclose(x) for x in st.weights[k]]) for k in keys]
        sums, sep = cauchy_direct_dd(Z, dd_of_balls([F.enclose(p) for p in st.poles]), wdisks)
        blocks = dict(zip(keys, sums))
        for key, const in st.offsets.items():  # the exceptional indices' constant
            cd = dd_of_balls([F.enclose(const)])
            blocks[key] = blocks[key].add(cd)
        minus_one = correction.minus_one_index(M)
        mask = np.ones(M, dtype=bool)
        if minus_one is not None:
            mask[minus_one] = False
        H, Winv = transfer_disks(blocks, Z, r, minus_one, DD)
        if minus_one is not None:
            h = dd_of_balls([F.enclose(correction.value_at_minus_one(F, st.half_delta, st.Ct, st.m.B))])
            for f in ("rh", "rl", "ih", "il", "rad"):
                getattr(H, f)[minus_one] = getattr(h, f)[0]
        K = idft_dd(H, M)[:L]
        bounds = constant_bounds(blocks, Winv, mask, r)
    except RangeError as e:
        return undecided(f"double-double disks: {e}")
    A_wt = {key: float(sum_upper(float(np.sum(w.abs_upper())), len(w))) if len(w) else 0.0
            for key, w in zip(keys, wdisks)}
    # the midpoints rounded to complex128: within 2u |mid| per component, added to the radius
    mid = K.mid_complex()
    rad = up(K.rad + up(2 * 2.0 ** -53 * K.mid_abs1()))
    info = {"M": M, "exceptional": list(st.exceptional), "poles": len(st.poles),
            "cauchy": {"route": "direct", "arithmetic": ARITHMETIC},
            "b": bounds["b"], "w": bounds["w"], "d": sep, "A_wt": A_wt,
            "dd": (K.rh + 1j * K.ih, K.rl + 1j * K.il, K.rad)}
    return Result(Status.OK, (mid, rad), info)
