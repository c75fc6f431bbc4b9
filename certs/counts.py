"""Measured operation and word counts of the exact procedures (Counting over float64).

The spec's complexity claims: the Cauchy product tree and the S4 filter take
O((n+M) log^2(n+M)) operations and O(n+M) words.  These functions run the real
procedures under :class:`arith.Counting` and report what ran: the counts a certified
kernel records (``kernel_counts``) and the scaling tables.
"""
from __future__ import annotations

import math
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


def count_filter(N: int, L: int, r: int = 1, step: float = 1.0, seed: int = 0) -> dict:
    """Counts of ``filter_kernel`` for a stable model of size N, length L, with C~
    supplied (the theorem counts the filter apart from forming C~); the summary of
    :class:`arith.Counting`, as for :func:`count_cauchy`."""
    g = np.random.default_rng(seed)
    a = 2.0 / step
    mu = _poles(N)
    lam = a * (1 - mu) / (1 + mu)  # so that the filter's poles are mu (Re lambda < 0)
    P = (g.standard_normal((N, r)) + 1j * g.standard_normal((N, r))) / math.sqrt(N)
    m = DPLR(lam, P, g.standard_normal(N), g.standard_normal(N))
    ct = [complex(v) for v in g.standard_normal(N)]
    C = Counting(Float64Field())
    C.reset()
    res = filter_kernel(C, m, step, L, c_tilde=ct)
    if not res.ok:
        raise RuntimeError(f"filter_kernel returned {res.status}")
    return C.summary()


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
        return {"measured": False, "reason": f"N + L > {COUNTS_AUTO_LIMIT}; ask for counts to measure them"}
    if not counts:
        return {"measured": False, "reason": "not asked for"}
    return measure_counts(model, step, L, exceptional, route, sum_eps)
