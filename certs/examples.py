"""Built-in example models."""
from __future__ import annotations

import numpy as np

from ..algorithms.s4.dplr import DPLR


def example_model(N: int = 8, r: int = 1, seed: int = 0) -> DPLR:
    """A random stable DPLR model with float64 entries (Re lambda_j < 0), taken as
    the exact binary numbers they are.

    >>> example_model(4).N
    4
    """
    if N < 1 or r < 1:
        raise ValueError(f"need N >= 1 and r >= 1, got N={N}, r={r}")
    g = np.random.default_rng(seed)
    lam = -0.5 - g.random(N) + 1j * np.pi * np.arange(N)
    P = (g.standard_normal((N, r)) + 1j * g.standard_normal((N, r))) / np.sqrt(2 * N)
    B = g.standard_normal(N) + 1j * g.standard_normal(N)
    C = g.standard_normal(N) + 1j * g.standard_normal(N)
    return DPLR(lam, P, B, C)
