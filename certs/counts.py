"""Measured operation and word counts of the exact procedures (Counting over float64).

The spec's complexity claims: the Cauchy product tree and the S4 filter take
O((n+M) log^2(n+M)) operations and O(n+M) words.  These functions run the real
procedures under :class:`arith.Counting` and report what ran: the counts a certified
kernel records (``kernel_counts``) and the scaling tables.
"""
from __future__ import annotations

import math
from fractions import Fraction
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..algorithms.cauchy.tree import cauchy_on_roots
from ..algorithms.s4.dplr import DPLR
from ..algorithms.s4.filter import FILTER_VERSION, filter_kernel
from ..arith import Counting, Float64Field

#: counts are measured by default up to this N + L (the counted run is generic Python)
COUNTS_AUTO_LIMIT = 4096


def _poles(n: int) -> np.ndarray:
    """n (a power of two) poles evenly spread on the circle of radius 1.1, half a step
    off the grid's directions, in bit-reversed order: every subtree of the product tree
    then holds a coset, its polynomial is z^m - c, well conditioned in float64, and the
    counted run takes the exact-arithmetic route (no spurious zero tests)."""
    q = n.bit_length() - 1
    order = [int(format(j, f"0{q}b")[::-1], 2) if q else 0 for j in range(n)]
    return 1.1 * np.exp(1j * np.pi * (2 * np.array(order) + 1) / n)


def count_cauchy(n: int, M: int, seed: int = 0) -> dict:
    """Counts of ``cauchy_on_roots`` with n poles on the M-point grid: the summary of
    :class:`arith.Counting` (``ops``, operations by kind, word reads/writes,
    ``peak_words``)."""
    g = np.random.default_rng(seed)
    C = Counting(Float64Field())
    poles = [C.from_number(complex(v)) for v in _poles(n)]
    weights = [C.from_number(complex(v)) for v in g.standard_normal(n)]
    C.reset()
    res = cauchy_on_roots(C, poles, weights, M)
    if not res.ok:
        raise RuntimeError(f"cauchy_on_roots returned {res.status}")
    return C.summary()


def count_model(N: int, r: int = 1, step: float = 1.0, seed: int = 0) -> tuple[DPLR, float, list]:
    """(model, step, C~) of the counts: a stable model of size N and rank r whose filter
    poles are :func:`_poles` (N a power of two), and a random supplied C~."""
    g = np.random.default_rng(seed)
    a = 2.0 / step
    mu = _poles(N)
    lam = a * (1 - mu) / (1 + mu)  # so that the filter's poles are mu (Re lambda < 0)
    P = (g.standard_normal((N, r)) + 1j * g.standard_normal((N, r))) / math.sqrt(N)
    m = DPLR(lam, P, g.standard_normal(N), g.standard_normal(N))
    return m, step, [complex(v) for v in g.standard_normal(N)]


def count_filter(N: int, L: int, r: int = 1, step: float = 1.0, seed: int = 0) -> dict:
    """Counts of ``filter_kernel`` for the model of :func:`count_model`, length L, with C~
    supplied (the theorem counts the filter apart from forming C~); the summary of
    :class:`arith.Counting`, as for :func:`count_cauchy`."""
    m, step, ct = count_model(N, r, step, seed)
    return count_run(m, step, L, ct, "tree", None)[0]


def count_run(model: DPLR, step: Any, L: int, c_tilde: list, cauchy: str, sum_eps: float | None,
              exceptional: list[int] | None = None) -> tuple[dict, dict]:
    """(Counting's summary, the route's info) of ``filter_kernel`` over
    Counting(Float64Field()) on the Cauchy route ``cauchy`` (for "fast", each sum to
    relative accuracy ``sum_eps``).  RuntimeError when the run does not return ok."""
    C = Counting(Float64Field())
    C.reset()
    res = filter_kernel(C, model, step, L, c_tilde=c_tilde, exceptional=exceptional, cauchy=cauchy,
                        cauchy_eps=sum_eps if cauchy == "fast" else None)
    if not res.ok:
        raise RuntimeError(f"filter_kernel returned {res.status}")
    return C.summary(), res.info["cauchy"]


#: the kernel-level keys of a row of :func:`count_rows` (the ``s4cert count --json`` rows)
ROW_KEYS = ("N", "L", "eps", "cauchy", "rank", "kappa", "ops", "add", "mul", "div", "zero_test", "conj",
            "word_reads", "word_writes", "peak_words", "norm_exact", "norm_eps", "norm_words")
#: the arcs' per-sum accuracy is eps / kappa, not below this (the ball run's floor)
SUM_EPS_FLOOR = 1e-300


def model_kappa(model: DPLR, step: Any, L: int, c_tilde: list, max_prec: int = 1 << 12) -> float:
    """kappa = 64 r w^2 (b+1)^2 s of the model on the grid of L, certified from a ball run
    of the filter (``constants.filter_constants``).  RuntimeError if the run fails."""
    from flint import ctx

    from . import routing
    from .ball_run import ball_filter
    from .constants import filter_constants

    exceptional = routing.exact_partition(model, step) if routing.step_is_exact(step) else None
    exact = routing.exact_inputs(model, step, c_tilde)
    run = ball_filter(model, step, L, Fraction(1, 2**20), c_tilde, exceptional, exact, max_prec,
                      lambda msg: None, "auto")
    if run.status != "ok":
        raise RuntimeError(f"kappa: the ball run stopped: {run.status} {run.reason}")
    with ctx.workprec(run.F.prec):
        return float(filter_constants(run.F, run.result.info, model.r)["kappa"])


