"""Kernels of diagonal state-space models (S4D, DSS), written once over the field.

A diagonal SSM with modes ``lambda_n`` (one per conjugate pair), steps ``dt_n``, input
weights ``B_n`` and output weights ``C_n`` has the kernel (proofs/diagonal_kernels.md)

* ``zoh``:      ``K_l = 2 Re sum_n C_n B_n (e^{dt_n lambda_n} - 1)/lambda_n * e^{l dt_n lambda_n}``
* ``bilinear``: ``K_l = 2 Re sum_n C_n B_n dt_n/(1 - dt_n lambda_n/2) * zbar_n^l``,
  ``zbar_n = (1 + dt_n lambda_n/2)/(1 - dt_n lambda_n/2)``
* ``dss``:      ``K_l = Re sum_n C_n B_n num_n r_n e^{dt_n lambda_n (l - s_n)}`` with
  ``s_n = L - 1`` when ``Re lambda_n > 0`` (else 0), ``mu_n = (1 - 2[Re lambda_n > 0]) dt_n lambda_n``,
  ``num_n = e^{mu_n} - 1``, ``x_n = (e^{L mu_n} - 1) lambda_n``,
  ``r_n = conj(x_n)/(x_n conj(x_n) + tau)`` and ``tau = 1e-7`` (the reference's constant,
  as the binary64 number the literal denotes).

Each is ``factor * Re sum_n W_n z_n^l`` for weights ``W_n`` and nodes ``z_n``:
:func:`diagonal_terms` forms them, :func:`vandermonde_real` sums.  The field must
supply ``exp`` (``BallField`` does, with enclosures).
"""
from __future__ import annotations

from dataclasses import dataclass

from ...arith import Truth
from ..result import OK, SINGULAR, Result, Status, undecided
from .bilinear import discretize

DISCRETIZATIONS = ("zoh", "bilinear", "dss")
#: the constant of DSS's regularised reciprocal
DSS_TAU = 1e-7


@dataclass
class DiagonalTerms:
    """``K_l = factor * Re sum_n W[n] * start[n] * z[n]^l``."""

    W: list
    z: list
    start: list
    factor: int


def diagonal_terms(F, lam: list, dt: list, B: list, C: list, L: int, disc: str,
                   re_positive: list[bool] | None = None) -> Result:
    """The weights and nodes of a diagonal kernel (see the module docstring).

    ``lam``, ``dt``, ``B``, ``C`` are elements of F (one per mode).  For ``dss`` the
    caller says which modes have ``Re lambda_n > 0`` (``re_positive``, decided where
    lambda is formed; default: none).  Statuses: ``ok`` (value: :class:`DiagonalTerms`),
    ``singular`` (a division by an exact zero: ``lambda_n = 0`` for zoh,
    ``dt_n lambda_n = 2`` for bilinear; ``info["mode"]`` names n), ``undecided`` (such a
    zero test could not be decided in this field).

    >>> from s4cert.arith import BallField
    >>> F = BallField(64)
    >>> t = diagonal_terms(F, [F.from_number(-1.0)], [F.from_number(0.5)], [F.one()], [F.one()], 4, "zoh")
    >>> t.ok, t.value.factor
    (True, 2)
    """
    if disc not in DISCRETIZATIONS:
        raise ValueError(f"disc must be one of {', '.join(DISCRETIZATIONS)}; got {disc!r}")
    W, z, start = [], [], []
    for n, (l_n, d_n, b_n, c_n) in enumerate(zip(lam, dt, B, C)):
        cb = F.mul(c_n, b_n)
        dl = F.mul(d_n, l_n)
        if disc == "zoh":
            t = F.is_zero(l_n)
            if t is not Truth.FALSE:
                return _zero_status(t, n, "lambda_n = 0: (e^{dt lambda} - 1)/lambda is 0/0")
            e = F.exp(dl)
            W.append(F.mul(cb, F.div(F.sub(e, F.one()), l_n)))
            z.append(e)
            start.append(F.one())
        elif disc == "bilinear":
            # the bilinear step of the 1 x 1 system (lambda_n, B_n) at dt_n (s4.bilinear)
            step = discretize(F, [[l_n]], [[b_n]], d_n)
            if not step.ok:
                return step if step.status != Status.SINGULAR_BILINEAR else Result(
                    SINGULAR, info={"mode": n, "reason": "1 - dt lambda/2 = 0"},
                    reason=f"mode {n}: 1 - dt lambda/2 = 0")
            Abar, Bbar = step.value
            W.append(F.mul(c_n, Bbar[0][0]))
            z.append(Abar[0][0])
            start.append(F.one())
        else:
            positive = bool(re_positive[n]) if re_positive is not None else False
            mu = F.neg(dl) if positive else dl
            num = F.sub(F.exp(mu), F.one())
            x = F.mul(F.sub(F.exp(F.mul(F.const(L), mu)), F.one()), l_n)
            xc = F.conj(x)
            r = F.div(xc, F.add(F.mul(x, xc), F.from_number(DSS_TAU)))
            W.append(F.mul(F.mul(cb, num), r))
            z.append(F.exp(dl))
            shift = F.mul(F.const(-(L - 1)), dl) if positive else None
            start.append(F.one() if shift is None else F.exp(shift))
    return Result(OK, DiagonalTerms(W, z, start, 1 if disc == "dss" else 2))


def _zero_status(t: Truth, n: int, what: str) -> Result:
    if t is Truth.UNKNOWN:
        return undecided(f"mode {n}: cannot decide whether {what.split(':')[0]}")
    return Result(SINGULAR, info={"mode": n, "reason": what}, reason=f"mode {n}: {what}")


def vandermonde_real(F, terms: DiagonalTerms, L: int) -> list:
    """``K_l = factor * Re sum_n W_n start_n z_n^l`` for ``0 <= l < L``, as real elements.

    The powers are taken by repeated multiplication (``L - 1`` products a mode).
    """
    acc = [F.zero() for _ in range(L)]
    for w, s, z in zip(terms.W, terms.start, terms.z):
        p = F.mul(w, s)
        for l in range(L):
            acc[l] = F.add(acc[l], p)
            if l + 1 < L:
                p = F.mul(p, z)
    half = F.div(F.const(terms.factor), F.const(2))
    return [F.mul(half, F.add(a, F.conj(a))) for a in acc]


def diagonal_kernel(F, lam: list, dt: list, B: list, C: list, L: int, disc: str,
                    re_positive: list[bool] | None = None) -> Result:
    """The length-L kernel of a diagonal SSM (statuses as :func:`diagonal_terms`)."""
    t = diagonal_terms(F, lam, dt, B, C, L, disc, re_positive)
    if not t.ok:
        return t
    return Result(OK, vandermonde_real(F, t.value, L))
