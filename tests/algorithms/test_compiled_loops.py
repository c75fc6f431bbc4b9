"""Tests of the compiled forms of the float64 route's per-root algebra and inverse DFT
(algorithms/s4/transfer_loop.py with transfer_jit.py, algorithms/s4/midrad_idft.py with
idft_jit.py): bitwise the numpy operations they replace (NaN as NaN), the same refusals,
and no fused multiply-add in their machine code (proofs/midrad_filter.md, sections 5-6)."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from s4cert.algorithms.s4 import midrad_idft, transfer_loop
from s4cert.algorithms.s4.midrad import transfer_disks
from s4cert.algorithms.s4.midrad_rows import same_floats
from s4cert.arith.midrad import MR, RangeError, roots_of_unity

numba = pytest.importorskip("numba", reason="the compiled loops need the 'fast' extra (numba)")


def _blocks(seed: int, M: int, K: int, scale_T: float):
    rng = np.random.default_rng(seed)
    Mh = M // 2 + 1
    mk = lambda s: MR(s * (rng.standard_normal(K * Mh) + 1j * rng.standard_normal(K * Mh)),
                      2.0 ** rng.integers(-60, -10, K * Mh) * rng.random(K * Mh))
    return {("C", "B"): mk(1.0), ("C", 0): mk(2.0), (0, "B"): mk(0.5), (0, 0): mk(scale_T)}, Mh


def _numpy_transfer(blocks, Z, Mh, skip):
    K = len(blocks[("C", "B")]) // Mh
    H, _ = transfer_disks(blocks, MR(np.tile(Z.mid[:Mh], K), np.tile(Z.rad[:Mh], K)), 1, skip)
    return H


@given(seed=st.integers(0, 2 ** 32 - 1), logM=st.integers(2, 7), K=st.integers(1, 4),
       scale_T=st.sampled_from([0.01, 0.5, 3.0, 1e3]))
def test_transfer_loop_is_bitwise_transfer_disks(seed, logM, K, scale_T):
    """Random rank-one blocks (some W near 0, wide disks): the same H bits, or both refuse,
    and a refusal only where W = 1 + beta T may come near 0: at scale_T = 0.01,
    |beta T| <= 0.01 (|re| + |im|) of normal samples, below 1/2 unless one exceeds 25, and the
    radii are below 2^-10, so both forms must compute."""
    assert transfer_loop.available()
    M = 1 << logM
    blocks, Mh = _blocks(seed, M, K, scale_T)
    Z = roots_of_unity(M)
    skip = M // 2 + Mh * np.arange(K)
    try:
        want = _numpy_transfer(blocks, Z, Mh, skip)
    except RangeError:
        assert scale_T > 0.01
        with pytest.raises(RangeError):
            transfer_loop.transfer_rank_one(blocks, Z, Mh, skip)
        return
    got = transfer_loop.transfer_rank_one(blocks, Z, Mh, skip)
    keep = np.ones(len(want), dtype=bool)
    keep[skip] = False
    for a, b in ((want.mid.real, got.mid.real), (want.mid.imag, got.mid.imag), (want.rad, got.rad)):
        assert same_floats(a[keep], b[keep])


def test_transfer_loop_refuses_a_w_that_may_vanish():
    """W = 1 + beta T = 0 at a root: both forms raise RangeError."""
    M, K = 8, 1
    blocks, Mh = _blocks(3, M, K, 1.0)
    Z = roots_of_unity(M)
    beta = (Z.mid[:Mh] + 1) / 2
    T = blocks[(0, 0)]
    T.mid[1] = -1 / beta[1]          # W(z_1) = 1 + beta T about 0, within the disks
    T.rad[1] = 1e-3
    with pytest.raises(RangeError):
        _numpy_transfer(blocks, Z, Mh, np.array([M // 2]))
    with pytest.raises(RangeError):
        transfer_loop.transfer_rank_one(blocks, Z, Mh, np.array([M // 2]))


@given(seed=st.integers(0, 2 ** 32 - 1), logM=st.integers(0, 10), K=st.integers(1, 3),
       spread=st.integers(0, 60))
def test_idft_loops_are_bitwise_the_numpy_stages(seed, logM, K, spread):
    """Random rows of every size 1..1024, magnitudes 10^-spread..10^spread, signed zeros and
    radii: the same midpoints and bounds, per entry and per row."""
    rng = np.random.default_rng(seed)
    M = 1 << logM
    H = rng.standard_normal((K, M)) * 10.0 ** rng.integers(-spread, spread + 1, (K, M)) \
        + 1j * rng.standard_normal((K, M))
    H.real[rng.random((K, M)) < 0.1] = -0.0
    H.imag[rng.random((K, M)) < 0.1] = -0.0
    H[0] *= 2.0 ** -int(rng.integers(0, 1050))     # down to the subnormal range
    rad = rng.random((K, M)) * 1e-16
    Z = roots_of_unity(M)
    for per_entry in (True, False):
        want = midrad_idft.idft_midrad_rows(H, rad, Z, per_entry=per_entry, _compiled=False)
        got = midrad_idft.idft_midrad_rows(H, rad, Z, per_entry=per_entry, _compiled=True)
        assert same_floats(want[0].real, got[0].real) and same_floats(want[0].imag, got[0].imag)
        assert same_floats(want[1], got[1])


def test_idft_loops_refuse_what_the_numpy_stages_refuse():
    H = np.full((1, 8), 2.0 ** 399, dtype=np.complex128)
    Z = roots_of_unity(8)
    for compiled in (False, True):
        with pytest.raises(RangeError):
            midrad_idft.idft_midrad_rows(H, np.zeros(H.shape), Z, _compiled=compiled)


def _fresh_asm(fn, *args) -> str:
    """The machine code of a fresh, uncached compilation of a loop (numba shows none for
    cached code), with the loops' settings."""
    f = numba.njit(nogil=True, error_model="numpy")(fn.py_func)
    f(*args)
    return "\n".join(f.inspect_asm().values()).lower()


def test_no_fused_multiply_add_in_the_loops():
    """Compiled without fast-math: no fused multiply-add instruction in the machine code."""
    from s4cert.algorithms.s4 import idft_jit, transfer_jit
    n, M = 6, 8
    c, r, b = np.ones(n, dtype=complex), np.ones(n), np.zeros(n, dtype=bool)
    x, w = np.ones((2, M)), np.ones((3, M // 2))
    asms = [_fresh_asm(transfer_jit.transfer, *([r] * 15), b, r.copy(), r.copy(), r.copy()),
            _fresh_asm(idft_jit.load, np.ones((2, M), dtype=complex), np.arange(M), x.copy(), x.copy(), x.copy()),
            _fresh_asm(idft_jit.stages, x.copy(), x.copy(), x.copy(), x.copy(), w, w, w, True),
            _fresh_asm(idft_jit.finish, x, x, x, np.ones(2), 8.0, 1.0, 0.0, np.empty((2, M)))]
    for asm in asms:
        assert "addsd" in asm or "addpd" in asm                  # the code is there
        assert not any(op in asm for op in ("vfmadd", "vfmsub", "vfnmadd", "vfnmsub"))
