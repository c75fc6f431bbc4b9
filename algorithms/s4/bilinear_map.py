"""The bilinear (Tustin) map's constants, written once for every arithmetic.

With the step Delta and a = 2/Delta, the bilinear discretization of the DPLR model gives
(``proofs/bilinear_filter.md``):

* the poles   mu_j = (a - lambda_j)/(a + lambda_j)  and the gains  g_j = -2/(a + lambda_j);
* beta(z) = (1 + z)/2, the factor of the correction W(z) = I + beta(z) S_QP(z);
* the half step Delta/2: H(-1) = (Delta/2) C~* B, G = I - (Delta/2) A, and the exceptional
  offsets (Delta/2) sum_j u_j v_j where lambda_j = -a.

Every procedure takes these from here, in whatever arithmetic it runs: a ``Field`` (exact,
balls, an array field; the context is the field), plain numbers (Fractions, floats, numpy
arrays: the context ``NUMBERS``), or disk arrays (``MR``, ``DD``, ``TD``: the ``*_disks``
forms, written with the disk classes' own operations).  A change of the map's constants is
made here and in its proof.  The compiled twin of the rank-one transfer
(``transfer_jit``) repeats ``beta_disks`` operation for operation; its gate's probe compares it
bitwise with the numpy form, so a change here closes that gate until the twin follows.

>>> from fractions import Fraction
>>> a = rate(NUMBERS, Fraction(1, 2)); a, pole(NUMBERS, a, Fraction(-1)), gain(NUMBERS, a + Fraction(-1))
(Fraction(4, 1), Fraction(5, 3), Fraction(-2, 3))
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np


class _Numbers:
    """Python's operators as a context: Fractions, floats, complex numbers, numpy arrays."""

    @staticmethod
    def add(x, y):
        return x + y

    @staticmethod
    def sub(x, y):
        return x - y

    @staticmethod
    def div(x, y):
        return x / y

    @staticmethod
    def const(c):
        return c

    @staticmethod
    def one():
        return 1


#: the context of plain numbers
NUMBERS = _Numbers()


def rate(F: Any, delta: Any) -> Any:
    """a = 2/Delta."""
    return F.div(F.const(2), delta)


def half_step(F: Any, delta: Any) -> Any:
    """Delta/2 (the alpha of G = I - alpha A and of H(-1) = alpha C~* B)."""
    return F.div(delta, F.const(2))


def shift(F: Any, a: Any, lam: Any) -> Any:
    """a + lambda: zero exactly at the exceptional indices, the denominator of mu and g."""
    return F.add(a, lam)


def pole(F: Any, a: Any, lam: Any, shifted: Any = None) -> Any:
    """mu = (a - lambda)/(a + lambda) (``shifted``: a + lambda, when the caller holds it)."""
    return F.div(F.sub(a, lam), shifted if shifted is not None else shift(F, a, lam))


def gain(F: Any, shifted: Any) -> Any:
    """g = -2/(a + lambda), from ``shifted`` = a + lambda."""
    return F.div(F.const(-2), shifted)


def beta(F: Any, z: Any, two: Any = None) -> Any:
    """beta = (1 + z)/2 (``two``: F.const(2), when the caller already holds it)."""
    return F.div(F.add(F.one(), z), two if two is not None else F.const(2))


def betas(F: Any, zs: list) -> list:
    """beta over a vector of points, (1/2)(1 + z): one scaling by the exact 1/2."""
    return F.vec_scale(F.const(Fraction(1, 2)), F.vec_shift(F.one(), zs))


# -- disk arrays (MR, DD, TD share these operations) ---------------------------------------

def beta_disks(Z: Any, disks: Any) -> Any:
    """The disks of beta = (1 + z)/2 from disks Z of the class ``disks``: Z + 1, then the
    exact scaling by 1/2."""
    return Z.add(disks.exact(np.ones(len(Z)))).scale(0.5)


def shift_disks(lam: Any, a: float, disks: Any) -> Any:
    """The disks of a + lambda (``a`` a float64 number, exact), for double-double ``lam``
    of any shape."""
    return lam.add(disks.exact(np.full(lam.rh.shape, a)))


def poles_gains_disks(lam: Any, inv_shifted: Any, a: float, disks: Any) -> tuple[Any, Any]:
    """The double-double disks of mu = (a - lambda)/(a + lambda) and g = -2/(a + lambda),
    from those of 1/(a + lambda): (a - lambda) (1/(a + lambda)) and (1/(a + lambda)) (-2)."""
    shape = inv_shifted.rh.shape
    mu = disks.exact(np.full(shape, a)).sub(lam).mul(inv_shifted)
    return mu, inv_shifted.mul(disks.exact(np.full(shape, -2.0)))
