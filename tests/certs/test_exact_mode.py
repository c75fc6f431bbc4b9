"""The exact mode's routes: powers of Abar on integer matrices against the exact filter."""
from fractions import Fraction

import pytest

from s4cert.algorithms.s4.dplr import DPLR
from s4cert.algorithms.s4.exact_route import exact_kernel_by_powers
from s4cert.certs import routing
from s4cert.certs.examples import example_model
from s4cert.certs.exact_mode import exact_kernel
from s4cert.certs.kernel import certify_kernel

PROBLEMS = [
    (example_model(2), 0.01, 8, None),
    (example_model(4, r=2, seed=3), Fraction(1, 8), 13, None),
    (example_model(3, seed=1), 0.25, 8, [1, (Fraction(1, 3), 2), -0.5]),
    # lambda_0 = -2/step: an exceptional index of the filter's partition
    (DPLR([-4, (-1, 3), Fraction(-1, 2)], [1, (0, 1), Fraction(1, 2)], [1, 2, (1, -1)], [1, -1, (0, 2)]),
     Fraction(1, 2), 9, None),
]


@pytest.mark.parametrize("model, step, L, ct", PROBLEMS)
def test_powers_route_equals_filter_route(model, step, L, ct):
    ex = routing.exact_partition(model, step)
    filt = exact_kernel(model, step, L, ct, ex, route="filter")
    powers = exact_kernel(model, step, L, ct, ex, route="powers")
    assert powers == filt
    assert all(isinstance(x, Fraction) and x.denominator > 0 for pair in powers for x in pair)


def test_powers_route_values_are_in_lowest_terms():
    res = exact_kernel_by_powers(example_model(3), 0.01, 40)
    for re, im in res.value:
        assert Fraction(re.numerator, re.denominator) == re and Fraction(im.numerator, im.denominator) == im
        assert (re.numerator, re.denominator) == Fraction(re.numerator, re.denominator).as_integer_ratio()


def test_certify_kernel_exact_routes_agree():
    m = example_model(3)
    a = certify_kernel(m, 0.01, 20, 1e-10, mode="exact", exact_route="filter")
    b = certify_kernel(m, 0.01, 20, 1e-10, mode="exact")
    assert a.exact == b.exact
    assert (a.mid == b.mid).all() and (a.rad == b.rad).all()


def test_singular_bilinear_matrix_and_bad_route():
    m = DPLR([2, -1], [0, 0], [1, 1], [1, 1])  # 1 - (step/2) lambda_0 = 0, no correction: G singular
    assert exact_kernel_by_powers(m, 1, 4).status == "singular-bilinear-matrix"
    with pytest.raises(ValueError):
        exact_kernel(example_model(2), 0.01, 4, None, [], route="nope")
