"""Conversions between balls (python-flint ``acb``) and disk arrays, each rule once.

Every conversion returns disks (or balls) containing every point of what it converts; the
statement each proof relies on is in the function's docstring, with the proof that
shows it.  The rules differ on purpose (a cheap radius from Arb's radii, a tight one from
a ball subtraction, one radius for a whole set of pairs), and each keeps its exact
rounding steps: the routes' results depend on them bit for bit.

* balls to float64 disks (``arith.midrad.MR``, or (mid, rad) arrays): ``mr_of_balls``,
  ``midrad_arrays_of_balls``, ``real_disk_of_ball``;
* balls to double-float pairs: ``pairs_of_balls`` (one radius for all), ``dd_of_balls``
  (``arith.double_double.DD``, a radius each);
* double-double disks to float64 disks: ``mr_of_dd``, ``mr_of_dd_unnormalized``,
  ``mr_pairs_of_dd``;
* disks to balls: ``mr_midpoints``, ``dd_midpoints`` (the midpoints as balls) and
  ``balls_of_disks`` (boxes around them).

>>> from flint import acb
>>> d = mr_of_balls([acb(1) / 3])
>>> bool(d.rad[0] < 1e-16 and d.contains([1 / 3])[0])
True
"""
from __future__ import annotations

import math
import operator
from functools import lru_cache

import numpy as np
from flint import acb, arb, ctx

from .ball import float_upper
from .double_double import DD, _dd_parts, normalized
from .midrad import MR, RangeError, _check_range, _dd_part, up


# -- balls to float64 disks ------------------------------------------------------------------

@lru_cache(maxsize=1)
def midpoints_round_to_nearest() -> bool:
    """Whether ``complex(acb)`` rounds each part to nearest (python-flint's ``arf_get_d`` with
    ARF_RND_NEAR), checked on values just above and below a tie; else only a faithful rounding
    (within one unit in the last place) is assumed."""
    with ctx.workprec(128):
        t = arb(2) ** -53 + arb(2) ** -60                         # just above half an ulp of 1
        cases = [(acb(1 + t, -(1 + t)), complex(1 + 2.0 ** -52, -(1 + 2.0 ** -52))),
                 (acb(1 + 2 * t - arb(2) ** -52, 3 - t), complex(1.0, 3.0))]
    return all(complex(b) == want for b, want in cases)


def mr_of_balls(balls: list, nearest: bool | None = None) -> MR:
    """Float64 disks containing acb balls (proofs/midrad_filter.md §5, the rounding of
    ``_disks``): midpoint m = ``complex(b.mid())``, each part within f ulp(m_c) of the ball's
    midpoint, f = 1/2 when the conversion rounds to nearest (``nearest``; None: as
    ``midpoints_round_to_nearest`` finds) and f = 1 otherwise, ``np.spacing`` giving the ulp
    exactly; radius up(up(up(r_r + r_i) + up(f (ulp_r + ulp_i))) + 2^-1072), r_r and r_i the
    floats of the parts' radii (Arb's 30-bit radii: exact floats in the normal range, within
    2^-1074 below it).  So |x - m| <= rad for every point x of each ball.  A ball that is not
    finite, or whose parts leave the float range, gets an infinite radius, which
    ``MR.from_parts`` refuses (``RangeError``), as it refuses midpoints beyond 2^400."""
    if nearest is None:
        nearest = midpoints_round_to_nearest()
    mid = np.array([complex(b.mid()) for b in balls], dtype=np.complex128)
    rr = np.array([float(b.real.rad()) for b in balls], dtype=np.float64)
    ri = np.array([float(b.imag.rad()) for b in balls], dtype=np.float64)
    f = 0.5 if nearest else 1.0
    with np.errstate(invalid="ignore", over="ignore"):
        ulps = np.spacing(np.abs(mid.real)) + np.spacing(np.abs(mid.imag))   # exact powers of two, sum rounded
        rad = up(up(up(rr + ri) + up(f * ulps)) + 2.0 ** -1072)
    rad[~(np.isfinite(rad) & np.isfinite(mid.real) & np.isfinite(mid.imag))] = math.inf
    return MR.from_parts(mid, rad)


