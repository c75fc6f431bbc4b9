"""Targets at the edges: an eps of 5000 digits and radii next to the subnormals
(certs/kernel.py records eps at any size; arith/ball.py ``_transform_prec`` takes the
ratio of its sums as a difference of logarithms)."""
from __future__ import annotations

from fractions import Fraction

from flint import acb, arb, ctx, fmpq

from s4cert import certify_kernel
from s4cert.algorithms.s4.dplr import DPLR
from s4cert.arith.ball import _transform_prec
from s4cert.certs.io.numbers import rational_string

MODEL = DPLR([-1.0, -2.0], [0.5, 0.25], [1, 1], [1, -1])


def test_an_eps_of_five_thousand_digits_certifies():
    """eps = 10^-5000 (beyond Python's 4300-digit int-to-str limit) certifies in balls; the
    enclosures contain the exact kernel (exact mode, an independent route) and have radii
    <= eps; the record keeps eps exactly."""
    eps = Fraction(1, 10 ** 5000)
    k = certify_kernel(MODEL, 0.5, 8, eps, counts=False)
    exact = certify_kernel(MODEL, 0.5, 8, 1, mode="exact", counts=False)
    assert k.status == "ok" and exact.status == "ok"
    assert k.problem["eps"] == rational_string(eps)
    assert len(k.balls) == len(exact.exact) == 8
    q = lambda x: fmpq(x.numerator, x.denominator)
    with ctx.workprec(17000):
        tol = arb(q(eps))
        for ball, (re, im) in zip(k.balls, exact.exact):
            assert ball.contains(acb(q(re), q(im)))
            assert ball.real.rad() <= tol and ball.imag.rad() <= tol


def test_transform_precision_with_radii_near_the_subnormals():
    """Sums of radii near 2^-1070 against moduli near 1 (and near 2^1000): a precision
    in [2, prec], where the quotient of the two would overflow."""
    with ctx.workprec(4000):
        for scale in (1, 2 ** 1000):
            a = [acb(arb(scale * (1 + j), 2.0 ** -1070)) for j in range(8)]
            p = _transform_prec(a, 4000)
            assert 2 <= p <= 4000
