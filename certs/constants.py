"""The filter constants of the spec's numerical theorem, certified from a ball run.

At each root z != -1, with beta = (1+z)/2, the scaled blocks are x = S_CB(z),
u = S_CP(z), v = S_QB(z), T = S_QP(z), and W = I + beta T.  The constants are

* b >= 1 bounding |x|, ||u||_inf, ||v||_inf, ||T||_inf (max absolute row sum),
* w >= 1 bounding ||W^-1||_inf,
* for every Cauchy sum a certified pole/root separation d and weight bound
  A_wt >= sum_j |a_j|, and s >= 1 bounding A_wt/d,
* kappa = 64 r w^2 (b+1)^2 s.

Every bound comes from balls that enclose the exact values, so it holds for them.
"""
from __future__ import annotations

import math
from fractions import Fraction

from flint import acb, arb, ctx

from ..algorithms.s4.correction import minus_one_index
from ..arith import BallField
from ..arith.ball import float_lower, float_upper


#: the precision of the exact upper points behind b and w (each rounded up to it)
UPPER_PREC = 53


def _abs_upper(x: acb) -> arb:
    return abs(x).upper() if x.is_finite() else arb(math.inf)


def _pt_min(a: arb, b: arb) -> arb:
    """min of two exact points (comparisons of exact points are decisive)."""
    return a if a <= b else b


def separation(F: BallField, poles: list, M: int) -> arb:
    """An exact point d <= min_{j,k} |z_k - mu_j| over the M-point grid.

    For each pole: |z - mu| >= | |mu| - 1 |; and when arg(mu) is known to within
    pi/(2M), the nearest grid point is one of the three around the midpoint angle, and
    |z_k - mu| grows with the angular distance, so the least of those three distances
    bounds all M of them."""
    if not poles:
        return arb(math.inf)
    best = None
    with ctx.workprec(F.prec):
        half_step = arb.pi() / (2 * M)
        for mu in poles:
            if not mu.is_finite():
                return arb(0)
            rho = abs(mu)
            d = abs(rho - 1).lower()
            phi = mu.arg()
            if rho > 0 and phi.rad() < half_step:
                k0 = round(-float(phi.mid()) * M / (2 * math.pi))
                near = None
                for k in (k0 - 1, k0, k0 + 1):
                    dist = abs(F.root_of_unity(M, k) - mu).lower()
                    near = dist if near is None else _pt_min(near, dist)
                d = d if d >= near else near
            best = d if best is None else _pt_min(best, d)
    return best if best > 0 else arb(0)


def _abs_uppers(vals: list, skip: int | None) -> list:
    """Exact upper points of |x| for the balls of a vector over the roots, the entry at
    ``skip`` left out; +inf for every entry when one ball is not finite."""
    if skip is not None:
        vals = vals[:skip] + vals[skip + 1:]
    if not all(map(acb.is_finite, vals)):
        return [arb(math.inf)] * len(vals)
    return list(map(acb.abs_upper, vals))


def _row_sums(rows: list[list]) -> list:
    """For rows of vectors of exact upper points: the exact upper points of the row sums,
    root by root, and of each entry alone for a one-entry row."""
    out = []
    for row in rows:
        acc = row[0]
        for col in row[1:]:
            acc = [(x + y).upper() for x, y in zip(acc, col)]
        out.append(acc)
    return out


def _largest(vectors: list) -> arb:
    """The largest of exact points (comparisons of exact points are exact); 1 at least."""
    best = arb(1)
    for v in vectors:
        if v:
            m = max(v)
            best = best if best >= m else m
    return best


def filter_constants(F: BallField, info: dict, r: int) -> dict:
    """b, w, s (with d and A_wt), kappa and their ingredients from a ball filter run
    made with ``keep_blocks=True``: the dict of :func:`constants_from_bounds`.  b bounds
    |x|, ||u||_inf (row sum), ||v||_inf (largest entry), ||T||_inf (largest row sum) and
    w bounds ||W^-1||_inf (largest row sum of the run's ``info["inverse"]``) at every
    root but -1, all the roots at once by exact upper points (``proofs/filter_constants.md``).
    Values are floats rounded outward (b, w, s, A_wt, kappa up; d down)."""
    blocks, M = info["blocks"], info["M"]
    skip = minus_one_index(M)
    with ctx.workprec(UPPER_PREC):  # upper bounds rounded up to UPPER_PREC bits: valid, a little coarser
        up = {key: _abs_uppers(vals, skip) for key, vals in blocks.items()}
        rows = [up[("C", "B")]]  # |x|, ||u|| (row sum), each |v_i|, each row sum of T
        if r:
            rows += _row_sums([[up[("C", i)] for i in range(r)]]) + [up[(i, "B")] for i in range(r)]
            rows += _row_sums([[up[(i, c)] for c in range(r)] for i in range(r)])
        b = _largest(rows)
        inv = [[_abs_uppers(x, skip) for x in row] for row in info["inverse"]]
        w = _largest(_row_sums(inv))
    with ctx.workprec(F.prec):
        d_f = float_lower(separation(F, info["poles"], M))
        a_wt = {}
        for key, weights in info["weights"].items():
            total = arb(0)
            for a_j in weights:
                total += _abs_upper(a_j)
            a_wt[key] = float_upper(total.upper())
        b_f, w_f = float_upper(b), float_upper(w)
    return constants_from_bounds(b_f, w_f, d_f, a_wt, r, info["exceptional"],
                                 {key: bool(ws) for key, ws in info["weights"].items()})


def constants_from_bounds(b: float, w: float, d: float, a_wt: dict, r: int, partition: list,
                          nonempty: dict | None = None) -> dict:
    """s (>= 1 and >= A_wt/d for every nonempty weight set) and kappa = 64 r w^2 (b+1)^2 s,
    rounded up, from float bounds b, w (upper), d (lower) and A_wt (upper, keyed by the
    Cauchy sums' (u, v) keys)."""
    s_f = 1.0
    for key, a_f in a_wt.items():
        if nonempty is None or nonempty[key]:  # s bounds A_wt/d of the stored (rounded) numbers themselves
            s_f = max(s_f, _ratio_up(a_f, d))
    with ctx.workprec(128):
        kappa = (64 * r * arb(w) ** 2 * (arb(b) + 1) ** 2 * arb(s_f)).upper() if math.isfinite(s_f) else arb(math.inf)
    return {"b": b, "w": w, "s": s_f, "d": d, "A_wt": {sum_key(k): v for k, v in a_wt.items()}, "kappa": float_upper(kappa),
            "partition": list(partition), "r": r}


def _ratio_up(a: float, d: float) -> float:
    """The least float >= a/d (exactly: floats are rationals)."""
    if d <= 0 or not math.isfinite(a):
        return math.inf
    q = Fraction(a) / Fraction(d)
    try:
        f = float(q)
    except OverflowError:
        return math.inf
    return f if Fraction(f) >= q else math.nextafter(f, math.inf)


def sum_key(key: tuple) -> str:
    """The certificate's name of a Cauchy sum's weight key: ("C", "B") -> "S[Ct,B]",
    (i, k) -> "S[Qi,Pk]"."""
    u, v = key
    left = "Ct" if u == "C" else f"Q{u}"
    right = "B" if v == "B" else f"P{v}"
    return f"S[{left},{right}]"
