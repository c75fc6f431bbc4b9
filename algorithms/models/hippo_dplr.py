"""The certified DPLR model of a HiPPO system (proofs/unitary_dplr.md).

A unitary W with ``H = W Lambda W*`` (W is the spec's unitary "V"; the letter V is the
split's, see :mod:`.hippo_nplr`) turns ``G~ = H - U V*`` into the DPLR matrix
``Lambda - (W* U)(W* V)*`` in ``x' = W* x~``.

Two certified routes (proofs/unitary_dplr.md, proofs/verified_eig.md):

* ``"verified"``: float64 ``eigh``, one double-double refinement step and an a-posteriori
  verification on double-double disks (:mod:`.hippo_verified_eig`), with the HiPPO skew
  part applied in O(N) per vector; it encloses only the O(N r) entries of the model, to
  about double-double accuracy, in O(N^3) float64 operations;
* ``"ball"``: ``acb_mat.eig`` (eigenvalue isolation with certified enclosures) at ``prec``
  bits, checked as ``acb_mat`` products, then the model in ball arithmetic.

``route="auto"`` takes the verified route when ``prec <= VERIFIED_MAX_PREC`` and falls back
to the ball route, for the whole matrix, where the verification fails (a cluster).
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np
from flint import acb, acb_mat, arb, ctx, fmpq

from ...arith import BallField
from ...arith.midrad import RangeError
from ..s4.dplr import DPLR, nplr_to_dplr
from .hippo import check_C, check_kind, check_N, field_sqrt, similarity
from .hippo_nplr import _low_rank, _shift, nplr
from .hippo_skew import StructuredSkew, dense_skew_of_balls
from .hippo_verified_eig import VerificationFailed, eigendecomposition, eigenvalue_balls, products

#: the verified route's enclosures do not depend on prec (triple-double verification; LegS
#: radii about 4e-38 at N = 64, 2e-31 at N = 256): ``route="auto"`` uses it up to this
#: precision, the one callers derive from an eps of 2^-48 by prec = 2 (64 + log2(1/eps)), and
#: the ball route above it
VERIFIED_MAX_PREC = 224
ROUTES = ("auto", "verified", "ball")
#: the verified route reads its inputs (square roots, U, V, B~, C~) as balls of at least
#: this many bits, well past triple-double accuracy
VERIFIED_INPUT_PREC = 256


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


def _check_args(H: list[list], prec: Any, algorithm: str | None) -> int:
    if not isinstance(prec, int) or isinstance(prec, bool) or prec < 2:
        raise ValueError(f"prec must be an integer >= 2 bits, got {prec!r}")
    N = len(H)
    if N < 1 or any(len(row) != N for row in H):
        raise ValueError("H must be a non-empty square matrix")
    if algorithm not in (None, "rump", "vdhoeven_mourrain"):
        raise ValueError(f"algorithm must be None, 'rump' or 'vdhoeven_mourrain', got {algorithm!r}")
    return N


def _normalized_columns(R: acb_mat, order: list[int]) -> acb_mat:
    """The eigenvector columns of R in the given order, each divided by its 2-norm."""
    N = R.nrows()
    W = acb_mat(N, N)
    for col, i in enumerate(order):
        sq = (R[j, i].real * R[j, i].real + R[j, i].imag * R[j, i].imag for j in range(N))
        norm = sum(sq, arb(0)).sqrt()
        for j in range(N):
            W[j, col] = R[j, i] / norm
    return W


def _verify(Hm: acb_mat, W: acb_mat, lam: list, prec: int, advice: str) -> None:
    """Raise ValueError unless ``W* W ∋ I``, ``W Lambda W* ∋ H`` and ``H W - W Lambda ∋ 0``."""
    N = Hm.nrows()
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
    N = _check_args(H, prec, algorithm)
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
        W = _normalized_columns(R, order)
        lam = [E[i] for i in order]
        _verify(Hm, W, lam, prec, advice)
        return lam, [[W[i, j] for j in range(N)] for i in range(N)]


def _check_route(route: str, algorithm: str | None) -> str:
    if route not in ROUTES:
        raise ValueError(f"route must be one of {ROUTES}, got {route!r}")
    if algorithm is not None and route == "verified":
        raise ValueError("algorithm applies to the ball route only")
    return route


def _uses_verified(route: str, prec: int, algorithm: str | None) -> bool:
    return route == "verified" or (route == "auto" and algorithm is None and prec <= VERIFIED_MAX_PREC)


def structured_skew(kind: str, N: int, theta: Fraction | None, prec: int) -> StructuredSkew:
    """The skew part K of the split's H (proofs/hippo_nplr.md) as ``kappa D (T o M) D``:
    LegS ``kappa = 1/2``, ``d_n = sqrt(2n+1)``; LegT ``kappa = 1/theta``, the same d, M the
    parity mask; LagT ``kappa = 1/2``, ``d = 1``; balls at ``prec`` bits."""
    F = BallField(prec)
    d = [F.one() for _ in range(N)] if kind == "lagt" else [field_sqrt(F, 2 * n + 1) for n in range(N)]
    kappa = F.from_number(Fraction(1) / theta if kind == "legt" else Fraction(1, 2))
    return StructuredSkew(d, kappa, kind == "legt")


def split_vectors(F, kind: str, N: int, theta: Fraction | None) -> tuple[list[list], list[list], list, list]:
    """(U, V, B~, S) of :func:`.hippo_nplr.nplr` without its N x N matrices: the same
    formulas (``B~ = S^-1 B``, B the generator's input)."""
    U, V = _low_rank(F, kind, N, theta)
    S = similarity(F, kind, N)
    if kind == "legs":
        B = [field_sqrt(F, 2 * n + 1) for n in range(N)]
    elif kind == "lagt":
        B = [F.from_number(1) for _ in range(N)]
    else:
        B = [F.div(F.from_number(Fraction((2 * n + 1) * (-1) ** n) / theta), s) for n, s in enumerate(S)]
    return U, V, B, S


def verified_model(op, shift: Fraction, U: list[list], V: list[list], B: list, Ct: list, prec: int) -> DPLR:
    """The DPLR model of ``G~ = (shift I + K) - U V*`` by the verified route (K the operator
    ``op``), or VerificationFailed: balls containing Lambda, ``P = W* U``, ``Q = W* V``,
    ``B' = W* B~``, ``C' = W* C~`` for one unitary W with ``H = W Lambda W*``."""
    v = eigendecomposition(op)
    r = len(U[0])
    cols = lambda M: [[row[a] for row in M] for a in range(r)]
    P = products(v, cols(U), prec)
    Q = P if V is U else products(v, cols(V), prec)
    Bp, Cp = products(v, [B, Ct], prec)
    rows = lambda Z: [[Z[a][i] for a in range(r)] for i in range(len(Bp))]
    return DPLR(eigenvalue_balls(v, shift, prec), rows(P), Bp, Cp, Q=rows(Q))


def split_model(H: list[list], shift: Fraction, U: list[list], V: list[list], B: list, Ct: list,
                prec: int = 128, route: str = "auto", algorithm: str | None = None,
                op=None) -> tuple[DPLR, str]:
    """The DPLR model of ``G~ = H - U V*`` for ``H = shift I + (real skew-symmetric)``
    (entries: balls or numbers; H may be None when ``op`` applies its skew part):
    (model, the route that made it).  See the module docstring for ``route``."""
    route = _check_route(route, algorithm)
    if _uses_verified(route, prec, algorithm):
        try:
            F = BallField(max(prec, VERIFIED_INPUT_PREC))
            if op is None:
                c = F.from_number(shift)
                op = dense_skew_of_balls([[F.from_number(x) if i != j else F.sub(F.from_number(x), c)
                                           for j, x in enumerate(row)] for i, row in enumerate(H)], F.prec)
            fm = F.from_number
            Ub = [[fm(x) for x in row] for row in U]
            Vb = Ub if V is U else [[fm(x) for x in row] for row in V]
            return verified_model(op, shift, Ub, Vb, [fm(x) for x in B], [fm(x) for x in Ct], F.prec), "verified"
        except (VerificationFailed, RangeError, np.linalg.LinAlgError) as why:
            if route == "verified":
                raise ValueError(f"the verified diagonalization failed: {why}; route='ball' encloses it "
                                 f"at a chosen precision") from None
    if H is None:
        raise ValueError("the ball route needs the matrix H")
    F = BallField(prec)
    lam, W = unitary_diagonalization(H, prec, shift=shift, algorithm=algorithm)
    return nplr_to_dplr(F, W, lam, U, B, Ct, Q=V), "ball"


def dplr_with_route(kind: str, N: int, theta: Any = None, prec: int = 128, C: Any = None,
                    algorithm: str | None = None, route: str = "auto") -> tuple[DPLR, str]:
    """:func:`dplr` and the route that made the model (``"verified"`` or ``"ball"``)."""
    kind, th = check_kind(kind, theta)
    N = check_N(N)
    route = _check_route(route, algorithm)
    if not isinstance(prec, int) or isinstance(prec, bool) or prec < 2:
        raise ValueError(f"prec must be an integer >= 2 bits, got {prec!r}")
    if _uses_verified(route, prec, algorithm):
        work = max(prec, VERIFIED_INPUT_PREC)
        F = BallField(work)
        U, V, B, S = split_vectors(F, kind, N, th)
        Ct = [F.mul(F.conj(s), F.from_number(c)) for s, c in zip(S, check_C(C, N))]
        try:
            return split_model(None, _shift(kind), U, V, B, Ct, work, "verified",
                               op=structured_skew(kind, N, th, work))
        except ValueError:
            if route == "verified":
                raise
    F = BallField(prec)
    sp = nplr(F, kind, N, th)
    Ct = [F.mul(F.conj(s), F.from_number(c)) for s, c in zip(sp.S, check_C(C, N))]
    return split_model(sp.H, sp.shift, sp.U, sp.V, sp.B, Ct, prec, "ball", algorithm)


def dplr(kind: str, N: int, theta: Any = None, prec: int = 128, C: Any = None,
         algorithm: str | None = None, route: str = "auto") -> DPLR:
    """A certified DPLR model of the HiPPO system: balls enclosing ``Lambda``,
    ``P = W* U``, ``Q = W* V``, ``B' = W* S^-1 B``, ``C' = W* S* C`` for a unitary W with
    ``H = W Lambda W*``.  Its kernel is the kernel of (G, B, C).  ``C`` is the output vector
    in the original coordinates (``y = C* x``); None means all ones.  ``algorithm``: see
    :func:`unitary_diagonalization` (the ball route).  ``route``: ``"auto"`` (the verified
    route up to ``VERIFIED_MAX_PREC`` bits, balls above it or where the verification
    fails), ``"verified"`` or ``"ball"``.  ValueError (raise prec) when the ball route
    cannot isolate the eigenvalues of H at ``prec`` bits.

    >>> m = dplr("legs", 3)
    >>> (m.N, m.r), [float(l.real.mid()) for l in m.Lambda]
    ((3, 1), [-0.5, -0.5, -0.5])
    """
    return dplr_with_route(kind, N, theta, prec, C, algorithm, route)[0]