def midrad_arrays_of_balls(balls: list, prec: int) -> tuple[np.ndarray, np.ndarray]:
    """float64 midpoints and radii with |x - mid_j| <= rad_j for every point x of ball j
    (proofs/ball_mode.md §4, ``enclosure_arrays``).

    mid_j is the ball's midpoint rounded to complex128; rad_j is ``abs_upper`` of the ball
    b_j - mid_j (which contains x - mid_j), an exact point rounded up to 53 bits, so its
    float is exact in the normal range; entries outside [2^-1020, 2^1020] (zero, tiny, huge,
    not finite) are bounded again one by one with ``float_upper`` at ``prec + 64`` bits
    (infinite for a ball that is not finite)."""
    n = len(balls)
    mid = np.array(list(map(complex, balls)), dtype=np.complex128) if n else np.zeros(0, np.complex128)
    with ctx.workprec(53):  # b - mid encloses x - mid at any precision; |.| rounded up to 53 bits
        ups = list(map(acb.abs_upper, map(operator.sub, balls, mid.tolist())))
    rad = np.array(list(map(float, ups)), dtype=float) if n else np.zeros(0)
    finite = np.fromiter(map(acb.is_finite, balls), dtype=bool, count=n)
    with np.errstate(invalid="ignore"):
        careful = ~(finite & np.isfinite(rad) & (rad >= 2.0 ** -1020) & (rad <= 2.0 ** 1020))
    with ctx.workprec(prec + 64):
        for j in np.flatnonzero(careful):
            b, m = balls[j], mid[j]
            rad[j] = float_upper(abs(b - acb(m.real, m.imag)).upper()) if b.is_finite() else math.inf
    return mid, rad


def real_disk_of_ball(x: acb) -> tuple[float, float]:
    """A float64 midpoint m and radius r with |t - m| <= r for every real t in the real part
    of x: m = ``float(re.mid())`` and r = ``float_upper`` of the ball |re - m| at 64 bits
    (which contains |t - m|); (nan, inf) for a real part that is not finite, (m, inf) when
    its midpoint leaves the float range."""
    re = x.real
    if not re.is_finite():
        return math.nan, math.inf
    m = float(re.mid())
    if not math.isfinite(m):
        return m, math.inf
    with ctx.workprec(64):
        return m, float_upper((re - arb(m)).abs_upper())


# -- balls to double-float pairs ---------------------------------------------------------------

def pairs_of_balls(balls: list) -> tuple[np.ndarray, np.ndarray, float]:
    """Double-float pairs (hi, lo) of complex balls and one radius R with
    |x_j - hi_j - lo_j| <= R for every point x_j of ball j (proofs/midrad_filter.md Lemma 7):
    each part by ``arith.midrad._dd_part`` at >= 128 bits, which checks
    rad(x - hi) < 2^-110 and |lo| <= 2^-52 max(|hi|, 2^-400) (else ``RangeError``), so each
    part errs by at most 2^-110 + 2^-104 max(|hi|, 1), and
    R = up(2 up(2^-110 + up(2^-104 max(1, max |hi| per part)))).  Non-finite balls and high
    parts beyond 2^400 are refused (``RangeError``)."""
    n = len(balls)
    hi, lo = np.empty(n, dtype=np.complex128), np.empty(n, dtype=np.complex128)
    with ctx.workprec(max(ctx.prec, 128)):
        for j, b in enumerate(balls):
            if not b.is_finite():
                raise RangeError("a ball is not finite")
            rh, rl = _dd_part(b.real)
            ih, il = _dd_part(b.imag)
            hi[j], lo[j] = complex(rh, ih), complex(rl, il)
    _check_range(hi.real, hi.imag)
    big = max(1.0, float(np.max(np.abs(hi.real), initial=0.0)), float(np.max(np.abs(hi.imag), initial=0.0)))
    return hi, lo, float(up(2 * up(2.0 ** -110 + up(2.0 ** -104 * big))))


