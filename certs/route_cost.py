"""How the ball run picks its Cauchy route and its first precision (``plan``).

The product tree evaluates D(z) = prod_j (z - mu_j) and the numerators in the monomial
basis by transforms; in balls a value there carries an error of about 2^-p ||D||_1 times
the weights, while |D(z_k)| can be tiny where poles crowd the circle, so the run loses about

    log2(||D||_1 / |D(z_k)|) + log2(sensitivity of H to the sums at z_k)

bits.  ``tree_loss_bits`` estimates the largest loss in float64 (||D||_1 by
prod(1 + |mu_j|), the sums directly) over a subgrid of at most ``SAMPLE`` roots and the
three roots nearest each pole; measured on LegS, LagT and LegT (N = 8..128, L = 1024 and
16384) it is within a few bits of the loss the ball run shows, LegT excepted (up to 25
bits below: ``GUARD_BITS`` covers it, less the 8 bits the first pass's final transform
may round away, ``ball_run.FIRST_PASS_DFT_SPARE``, and a run that falls short is simply
run again higher).  The estimate only steers the first precision: the run's own radii decide
acceptance (``ball_run.ball_filter``).

The cost of each route is a model fitted to measured passes of this code
(``benchmarks/ball_routes.py``): seconds as a function of N, the grid size M, the number
of Cauchy sums and each route's precision (the tree's from the estimate, the others'
64 + log2(1/eps)).  On the measured grid it picks the faster route in every case; the
tree wins unless its loss is thousands of bits (e.g. LagT N = 512, L = 1024).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
from flint import acb, arb

from ..algorithms.s4.bilinear_map import NUMBERS, beta as beta_of, gain as gain_of, pole, rate, shift
from ..arith import exact_parts

#: roots sampled for the minimum of log2|D| (besides the three nearest each pole)
SAMPLE = 1024
#: bits added to the estimated need
GUARD_BITS = 40
#: the cost model's constants (seconds; r = 1, i.e. 4 Cauchy sums), fitted by relative least
#: squares to single passes of ``ball_filter`` measured on 2 shared cores (LegS N = 8..1024
#: and LagT N = 64..512, L = 1024, 4096, 16384, eps = 1e-30 and 1e-60; median error about 20%)
TREE_ROOT = 9.8e-6    # per root
TREE_DFT = 4.3e-7     # per root, per log2 M, per 64 bits
TREE_POLY = 1.2e-7    # per N log2^2 N, per (64 bits)^1.5
FAST_ROOT = 5.3e-5    # per root, per 64 bits
FAST_POLE = 2.9e-5    # per N sqrt(M), per 64 bits
DIRECT_TERM = 1.85e-5  # per N M


def _complex(x: Any) -> complex:
    """A number or ball as a complex float (a ball by its midpoint)."""
    if isinstance(x, (float, complex, int, np.number)) and not isinstance(x, bool):
        return complex(x)
    if isinstance(x, (acb, arb)):
        return complex(acb(x).mid())
    re, im = exact_parts(x)
    return complex(float(re), float(im))


def _column(v: Any) -> np.ndarray:
    return np.array([_complex(x) for x in v], dtype=np.complex128)


def _sample(poles: np.ndarray, M: int) -> np.ndarray:
    """Root indices: a subgrid of at most SAMPLE roots and the three nearest each pole."""
    idx = set(range(0, M, max(1, M // SAMPLE)))
    if len(poles):
        k0 = np.round(-np.angle(poles) * M / (2 * math.pi)).astype(np.int64)
        for e in (-1, 0, 1):
            idx.update(((k0 + e) % M).tolist())
    idx.discard(M // 2 if M >= 2 else -1)  # the root -1 takes no Cauchy sums' values
    return np.array(sorted(idx), dtype=np.int64)


def tree_loss_bits(model, step: Any, M: int, c_tilde: Any = None, exceptional: list[int] | None = None) -> float:
    """The bits the ball filter on the product tree is expected to lose (module
    docstring), at the sampled roots: the transforms' loss log2(||D||_1 / |D(z_k)|)
    (||D||_1 <= prod(1 + |mu_j|)) times the first-order sensitivity of H to the blocks,
    each block's error taken as (A_wt + |S|) for its weights.  inf when a pole is
    (numerically) on the grid or W (numerically) singular at a sampled root."""
    a = rate(NUMBERS, _complex(step).real)
    lam = _column(model.Lambda)
    keep = np.ones(len(lam), dtype=bool)
    if exceptional:
        keep[list(exceptional)] = False
    keep &= np.abs(shift(NUMBERS, a, lam)) > 0
    shifted = shift(NUMBERS, a, lam[keep])
    mu, gain = pole(NUMBERS, a, lam[keep], shifted), gain_of(NUMBERS, shifted)
    if len(mu) == 0:
        return 0.0
    r = model.r
    left = [_column(c_tilde if c_tilde is not None else model.C)[keep]] + [_column(c)[keep] for c in zip(*model.Q)]
    right = [_column(model.B)[keep]] + [_column(c)[keep] for c in zip(*model.P)]
    k = _sample(mu, M)
    z = np.exp(-2j * math.pi * k / M)
    diff = z[:, None] - mu[None, :]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        log_d = 0.5 * np.log2(diff.real ** 2 + diff.imag ** 2).sum(axis=1)
        if not np.all(np.isfinite(log_d)):
            return math.inf
        cinv = 1.0 / diff
        S, A = {}, {}
        for i, u in enumerate(left):
            for c, v in enumerate(right):
                w = gain * np.conj(u) * v
                S[i, c], A[i, c] = cinv @ w, float(np.abs(w).sum())
        err = {key: A[key] + np.abs(val) for key, val in S.items()}  # a block's error, in units
        beta = beta_of(NUMBERS, z)
        if r:
            T = np.stack([np.stack([S[i + 1, c + 1] for c in range(r)], -1) for i in range(r)], -2)
            W = np.eye(r)[None] + beta[:, None, None] * T
            try:
                Winv = np.linalg.inv(W)
            except np.linalg.LinAlgError:
                return math.inf
            u = np.stack([S[0, c + 1] for c in range(r)], -1)
            v = np.stack([S[i + 1, 0] for i in range(r)], -1)
            uW, Wv = np.einsum("ki,kic->kc", u, Winv), np.einsum("kic,kc->ki", Winv, v)
            fac = err[0, 0].copy()
            for i in range(r):
                fac += np.abs(beta * Wv[:, i]) * err[0, i + 1] + np.abs(beta * uW[:, i]) * err[i + 1, 0]
                for c in range(r):
                    fac += np.abs(beta ** 2 * uW[:, i] * Wv[:, c]) * err[i + 1, c + 1]
        else:
            fac = err[0, 0]
        loss = float(np.log2(1 + np.abs(mu)).sum()) - log_d + np.log2(np.maximum(fac, 1e-300))
    top = float(np.max(loss))
    return top if math.isfinite(top) else math.inf


def eps_bits(eps: Fraction) -> float:
    """log2(1/eps)."""
    return math.log2(eps.denominator) - math.log2(eps.numerator)


# -- the cost model -----------------------------------------------------------------

def tree_seconds(N: int, M: int, sets: int, p: int) -> float:
    """Predicted seconds of a ball filter pass on the product tree at p bits: sets + 1
    transforms of length M and the per-root sweeps, and the tree itself."""
    q, lg, ln = p / 64, math.log2(max(M, 2)), math.log2(max(N, 2))
    return (sets + 1) / 5 * M * (TREE_ROOT + TREE_DFT * lg * q) + sets / 4 * TREE_POLY * N * ln * ln * q ** 1.5


def fast_seconds(N: int, M: int, sets: int, p: int) -> float:
    """Predicted seconds of a pass on the hierarchical arcs at p bits (orders ~ p)."""
    return sets / 4 * (p / 64) * (FAST_ROOT * M + FAST_POLE * N * math.sqrt(M))


def direct_seconds(N: int, M: int, sets: int, p: int) -> float:
    """Predicted seconds of a pass on the direct sums (a scalar loop over poles and roots)."""
    return sets / 4 * DIRECT_TERM * N * M


@dataclass
class Plan:
    """The ball run's Cauchy route, its first precision, the tree's estimated loss (None
    when not estimated) and the predicted seconds of each route considered."""

    route: str
    prec: int
    loss: float | None = None
    seconds: dict = field(default_factory=dict)


def plan(model, step: Any, M: int, eps: Fraction, c_tilde: Any, exceptional: list[int] | None,
         route: str = "auto", max_prec: int | None = None) -> Plan:
    """The route ("auto": the cheapest by the model) and the first precision: for the
    tree log2(1/eps) + its estimated loss + GUARD_BITS, for the other routes
    64 + log2(1/eps) (they lose little)."""
    need = eps_bits(eps)
    base = 64 + max(0, math.ceil(need) + 1)
    loss = None
    if route in ("auto", "tree"):
        try:
            loss = tree_loss_bits(model, step, M, c_tilde, exceptional)
        except (ValueError, ArithmeticError):  # inputs a float cannot hold: no estimate
            loss = None
    tree_prec = base if loss is None or not math.isfinite(loss) else max(53, math.ceil(need + loss + GUARD_BITS))
    if route == "tree":
        return Plan("tree", tree_prec, loss)
    if route != "auto":
        return Plan(route, base, loss)
    N, sets = len(model.Lambda), (model.r + 1) ** 2
    seconds = {"fast": fast_seconds(N, M, sets, base), "direct": direct_seconds(N, M, sets, base)}
    if max_prec is None or tree_prec <= max_prec:
        seconds["tree"] = tree_seconds(N, M, sets, tree_prec)
    best = min(seconds, key=seconds.get)
    return Plan(best, tree_prec if best == "tree" else base, loss, seconds)
