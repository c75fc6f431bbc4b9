"""Tests of the compiled double-double product and square (arith/dd_jit.py): bitwise the
array forms of arith/double_double.py (so Lemmas 3-4 of proofs/double_double_filter.md
cover them), the same refusals, and no fused multiply-add in their machine code."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from s4cert.arith import dd_jit
from s4cert.arith.double_double import COMPILED, DD, _array_mul, _array_square
from s4cert.arith.midrad import RangeError

numba = pytest.importorskip("numba", reason="the compiled loops need the 'fast' extra (numba)")


def _dd(rng, n: int, spread: int) -> DD:
    parts = []
    for _ in range(2):
        v = rng.standard_normal(n) * 2.0 ** rng.integers(-spread, spread + 1, n)
        v[rng.random(n) < 0.05] = 0.0
        v[rng.random(n) < 0.05] = -0.0
        parts.append(v)
    hr, hi = parts
    lr = rng.standard_normal(n) * np.abs(hr) * 2.0 ** -54
    li = rng.standard_normal(n) * np.abs(hi) * 2.0 ** -54
    return DD(hr, lr, hi, li, np.abs(rng.standard_normal(n)) * 2.0 ** rng.integers(-200, -20, n))


def _same(x: DD, parts) -> bool:
    return all(np.array_equal(np.asarray(a).view(np.uint64), np.asarray(b).view(np.uint64))
               for a, b in zip((x.rh, x.rl, x.ih, x.il, x.rad), parts))


@given(seed=st.integers(0, 2 ** 32 - 1), n=st.integers(1, 300), spread=st.sampled_from([0, 30, 240, 480]))
def test_compiled_product_and_square_are_bitwise_the_array_forms(seed, n, spread):
    """Random double-double disks from 2^-480 to 2^480 (products below Dekker's threshold,
    signed zeros): the same bits, or both refuse, and a refusal only where a product may
    pass 2^500: with spread <= 240 every part is below 2^246 (|N(0, 1)| < 2^6), every
    product below 2^493, so both forms must compute."""
    assert COMPILED.open()
    rng = np.random.default_rng(seed)
    x, y = _dd(rng, n, spread), _dd(rng, n, spread)
    for want_fn, got_fn in ((lambda: _array_square(x), lambda: dd_jit.square(x)),
                            (lambda: _array_mul(x, y), lambda: dd_jit.mul(x, y))):
        try:
            want = want_fn()
        except RangeError:
            assert spread > 240 and got_fn()[5]
            continue
        got = got_fn()
        assert not got[5] and _same(want, got[:5])


def test_dd_methods_take_the_compiled_loops_and_refuse_alike(monkeypatch):
    """``DD.mul``/``DD.square`` run the loops on large arrays (forced here on small ones) with
    the array forms' results, and raise RangeError where those do."""
    monkeypatch.setenv("S4CERT_COMPILED", "1")
    rng = np.random.default_rng(5)
    x, y = _dd(rng, 50, 30), _dd(rng, 50, 30)
    got = x.mul(y)
    assert _same(_array_mul(x, y), (got.rh, got.rl, got.ih, got.il, got.rad))
    got = x.square()
    assert _same(_array_square(x), (got.rh, got.rl, got.ih, got.il, got.rad))
    big = DD.exact(np.full(8, 2.0 ** 300))
    for f in (lambda: big.square(), lambda: big.mul(big), lambda: _array_square(big)):
        with pytest.raises(RangeError):
            f()


def test_no_fused_multiply_add_in_the_dd_loops():
    square, mul = dd_jit._loops()
    for fn, nargs in ((square, 10), (mul, 15)):
        f = numba.njit(nogil=True, error_model="numpy")(fn.py_func)
        f(*[np.ones(4) for _ in range(nargs)])
        asm = "\n".join(f.inspect_asm().values()).lower()
        assert "mulsd" in asm or "mulpd" in asm
        assert not any(op in asm for op in ("vfmadd", "vfmsub", "vfnmadd", "vfnmsub"))