def dd_of_balls(balls: list, prec: int = 256) -> DD:
    """Double-double disks containing the acb balls, with a radius per element (proofs/
    double_double_filter.md Lemma 6): per part h = ``float(x.mid())``, the ball x - h at
    ``prec`` bits, l the float of its midpoint and e = ``float_upper`` of the ball
    |x - h - l|, so |x - h - l| <= e for every point; the disk's radius is up(e_re + e_im)
    (about 2^-104 |x| plus the ball's own radius).  Non-finite balls, and parts or radii
    beyond ``double_double.BIG``, are refused (``RangeError``)."""
    parts = []
    with ctx.workprec(prec):
        for b in balls:
            if not b.is_finite():
                raise RangeError("a ball is not finite")
            parts.append(_dd_parts(b.real, float_upper) + _dd_parts(b.imag, float_upper))
    a = np.array(parts, dtype=np.float64).reshape(len(balls), 6)   # rh, rl, er, ih, il, ei
    return DD.from_parts(a[:, 0] + 1j * a[:, 3], a[:, 1] + 1j * a[:, 4], up(a[:, 2] + a[:, 5]))


# -- double-double disks to float64 disks -------------------------------------------------------

def mr_of_dd(x: DD) -> MR:
    """Float64 disks containing double-double disks, renormalized first (``mr_of_dd``,
    proofs/midrad_filter.md Lemma 10.5 and proofs/layer_pass.md): each part's pair by 2Sum
    (the same values, |lo| <= u |hi|), then the high parts as midpoints and the radius
    up(rad + up(up(|lo_re| + |lo_im|))): |x - hi| <= |x - mid| + |lo| <= rad + |lo_re| + |lo_im|."""
    x = normalized(x)
    mid = x.rh + 1j * x.ih
    return MR(mid, up(x.rad + up(up(np.abs(x.rl) + np.abs(x.il)))))


def mr_of_dd_unnormalized(x: DD) -> MR:
    """Float64 disks containing double-double disks, the pairs as they are (``disks_of``,
    proofs/diagonal_kernels.md §4): the high parts r_h + i i_h as midpoints (formed exactly)
    and the radius up(up(|r_l| + |i_l|) + rad), since |x - (r_h + i i_h)| <= |x - m| +
    |r_l + i i_l| <= rad + |r_l| + |i_l|."""
    return MR(x.rh + 1j * x.ih, up(up(np.abs(x.rl) + np.abs(x.il)) + x.rad))


def mr_pairs_of_dd(x: DD) -> tuple[MR, np.ndarray]:
    """A double-double disk array as float64 disks with low parts (``mr_pairs``,
    proofs/midrad_filter.md Lemma 10 with ``weights_lo``): (MR(hi, rad), lo) with
    |x - hi - lo| <= rad for every point x of each disk (the same disks, regrouped)."""
    return MR(x.rh + 1j * x.ih, x.rad.copy()), x.rl + 1j * x.il


# -- disks to balls -----------------------------------------------------------------------------

def mr_midpoints(x: MR) -> list[acb]:
    """The midpoints of float64 disks as exact balls (flattened in C order)."""
    m = np.ravel(x.mid)
    return [acb(float(v.real), float(v.imag)) for v in m]


def dd_midpoints(x: DD, prec: int) -> list[acb]:
    """The midpoints (r_h + r_l) + i (i_h + i_l) of double-double disks as balls formed at
    ``prec`` bits (flattened in C order): each sum of two exact floats by Arb, exact when
    ``prec`` covers the pair's span and otherwise rounded with the rounding in the radius."""
    parts = (np.ravel(getattr(x, f)) for f in ("rh", "rl", "ih", "il"))
    with ctx.workprec(prec):
        return [acb(arb(float(a)) + arb(float(b)), arb(float(c)) + arb(float(d))) for a, b, c, d in zip(*parts)]


def balls_of_disks(mids: list[acb], rad: np.ndarray, prec: int) -> list[acb]:
    """Balls containing the disks |x - m_j| <= rad_j: each midpoint ball with both parts'
    radii enlarged by rad_j (the box around the disk), formed at ``prec`` bits (Arb's
    additions enclose).  ``rad`` is read flattened in C order."""
    r = np.ravel(rad)
    if len(mids) != r.size:
        raise ValueError(f"balls_of_disks: {len(mids)} midpoints against {r.size} radii")
    with ctx.workprec(prec):
        out = []
        for m, rj in zip(mids, r):
            e = arb(0, float(rj))
            out.append(acb(m.real + e, m.imag + e))
        return out
