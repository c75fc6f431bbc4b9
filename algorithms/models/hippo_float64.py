"""The usual float64 DPLR model of a HiPPO system and its certified distance to the
certified model (proofs/unitary_dplr.md).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...arith import BallField, Float64Field
from ..s4.dplr import DPLR
from ..s4.kernels import kernel_by_powers
from .hippo import check_C, check_kind, check_N
from .hippo_dplr import dplr
from .hippo_nplr import nplr


def dplr_float64(kind: str, N: int, theta: Any = None, C: Any = None) -> DPLR:
    """The usual float64 DPLR model (uncertified): ``numpy.linalg.eigh`` of the Hermitian
    ``-i K`` (K = H - c I the skew part) gives ``K = W diag(i w) W*``, ``Lambda = c + i w``.
    Its entries are Python complex numbers (exact binary rationals).

    >>> m = dplr_float64("lagt", 2)
    >>> [l.real for l in m.Lambda]
    [-0.5, -0.5]
    """
    kind, th = check_kind(kind, theta)
    N = check_N(N)
    F = Float64Field()
    sp = nplr(F, kind, N, th)
    c = float(sp.shift)
    K = np.array(sp.H, dtype=np.complex128) - c * np.eye(N)  # exactly skew (see hippo_nplr._skew)
    w, W = np.linalg.eigh(-1j * K)
    Ws = W.conj().T
    Ct = np.array([s.conjugate() * F.from_number(x) for s, x in zip(sp.S, check_C(C, N))])
    P = Ws @ np.array(sp.U, dtype=np.complex128)
    Q = Ws @ np.array(sp.V, dtype=np.complex128)
    lam = [complex(c, x) for x in w]
    return DPLR(lam, P, (Ws @ np.array(sp.B)).tolist(), (Ws @ Ct).tolist(), Q=Q)


@dataclass
class FloatModelDistance:
    """Certified upper bounds (floats) comparing the float64 model with the true HiPPO system.

    * ``kernel``: ``max_j |K^f_j - K_j|``, K^f the exact kernel of the float model's numbers,
      K the true kernel (step, L as given);
    * ``kernel_float64``: the same for the kernel the float model gives when evaluated in
      float64 arithmetic (``kernel_by_powers`` in Float64Field): model and rounding error;
    * ``eigenvalues``: ``max_i |lambda^f_i - lambda_pi(i)|`` for the matching pi that pairs
      each float eigenvalue with the nearest certified one (a bound on the spectral
      bottleneck distance); inf when that pairing is not one-to-one;
    * ``weights``: under the same pairing, the largest distance between the
      phase-invariant products ``conj(C'_i) B'_i``, ``conj(C'_i) P_ia``, ``conj(Q_ia) B'_i``,
      ``conj(Q_ia) P_ib`` (the Cauchy weights that fix the kernel); inf without a pairing;
    * ``kernel_scale``: an upper bound on ``max_j |K_j|``, to read the others relatively.
    """

    kernel: float
    kernel_float64: float
    eigenvalues: float
    weights: float
    kernel_scale: float


def _invariants(F: BallField, m: DPLR, i: int) -> list:
    """The phase-invariant products of state i (see FloatModelDistance.weights)."""
    b, c = F.from_number(m.B[i]), F.from_number(m.C[i])
    P = [F.from_number(x) for x in m.P[i]]
    Q = [F.from_number(x) for x in m.Q[i]]
    out = [F.mul(F.conj(c), b)]
    out += [F.mul(F.conj(c), p) for p in P] + [F.mul(F.conj(q), b) for q in Q]
    out += [F.mul(F.conj(q), p) for q in Q for p in P]
    return out


def _pairing(float_lam: list, cert_lam: list) -> list[int] | None:
    """Nearest certified eigenvalue (by midpoint) for each float one, if one-to-one."""
    mids = [complex(x.mid()) for x in cert_lam]
    pi = [min(range(len(mids)), key=lambda j: abs(complex(l) - mids[j])) for l in float_lam]
    return pi if len(set(pi)) == len(pi) else None


def float_model_distance(kind: str, N: int, theta: Any = None, *, step: Any, L: int,
                         prec: int = 128, C: Any = None) -> FloatModelDistance:
    """How far :func:`dplr_float64` is from the certified :func:`~.hippo_dplr.dplr` (see
    :class:`FloatModelDistance`).  Eigenvector order and phases differ between the two,
    so only invariants are compared.

    >>> d = float_model_distance("lagt", 3, step=0.5, L=4)
    >>> d.kernel < 1e-12, d.eigenvalues < 1e-12
    (True, True)
    """
    cert = dplr(kind, N, theta, prec, C)
    flt = dplr_float64(kind, N, theta, C)
    F = BallField(prec)
    runs = [kernel_by_powers(F, cert, step, L), kernel_by_powers(F, flt, step, L),
            kernel_by_powers(Float64Field(), flt, step, L)]
    for r in runs:
        if not r.ok:
            raise ValueError(f"the kernel could not be formed (status {r.status}: {r.info}); "
                             "check step, or raise prec")
    Kc, Kf, K64 = (r.value for r in runs)
    kernel = max(F.abs_upper(F.sub(a, b)) for a, b in zip(Kf, Kc))
    kernel64 = max(F.abs_upper(F.sub(F.from_number(a), b)) for a, b in zip(K64, Kc))
    scale = max(F.abs_upper(b) for b in Kc)
    pi = _pairing(flt.Lambda, cert.Lambda)
    if pi is None:
        eig = wts = math.inf
    else:
        eig = max(F.abs_upper(F.sub(F.from_number(l), cert.Lambda[j])) for l, j in zip(flt.Lambda, pi))
        wts = max(F.abs_upper(F.sub(a, b)) for i, j in enumerate(pi)
                  for a, b in zip(_invariants(F, flt, i), _invariants(F, cert, j)))
    return FloatModelDistance(kernel, kernel64, eig, wts, scale)