def count_rows(model: DPLR, step: Any, L: int, c_tilde: list, eps_list: list[float], cauchy: str,
               kappa: float) -> list[dict]:
    """One row per eps: the filter counted as it runs on route ``cauchy`` (the arcs with
    each sum to eps/kappa; the exact routes ignore eps), with :data:`ROW_KEYS` and, for
    the arcs, ``orders`` (their measured truncation orders p, p0 and the per-sum
    accuracy)."""
    from .count_fit import norm_eps, norm_exact, norm_words

    if cauchy not in ("tree", "fast", "direct"):
        raise ValueError(f"cauchy must be tree, fast or direct, got {cauchy!r}")
    rows = []
    size = model.N + L
    for eps in eps_list:
        if not 0 < eps <= 0.5:
            raise ValueError(f"eps must lie in (0, 1/2], got {eps!r}")
        sum_eps = max(eps / kappa, SUM_EPS_FLOOR) if cauchy == "fast" else None
        c, info = count_run(model, step, L, c_tilde, cauchy, sum_eps)
        row = {"N": model.N, "L": L, "eps": eps, "cauchy": cauchy, "rank": model.r, "kappa": kappa,
               **{k: c[k] for k in ("ops", "add", "mul", "div", "zero_test", "conj", "word_reads",
                                    "word_writes", "peak_words")},
               "norm_exact": norm_exact(c["ops"], size), "norm_eps": norm_eps(c["ops"], size, kappa, eps),
               "norm_words": norm_words(c["peak_words"], size)}
        if cauchy == "fast":
            row["orders"] = {"p": info["fast"]["p"], "p0": info["fast"]["p0"], "sum_eps": sum_eps}
        rows.append(row)
    return rows


@dataclass
class CountRow:
    size: int          # n + M, or N + L
    ops: int
    peak_words: int

    @property
    def ops_ratio(self) -> float:
        """ops / (size log2^2 size)"""
        return self.ops / (self.size * math.log2(self.size) ** 2)

    @property
    def words_ratio(self) -> float:
        """peak words / size"""
        return self.peak_words / self.size


def scaling_table(kind: str, sizes: list[int], seed: int = 0) -> list[CountRow]:
    """Counts at each total size s, split evenly: n = M = s/2 (``"cauchy"``) or
    N = L = s/2 (``"filter"``)."""
    rows = []
    for s in sizes:
        if kind == "cauchy":
            c = count_cauchy(s // 2, s // 2, seed)
        elif kind == "filter":
            c = count_filter(s // 2, s // 2, seed=seed)
        else:
            raise ValueError(f"kind must be 'cauchy' or 'filter', got {kind!r}")
        rows.append(CountRow(s, c["ops"], c["peak_words"]))
    return rows


# -- the counts of a certified kernel ---------------------------------------------------

def measure_counts(model: DPLR, step: Any, L: int, exceptional: list[int], route: str = "tree",
                   sum_eps: float | None = None) -> dict:
    """Operations by kind, word reads/writes and peak words of the filter (C~ supplied),
    measured by running the generic procedure under Counting(Float64Field()) on the
    same Cauchy route (with the same per-sum accuracy for the arcs).  Keys: ``measured``
    (bool); when True, Counting's summary (``ops``, ``peak_words``, ...), ``route`` and
    ``field``; when False, ``reason``."""
    C = Counting(Float64Field())
    ct = [1.0] * model.N
    C.reset()
    try:
        res = filter_kernel(C, model, step, L, c_tilde=ct, exceptional=exceptional, cauchy=route, cauchy_eps=sum_eps)
    except ArithmeticError as e:  # float64 cannot follow the exact route (e.g. a + lambda_j rounds to 0)
        return {"measured": False, "reason": f"float64 counting run failed: {type(e).__name__}"}
    if not res.ok:
        return {"measured": False, "reason": f"float64 counting run returned {res.status}"}
    return {"measured": True, **C.summary(), "route": route, "field": "float64 (generic procedure)",
            "filter_version": FILTER_VERSION}


def kernel_counts(model: DPLR, step: Any, L: int, exceptional: list[int], counts: Any, route: str,
                  sum_eps: float | None) -> dict:
    """The counts a certified kernel records: measured when ``counts`` is true, or when
    it is "auto" and N + L <= COUNTS_AUTO_LIMIT; else ``{"measured": False, "reason"}``."""
    if counts == "auto" and model.N + L > COUNTS_AUTO_LIMIT:
        return {"measured": False, "reason": f"N + L > {COUNTS_AUTO_LIMIT}; counts=True (--counts) measures them"}
    if not counts:
        return {"measured": False, "reason": "not asked for"}
    return measure_counts(model, step, L, exceptional, route, sum_eps)
