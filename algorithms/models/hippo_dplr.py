"""The certified DPLR model of a HiPPO system (proofs/unitary_dplr.md).

A unitary W with ``H = W Lambda W*`` (W is the spec's unitary "V"; the letter V is the
split's, see :mod:`.hippo_nplr`) turns ``G~ = H - U V*`` into the DPLR matrix
``Lambda - (W* U)(W* V)*`` in ``x' = W* x~``.

The diagonalization is a ball-only certified procedure, not a generic one: it needs
``acb_mat.eig`` (eigenvalue isolation with certified enclosures) and checks the
enclosures as ``acb_mat`` products, so it works on FLINT matrices directly.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any

from flint import acb, acb_mat, arb, ctx, fmpq

from ...arith import BallField
from ..s4.dplr import DPLR, nplr_to_dplr
from .hippo import check_C, check_kind, check_N
from .hippo_nplr import nplr


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
    kind, th = check_kind(kind, theta)
    N = check_N(N)
    F = BallField(prec)
    sp = nplr(F, kind, N, th)
    Ct = [F.mul(F.conj(s), F.from_number(c)) for s, c in zip(sp.S, check_C(C, N))]
    lam, W = unitary_diagonalization(sp.H, prec, shift=sp.shift, algorithm=algorithm)
    return nplr_to_dplr(F, W, lam, sp.U, sp.B, Ct, Q=sp.V)
