"""Lemma 11 (proofs/midrad_filter.md) on inputs that load particular twiddles: the
per-entry bounds of the float64 disks' inverse transform (algorithms/s4/midrad_idft.py)
against 320-bit transforms."""
import numpy as np
import pytest

from s4cert.algorithms.s4.midrad_idft import idft_midrad
from s4cert.arith.midrad import MR, roots_of_unity
from tests.algorithms.test_s4_midrad import REF, disk_holds_ball


def _inputs(M: int) -> dict:
    k = np.arange(M)
    g = np.random.default_rng(M)
    big = (g.standard_normal(M) + 1j * g.standard_normal(M)) * 2.0 ** g.integers(-300, 300, M)
    return {
        "impulse_0": (k == 0).astype(complex),
        "impulse_odd": np.where(k == M // 2 + 1, 3.0 - 1e-7j, 0.0) if M > 2 else (k == 1).astype(complex),
        "constant": np.full(M, 1.0 + 1.0 / 3.0j),
        "alternating": (-1.0) ** k * (1 + 0.1j),
        # one entry in every group of eight: the size-8 stage's inexact twiddles (j = 1, 3) carry it
        "stage_pattern": np.where(k % 8 == 5, 1.0 / 7.0 + 2j, 0.0),
        "huge_range": big,
    }


@pytest.mark.parametrize("M", [2, 4, 8, 64, 1024])
@pytest.mark.parametrize("name", ["impulse_0", "impulse_odd", "constant", "alternating", "stage_pattern",
                                  "huge_range"])
def test_structured_inputs_per_entry(M, name):
    """Every entry's bound holds the 320-bit transform of the midpoints, for impulses,
    constants, alternating signs, a pattern loading the size-8 stage's inexact twiddles,
    and magnitudes 2^-300..2^300 (where the exact twiddles 1 and i carry no bound)."""
    h = _inputs(M)[name]
    mid, R = idft_midrad(MR.exact(h), roots_of_unity(M), per_entry=True)
    ref = REF.primitive("dft")([REF.from_number(complex(x)) for x in h], True)
    for j in range(M):
        assert disk_holds_ball(complex(mid[j]), float(R[j]), ref[j])
