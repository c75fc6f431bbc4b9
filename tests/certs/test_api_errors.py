"""certify_kernel raises ValueError for bad input and CertificationError for what it
cannot certify, never anything else."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from s4cert.algorithms.s4.dplr import DPLR
from s4cert.certs.errors import CertificationError
from s4cert.certs.kernel import certify_kernel

GOOD = ([-1.0, -2.0], [0.5, 0.25], [1, 1], [1, -1])


def _with(pos: int, value):
    args = [list(a) for a in GOOD]
    args[pos] = value
    return args


@pytest.mark.parametrize("bad", [[-1.0, None], [-1.0, {}], np.array(["-1", "-2"])])
@pytest.mark.parametrize("pos", range(4))
def test_bad_entries_are_value_errors(pos, bad):
    with pytest.raises(ValueError):
        certify_kernel(DPLR(*_with(pos, bad)), 0.5, 8, 1e-10)


@pytest.mark.parametrize("arithmetic", ["ball", "auto"])
def test_eps_above_the_float_range(arithmetic):
    ck = certify_kernel(DPLR(*GOOD), 0.5, 8, Fraction(10 ** 400), arithmetic=arithmetic)
    assert ck.status == "ok" and np.all(np.isfinite(ck.rad))


def test_unstable_model_within_the_float_range_is_certified():
    """|Abar| = 79: Abar^M and the filter's bookkeeping exceed the float range, the
    kernel (up to about 1e251) does not."""
    ck = certify_kernel(DPLR([3.9, -2.0], [0.5, 0.25], [1, 1], [1, -1]), 0.5, 200, 1e-10, arithmetic="ball")
    assert ck.status == "ok" and np.all(np.isfinite(ck.mid)) and np.all(np.isfinite(ck.rad))
    assert max(abs(b).mid() for b in ck.balls) > 1e250


def test_kernel_beyond_the_float_range_is_refused():
    """|K_j| > 1.8e308: float64 midpoints would read inf (no status ok with inf disks)."""
    with pytest.raises(CertificationError, match="kernel-overflow"):
        certify_kernel(DPLR([3.9, -2.0], [0.5, 0.25], [1, 1], [1, -1]), 0.5, 512, 1e-10)


def test_exact_kernel_beyond_the_float_range_is_refused():
    """|Abar| = 7999: K_95 is about 1e370 (an OverflowError from its float midpoint before)."""
    with pytest.raises(CertificationError, match="kernel-overflow"):
        certify_kernel(DPLR([Fraction(3999, 1000)], [0], [1], [1]), 0.5, 96, 1e-10, mode="exact", counts=False)
