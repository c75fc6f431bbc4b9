"""The cost theorem's normalizations of measured counts, and a least-squares fit over a grid.

For a row with ``ops`` operations and ``peak`` live words at size s = N + L, accuracy
eps and the model's certified kappa:

* ``norm_exact`` = ops / (s log2^2 s): the exact filter's claim O(s log^2 s);
* ``norm_eps``   = ops / (s log2 s log2(kappa/eps)): the eps-accurate filter's claim;
* ``norm_words`` = peak / s: both claims' O(s) words.

The fit: ops ~ s^alpha (a + c log2(kappa/eps)), minimizing the relative squared error
sum_i ((ops_i - s_i^alpha (a + c x_i)) / ops_i)^2 (x_i = log2(kappa_i/eps_i)).  For a
fixed alpha the problem in (a, c) is linear; alpha is found by a scan and a golden-section
refinement.  The residual is the root mean square of the relative errors.
"""
from __future__ import annotations

import math

import numpy as np

MODEL = "ops = (N+L)^alpha (a + c log2(kappa/eps))"
#: the range of exponents of s the fit scans
ALPHA_RANGE = (0.25, 3.0)


def norm_exact(ops: int, size: int) -> float:
    """ops / (s log2^2 s)."""
    return ops / (size * math.log2(size) ** 2)


def norm_eps(ops: int, size: int, kappa: float, eps: float) -> float:
    """ops / (s log2 s log2(kappa/eps)); kappa/eps > 2 is required (kappa >= 64)."""
    x = log2_kappa_over_eps(kappa, eps)
    return ops / (size * math.log2(size) * x)


def norm_words(peak: int, size: int) -> float:
    """peak words / s."""
    return peak / size


def log2_kappa_over_eps(kappa: float, eps: float) -> float:
    """log2(kappa/eps), checked finite and > 1."""
    if not (kappa > 0 and eps > 0 and math.isfinite(kappa)):
        raise ValueError(f"kappa and eps must be finite and > 0, got kappa={kappa!r}, eps={eps!r}")
    x = math.log2(kappa) - math.log2(eps)
    if not x > 1:
        raise ValueError(f"log2(kappa/eps) must exceed 1, got {x:.3g}")
    return x


def _linear(alpha: float, s: np.ndarray, x: np.ndarray, ops: np.ndarray, use_c: bool):
    """(a, c, relative residuals) of the best (a, c) at exponent alpha."""
    base = s ** alpha / ops
    cols = [base, base * x] if use_c else [base]
    A = np.stack(cols, axis=1)
    coef, *_ = np.linalg.lstsq(A, np.ones_like(ops), rcond=None)
    rel = A @ coef - 1.0
    return float(coef[0]), (float(coef[1]) if use_c else 0.0), rel


def fit_counts(rows: list[dict]) -> dict:
    """The fit of ``ops`` over rows with ``N``, ``L``, ``eps``, ``kappa``, ``ops``:
    ``{"model", "alpha", "a", "c", "residual", "rows"}``.  ``alpha`` is None when the rows
    hold one size (then ops ~ a + c x); ``c`` is None (and not fitted) when log2(kappa/eps)
    takes one value.  ``residual`` is the RMS relative error.  With no more rows than
    parameters nothing is fitted: every value None and ``reason`` says so."""
    if not rows:
        raise ValueError("fit_counts: no rows")
    s = np.array([r["N"] + r["L"] for r in rows], dtype=float)
    x = np.array([log2_kappa_over_eps(r["kappa"], r["eps"]) for r in rows])
    ops = np.array([r["ops"] for r in rows], dtype=float)
    use_c = bool(np.ptp(x) > 1e-9 * np.max(x))
    n_params = 1 + use_c + bool(np.ptp(s) > 0)
    if len(rows) <= n_params:
        return {"model": MODEL, "alpha": None, "a": None, "c": None, "residual": None, "rows": len(rows),
                "reason": f"{len(rows)} rows do not over-determine {n_params} parameters"}
    if np.ptp(s) == 0:
        a, c, rel = _linear(0.0, s, x, ops, use_c)
        alpha = None
    else:
        alpha = _best_alpha(s, x, ops, use_c)
        a, c, rel = _linear(alpha, s, x, ops, use_c)
    return {"model": MODEL, "alpha": alpha, "a": a,
            "c": c if use_c else None, "residual": float(math.sqrt(np.mean(rel ** 2))), "rows": len(rows)}


def _best_alpha(s: np.ndarray, x: np.ndarray, ops: np.ndarray, use_c: bool) -> float:
    def cost(al: float) -> float:
        return float(np.sum(_linear(al, s, x, ops, use_c)[2] ** 2))

    grid = np.linspace(*ALPHA_RANGE, 276)
    costs = [cost(al) for al in grid]
    i = int(np.argmin(costs))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
    g = (math.sqrt(5) - 1) / 2
    for _ in range(60):  # golden section on [lo, hi]
        m1, m2 = hi - g * (hi - lo), lo + g * (hi - lo)
        if cost(m1) <= cost(m2):
            hi = m2
        else:
            lo = m1
    return float((lo + hi) / 2)
