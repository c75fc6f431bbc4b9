"""HiPPO state matrices, their normal-plus-low-rank splits and certified DPLR forms
(spec: theory.md, the HiPPO theorem; proofs/hippo_nplr.md and proofs/unitary_dplr.md).

Generators (rows and columns indexed 0..N-1):

* LegS ``G_nk = -sqrt((2n+1)(2k+1))`` (n > k), ``-(n+1)`` (n = k), 0 (n < k); ``B_n = sqrt(2n+1)``;
* LegT ``G_nk = -(2n+1)(-1)^(n-k)/theta`` (n >= k), ``-(2n+1)/theta`` (n < k);
  ``B_n = (2n+1)(-1)^n/theta`` (the LMU's matrices);
* LagT ``G_nk = -1`` (n >= k), 0 (n < k); ``B_n = 1``.

Similarity ``x = S x~``: the identity for LegS and LagT, ``S0 = diag(sqrt(2n+1) (-1)^n)`` for
LegT, so ``G~ = S^-1 G S``, ``B~ = S^-1 B``, ``C~ = S* C``.  Split ``G~ = H - U V*`` with
``H = c I + K``, K real skew-symmetric (so H is normal):

* LegS ``H = G + p p^T``, ``p_n = sqrt(n + 1/2)``, ``c = -1/2``; U = V = p;
* LegT ``H = G~ + (1/(2 theta)) (s s^T + (s.e)(s.e)^T)``, ``s_n = sqrt(2n+1)``,
  ``e_n = (-1)^n``, ``c = 0``; ``U = [s, s.e]/(2 theta)``, ``V = [s, s.e]``;
* LagT ``H = G + (1/2) 1 1^T``, ``c = -1/2``; ``U = 1/2``, ``V = 1``.

A unitary W with ``H = W Lambda W*`` (W is the spec's unitary "V"; the letter V is the
split's) turns ``G~`` into the DPLR matrix ``Lambda - (W* U)(W* V)*`` in ``x' = W* x~``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from math import isqrt
from typing import Any

import numpy as np
from flint import acb, acb_mat, arb, ctx, fmpq

from ...arith import (BallField, Counting, ExactField, Float64Field, RoundedField, Tracing,
                   exact_parts)
from ...arith.ball import float_upper

from ..s4.dplr import DPLR, as_vector, dense_kernel, kernel_by_powers, nplr_to_dplr  # noqa: F401 (re-export)
from ..result import Result

KINDS = ("legs", "legt", "lagt")


# -- square roots of rationals, per field ---------------------------------------

def _exact_rational_sqrt(q: Fraction) -> Fraction | None:
    """sqrt(q) when it is rational (q >= 0 in lowest terms: both parts perfect squares)."""
    a, b = isqrt(q.numerator), isqrt(q.denominator)
    return Fraction(a, b) if a * a == q.numerator and b * b == q.denominator else None


def field_sqrt(F, q: Any):
    """sqrt(q) for a rational q >= 0, as an element of F.

    A rational square root is read exactly in every field.  Otherwise: BallField encloses
    it at the field's precision; Float64Field rounds ``math.sqrt``; RoundedField supplies it
    with absolute error below u; Counting and Tracing take it from their base field (a
    supplied input); ExactField cannot hold it and raises ValueError.

    >>> from s4cert.arith import ExactField
    >>> F = ExactField(4)
    >>> F.to_fractions(field_sqrt(F, Fraction(9, 4)))
    (Fraction(3, 2), Fraction(0, 1))
    >>> F = BallField(64)
    >>> r = field_sqrt(F, 2)
    >>> F.mul(r, r).contains(2)
    True
    """
    re, im = exact_parts(q, "sqrt argument")
    if im != 0 or re < 0:
        raise ValueError(f"sqrt: expected a rational number >= 0, got {q!r}")
    exact = _exact_rational_sqrt(re)
    if exact is not None:
        return F.from_number(exact)
    if isinstance(F, (Counting, Tracing)):
        return F.from_number(field_sqrt(F.base, re))
    if isinstance(F, BallField):
        with ctx.workprec(F.prec):
            return acb(arb(fmpq(re.numerator, re.denominator)).sqrt())
    if isinstance(F, Float64Field):
        return complex(math.sqrt(re))
    if isinstance(F, RoundedField):
        # a = floor(sqrt(q) 2^m), m = k + 2: error < 2^-(k+2); rounding to the 2^-k grid
        # adds at most 2^-(k+1); the total stays below u = 2^-k
        m = F.k + 2
        a = isqrt((re.numerator << (2 * m)) // re.denominator)
        return F.from_number(Fraction(a, 1 << m))
    if isinstance(F, ExactField):
        raise ValueError(f"sqrt({re}) is irrational and {F!r} cannot hold it exactly; "
                         "use BallField (or Float64Field) for this HiPPO matrix")
    raise ValueError(f"no square root is available in {F!r}")


# -- input checks ------------------------------------------------------------------

def _check_N(N: Any) -> int:
    if not isinstance(N, (int, np.integer)) or isinstance(N, (bool, np.bool_)) or N < 1:
        raise ValueError(f"N must be an integer >= 1, got {N!r}")
    return int(N)


def _check_theta(theta: Any) -> Fraction:
    """theta as an exact positive rational (a float is its exact binary value)."""
    if theta is None:
        raise ValueError("LegT needs a window length theta > 0")
    re, im = exact_parts(theta, "theta")
    if im != 0 or re <= 0:
        raise ValueError(f"theta must be a real number > 0, got {theta!r}")
    return re


def _check_kind(kind: Any, theta: Any) -> tuple[str, Fraction | None]:
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    if kind == "legt":
        return kind, _check_theta(theta)
    if theta is not None:
        raise ValueError(f"theta applies to LegT only, got theta={theta!r} for {kind!r}")
    return kind, None


def _check_C(C: Any, N: int) -> list:
    if C is None:
        return [1] * N
    c = as_vector(C, "C")
    if len(c) != N:
        raise ValueError(f"C: expected {N} entries (N = {N}), got {len(c)}")
    return c


# -- generators --------------------------------------------------------------------

def legs(F, N: int) -> tuple[list[list], list]:
    """The LegS generator ``G^S`` and input ``B_n = sqrt(2n+1)`` over F.

    >>> F = BallField(64)
    >>> G, B = legs(F, 2)
    >>> F.mul(G[1][0], G[1][0]).contains(3), F.mul(B[1], B[1]).contains(3)
    (True, True)
    """
    N = _check_N(N)
    G = [[F.neg(field_sqrt(F, (2 * n + 1) * (2 * k + 1))) if n > k
          else F.from_number(-(n + 1)) if n == k else F.zero() for k in range(N)] for n in range(N)]
    return G, [field_sqrt(F, 2 * n + 1) for n in range(N)]


def legt(F, N: int, theta: Any) -> tuple[list[list], list]:
    """The LegT (LMU) generator ``G^T`` and input ``B_n = (2n+1)(-1)^n/theta`` over F;
    exact for a rational theta.

    >>> F = ExactField(4)
    >>> G, B = legt(F, 2, 1)
    >>> [[F.to_fractions(x)[0] for x in row] for row in G]
    [[Fraction(-1, 1), Fraction(-1, 1)], [Fraction(3, 1), Fraction(-3, 1)]]
    """
    N, th = _check_N(N), _check_theta(theta)
    sign = lambda m: 1 if m % 2 == 0 else -1
    G = [[F.from_number(Fraction(-(2 * n + 1) * (sign(n - k) if n >= k else 1)) / th)
          for k in range(N)] for n in range(N)]
    return G, [F.from_number(Fraction((2 * n + 1) * sign(n)) / th) for n in range(N)]


def lagt(F, N: int) -> tuple[list[list], list]:
    """The LagT generator ``G^L`` (-1 on and below the diagonal) and input ``B = 1``.

    >>> F = ExactField(4)
    >>> G, B = lagt(F, 2)
    >>> [[F.to_fractions(x)[0] for x in row] for row in G]
    [[Fraction(-1, 1), Fraction(0, 1)], [Fraction(-1, 1), Fraction(-1, 1)]]
    """
    N = _check_N(N)
    G = [[F.from_number(-1) if n >= k else F.zero() for k in range(N)] for n in range(N)]
    return G, [F.from_number(1) for _ in range(N)]


def generator(F, kind: str, N: int, theta: Any = None) -> tuple[list[list], list]:
    """(G, B) of the named HiPPO kind: ``"legs"``, ``"legt"`` (needs theta) or ``"lagt"``."""
    kind, th = _check_kind(kind, theta)
    if kind == "legs":
        return legs(F, N)
    if kind == "legt":
        return legt(F, N, th)
    return lagt(F, N)


def similarity(F, kind: str, N: int) -> list:
    """The diagonal of the state change S (x = S x~): ones for LegS and LagT,
    ``sqrt(2n+1) (-1)^n`` for LegT."""
    N = _check_N(N)
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    if kind != "legt":
        return [F.one() for _ in range(N)]
    return [field_sqrt(F, 2 * n + 1) if n % 2 == 0 else F.neg(field_sqrt(F, 2 * n + 1))
            for n in range(N)]


# -- the normal-plus-low-rank split ---------------------------------------------------

def _shift(kind: str) -> Fraction:
    """c in H = c I + K."""
    return Fraction(0) if kind == "legt" else Fraction(-1, 2)


def _skew(kind: str, n: int, k: int, theta: Fraction | None) -> tuple[Fraction, int]:
    """(kappa, w) with ``K_nk = kappa sqrt(w)`` (proofs/hippo_nplr.md)."""
    sgn = -1 if n > k else 1 if n < k else 0
    if kind == "lagt":
        return Fraction(sgn, 2), 1
    w = (2 * n + 1) * (2 * k + 1)
    if kind == "legs":
        return Fraction(sgn, 2), w
    return (Fraction(sgn) / theta if (n + k) % 2 else Fraction(0)), w


@dataclass
class NPLRSplit:
    """``G = H - U V*`` in the similarity's coordinates.

    ``H`` (N x N, normal: ``H = shift I + skew``), ``U``, ``V`` (N x rank), ``G`` = S^-1 G S
    and ``B`` = S^-1 B (the transformed generator and input), ``S`` the diagonal of the
    state change (``C~ = S* C``).  All entries are elements of the field used.
    """

    kind: str
    theta: Fraction | None
    H: list[list]
    U: list[list]
    V: list[list]
    G: list[list]
    B: list
    S: list
    shift: Fraction

    @property
    def N(self) -> int:
        return len(self.H)

    @property
    def rank(self) -> int:
        """The number of columns of U and V, a bound on rank(U V*)."""
        return len(self.U[0])


def nplr(F, kind: str, N: int, theta: Any = None) -> NPLRSplit:
    """The split of the spec's HiPPO theorem, over F.

    Entries are exact in ExactField where they are rational (LagT; N = 1); an irrational
    square root there raises ValueError.

    >>> F = ExactField(4)
    >>> sp = nplr(F, "lagt", 3)
    >>> [[F.to_fractions(x)[0] for x in row] for row in sp.H][1]
    [Fraction(-1, 2), Fraction(-1, 2), Fraction(1, 2)]
    >>> sp.rank
    1
    """
    kind, th = _check_kind(kind, theta)
    N = _check_N(N)
    G, B = generator(F, kind, N, th)
    S = similarity(F, kind, N)
    if kind == "legt":
        G = [[F.div(F.mul(G[n][k], S[k]), S[n]) for k in range(N)] for n in range(N)]
        B = [F.div(b, s) for b, s in zip(B, S)]
    c = _shift(kind)
    H = [[None] * N for _ in range(N)]
    for n in range(N):
        for k in range(N):
            if n == k:
                H[n][k] = F.from_number(c)
                continue
            kappa, w = _skew(kind, n, k, th)
            H[n][k] = F.zero() if kappa == 0 else F.mul(F.from_number(kappa), field_sqrt(F, w))
    if kind == "legs":
        p = [field_sqrt(F, Fraction(2 * n + 1, 2)) for n in range(N)]
        U = V = [[x] for x in p]
    elif kind == "lagt":
        U = [[F.from_number(Fraction(1, 2))] for _ in range(N)]
        V = [[F.one()] for _ in range(N)]
    else:
        two_theta = F.from_number(2 * th)
        s = [field_sqrt(F, 2 * n + 1) for n in range(N)]
        se = [x if n % 2 == 0 else F.neg(x) for n, x in enumerate(s)]
        V = [[a, b] for a, b in zip(s, se)]
        U = [[F.div(a, two_theta), F.div(b, two_theta)] for a, b in V]
    return NPLRSplit(kind, th, H, U, V, G, B, S, c)


# -- dense kernels (the reference for the original system) ----------------------------

def hippo_kernel(F, kind: str, N: int, step: Any, L: int, theta: Any = None, C: Any = None) -> Result:
    """The kernel of the original HiPPO system (G, B, C) with output ``y = C* x``;
    C defaults to the all-ones vector.  Exact in ExactField for LagT and rational-theta LegT."""
    G, B = generator(F, kind, N, theta)
    return dense_kernel(F, G, B, _check_C(C, _check_N(N)), step, L)


# -- certified unitary diagonalization and the DPLR model ------------------------------

def _to_acb_rows(H: list[list], prec: int) -> list[list]:
    F = BallField(prec)
    return [[F.from_number(x) for x in row] for row in H]


def _tighten(E: list, c: Fraction) -> list:
    """Use Re(lambda) = c (H = c I + real skew): keep only the imaginary part of each ball;
    a ball whose mirror image meets no other ball holds a self-conjugate, hence real,
    eigenvalue, which is then exactly c (proofs/unitary_dplr.md)."""
    re = arb(fmpq(c.numerator, c.denominator))
    im = [e.imag for e in E]
    out = []
    for i, y in enumerate(im):
        mirror = -y
        self_conj = mirror.overlaps(y) and not any(mirror.overlaps(z) for j, z in enumerate(im) if j != i)
        out.append(acb(re) if self_conj else acb(re, y))
    return out


def unitary_diagonalization(H: list[list], prec: int = 128, shift: Fraction | None = None,
                            algorithm: str | None = None) -> tuple[list, list[list]]:
    """Certified ``H = W diag(Lambda) W*`` with W unitary, for a normal H with simple
    eigenvalues (entries: balls or exact numbers).  Returns balls (Lambda, W rows): some
    unitary W and the true eigenvalues lie in them.  ``shift = c`` states that
    ``H = c I + (real skew-symmetric)``; the real parts are then set exactly to c.
    ``algorithm`` is passed to ``acb_mat.eig``: None (van der Hoeven-Mourrain, O(N^3)) or
    ``"rump"`` (O(N^4), tighter balls).

    Raises ValueError when the eigenvalues cannot be isolated or the checks
    ``W* W ∋ I``, ``W Lambda W* ∋ H``, ``H W - W Lambda ∋ 0`` fail: raise ``prec``.

    >>> lam, W = unitary_diagonalization([[0, 1], [-1, 0]], 64, shift=Fraction(0))
    >>> sorted(float(x.imag.mid()) for x in lam)
    [-1.0, 1.0]
    """
    if not isinstance(prec, int) or isinstance(prec, bool) or prec < 2:
        raise ValueError(f"prec must be an integer >= 2 bits, got {prec!r}")
    N = len(H)
    if N < 1 or any(len(row) != N for row in H):
        raise ValueError("H must be a non-empty square matrix")
    if algorithm not in (None, "rump", "vdhoeven_mourrain"):
        raise ValueError(f"algorithm must be None, 'rump' or 'vdhoeven_mourrain', got {algorithm!r}")
    advice = f"raise prec (now {prec} bits)"
    with ctx.workprec(prec):
        Hm = acb_mat(_to_acb_rows(H, prec))
        try:
            E, R = Hm.eig(right=True, algorithm=algorithm)
        except ValueError:
            raise ValueError(f"the eigen-solver could not isolate the {N} eigenvalues of H at "
                             f"{prec} bits: {advice}") from None
        if shift is not None:
            E = _tighten(list(E), shift)
        order = sorted(range(N), key=lambda i: (float(E[i].imag.mid()), float(E[i].real.mid())))
        W = acb_mat(N, N)
        for col, i in enumerate(order):
            sq = (R[j, i].real * R[j, i].real + R[j, i].imag * R[j, i].imag for j in range(N))
            norm = sum(sq, arb(0)).sqrt()
            for j in range(N):
                W[j, col] = R[j, i] / norm
        lam = [E[i] for i in order]
        if not all(W[i, j].is_finite() for i in range(N) for j in range(N)):
            raise ValueError(f"an eigenvector enclosure could not be normalized at {prec} bits: {advice}")
        D = acb_mat(N, N)
        for i in range(N):
            D[i, i] = lam[i]
        Ws = W.conjugate().transpose()
        if not (Ws * W).contains(acb_mat(N, N, [acb(int(i == j)) for i in range(N) for j in range(N)])):
            raise ValueError(f"W* W does not enclose I at {prec} bits: H is not normal, "
                             f"or the precision is too low: {advice}")
        if not (W * D * Ws).contains(Hm) or not (Hm * W - W * D).contains(acb_mat(N, N)):
            raise ValueError(f"W Lambda W* does not enclose H at {prec} bits: {advice}")
        return lam, [[W[i, j] for j in range(N)] for i in range(N)]


def dplr(kind: str, N: int, theta: Any = None, prec: int = 128, C: Any = None,
         algorithm: str | None = None) -> DPLR:
    """A certified DPLR model of the HiPPO system: balls enclosing ``Lambda``,
    ``P = W* U``, ``Q = W* V``, ``B' = W* S^-1 B``, ``C' = W* S* C`` for a unitary W with
    ``H = W Lambda W*``.  Its kernel is the kernel of (G, B, C).  ``C`` is the output vector
    in the original coordinates (``y = C* x``); None means all ones.  ``algorithm``: see
    :func:`unitary_diagonalization`.  ValueError (raise prec) when the eigenvalues of H
    cannot be isolated at ``prec`` bits.

    >>> m = dplr("legs", 3)
    >>> (m.N, m.r), [float(l.real.mid()) for l in m.Lambda]
    ((3, 1), [-0.5, -0.5, -0.5])
    """
    kind, th = _check_kind(kind, theta)
    N = _check_N(N)
    F = BallField(prec)
    sp = nplr(F, kind, N, th)
    Ct = [F.mul(F.conj(s), F.from_number(c)) for s, c in zip(sp.S, _check_C(C, N))]
    lam, W = unitary_diagonalization(sp.H, prec, shift=sp.shift, algorithm=algorithm)
    return nplr_to_dplr(F, W, lam, sp.U, sp.B, Ct, Q=sp.V)


# -- the float64 model and its distance to the certified one ---------------------------

def dplr_float64(kind: str, N: int, theta: Any = None, C: Any = None) -> DPLR:
    """The usual float64 DPLR model (uncertified): ``numpy.linalg.eigh`` of the Hermitian
    ``-i K`` (K = H - c I the skew part) gives ``K = W diag(i w) W*``, ``Lambda = c + i w``.
    Its entries are Python complex numbers (exact binary rationals).

    >>> m = dplr_float64("lagt", 2)
    >>> [l.real for l in m.Lambda]
    [-0.5, -0.5]
    """
    kind, th = _check_kind(kind, theta)
    N = _check_N(N)
    F = Float64Field()
    sp = nplr(F, kind, N, th)
    c = float(sp.shift)
    K = np.array(sp.H, dtype=np.complex128) - c * np.eye(N)  # exactly skew (see _skew)
    w, W = np.linalg.eigh(-1j * K)
    Ws = W.conj().T
    Ct = np.array([s.conjugate() * F.from_number(x) for s, x in zip(sp.S, _check_C(C, N))])
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


def _upper_abs(x: acb) -> float:
    with ctx.workprec(64):
        return float_upper(abs(x))


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
    """How far :func:`dplr_float64` is from the certified :func:`dplr` (see
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
    kernel = max(_upper_abs(F.sub(a, b)) for a, b in zip(Kf, Kc))
    kernel64 = max(_upper_abs(F.sub(F.from_number(a), b)) for a, b in zip(K64, Kc))
    scale = max(_upper_abs(b) for b in Kc)
    pi = _pairing(flt.Lambda, cert.Lambda)
    if pi is None:
        eig = wts = math.inf
    else:
        eig = max(_upper_abs(F.sub(F.from_number(l), cert.Lambda[j])) for l, j in zip(flt.Lambda, pi))
        wts = max(_upper_abs(F.sub(a, b)) for i, j in enumerate(pi)
                  for a, b in zip(_invariants(F, flt, i), _invariants(F, cert, j)))
    return FloatModelDistance(kernel, kernel64, eig, wts, scale)
