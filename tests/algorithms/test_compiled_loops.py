"""Tests of the compiled loops: every gate (arith/compiled.py) opens where numba is
installed and follows S4CERT_COMPILED and its threshold; the compiled rounding is
arith/midrad.py's; the float64 route's per-root algebra and inverse DFT
(algorithms/s4/transfer_loop.py with transfer_jit.py, algorithms/s4/midrad_idft.py with
idft_jit.py) are bitwise the numpy operations they replace (NaN as NaN), with the same
refusals, and no loop has a fused multiply-add in its machine code (proofs/midrad_filter.md,
sections 5-6)."""
import ast
import importlib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, strategies as st

from s4cert.algorithms.s4 import midrad_idft, cauchy_f64_rows, transfer_loop
from s4cert.algorithms.s4.midrad import transfer_disks
from s4cert.arith import compiled
from s4cert.arith.compiled import Gate, gates, same_floats
from s4cert.arith.midrad import MR, RangeError, compiled_rounding, down, down_normal, roots_of_unity, up

numba = pytest.importorskip("numba", reason="the compiled loops need the 'fast' extra (numba)")

ROOT = Path(__file__).resolve().parents[2]


def _modules_declaring_gates() -> list[str]:
    """The modules of arith/ and algorithms/ whose source calls ``Gate(...)``."""
    found = []
    for folder in ("arith", "algorithms"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            if any(isinstance(n, ast.Call) and getattr(n.func, "id", getattr(n.func, "attr", None)) == "Gate"
                   for n in ast.walk(tree)):
                found.append("s4cert." + ".".join(path.relative_to(ROOT).with_suffix("").parts))
    return found


def test_every_gate_opens_where_numba_is_installed():
    """Every gate the sources declare is registered and opens: its loop reproduces its numpy
    form bitwise on its probe here (the rows, radii, transfer, inverse-DFT and
    double-double gates at least)."""
    modules = _modules_declaring_gates()
    for name in modules:
        importlib.import_module(name)
    names = {g.name for g in gates()}
    assert {"float64 Cauchy rows", "float64 Cauchy radii", "float64 rank-one transfer", "float64 inverse DFT",
            "double-double product and square"} <= names
    assert len(modules) >= 4
    for gate in gates():
        assert gate.open(), gate.name


def test_every_gate_follows_the_switch_and_its_threshold(monkeypatch):
    for name in _modules_declaring_gates():
        importlib.import_module(name)
    for gate in gates():
        monkeypatch.setenv("S4CERT_COMPILED", "0")
        assert not gate.use(1 << 60)
        monkeypatch.setenv("S4CERT_COMPILED", "auto")
        assert gate.use(gate.minimum) and gate.use(1 << 60)
        assert gate.minimum == 0 or not gate.use(gate.minimum - 1)
        monkeypatch.setenv("S4CERT_COMPILED", "1")
        assert gate.use(0)
    assert (cauchy_f64_rows.ROWS.minimum, transfer_loop.GATE.minimum, midrad_idft.GATE.minimum) == (1 << 17, 1 << 12,
                                                                                                 1 << 14)


def test_a_gate_probes_once_and_only_behind_what_it_requires(monkeypatch):
    monkeypatch.setattr(compiled, "_GATES", dict(compiled._GATES))    # the test gates stay out of the registry
    monkeypatch.setenv("S4CERT_COMPILED", "auto")
    calls = []
    closed = Gate("test: closed", 0, lambda: calls.append("closed") or False)
    behind = Gate("test: behind", 0, lambda: calls.append("behind") or True, requires=(closed,))
    alone = Gate("test: alone", 8, lambda: calls.append("alone") or 1)
    assert not behind.use(100) and not closed.use(100) and not behind.open()
    assert not alone.use(7) and calls == ["closed"]           # below the threshold the probe does not run
    assert alone.use(8) and alone.use(9) and alone.open() is True
    assert calls == ["closed", "alone"]
    assert set(compiled.gates()) >= {closed, behind, alone}
    for bad in (("", 1), ("x", -1), ("x", 1.5)):
        with pytest.raises(ValueError):
            Gate(bad[0], bad[1], lambda: True)


def _rounding_probes() -> np.ndarray:
    """Nonnegative floats over the whole range: zeros, subnormals, the least normals, powers
    of two, long mantissas at every exponent, the largest float and inf."""
    rng = np.random.default_rng(20261202)
    normal = (1 + rng.random(3000)) * 2.0 ** rng.integers(-1022, 1024, 3000).astype(float)
    special = [0.0, 5e-324, 2.0 ** -1060, 2.0 ** -1023, 2.0 ** -1022, np.nextafter(2.0 ** -1022, 1.0), 1.0,
               2.0 ** 52, 1.5, np.finfo(float).max, np.inf]
    return np.concatenate([special, 2.0 ** np.arange(-1021, 1024).astype(float), normal])


def test_compiled_rounding_is_the_numpy_rounding():
    """``compiled_rounding()``'s up is ``midrad.up`` bitwise on every probe, and its
    down_normal is ``midrad.down`` (the next float below) on every normal x > 2^-1022, as
    the numpy down_normal is (proofs/midrad_filter.md, section 5)."""
    up_c, down_c = compiled_rounding()
    x = _rounding_probes()
    with np.errstate(over="ignore"):
        assert same_floats(np.array([up_c(float(v)) for v in x]), up(x))
    normal = x[(x > 2.0 ** -1022) & np.isfinite(x)]
    assert normal.size > 5000
    want = down(normal)
    assert same_floats(down_normal(normal), want)
    assert same_floats(np.array([down_c(float(v)) for v in normal]), want)
    assert np.all(want < normal)


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
    assert transfer_loop.GATE.open()
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
    x, w = np.ones((2, M)), np.ones(M // 2)
    asms = [_fresh_asm(transfer_jit.transfer, *([r] * 15), b, r.copy(), r.copy(), r.copy()),
            _fresh_asm(idft_jit.load, np.ones((2, M), dtype=complex), np.arange(M), x.copy(), x.copy(), x.copy()),
            _fresh_asm(idft_jit.stages, x.copy(), x.copy(), x.copy(), x.copy(), w, w, w, True),
            _fresh_asm(idft_jit.finish, x, x, x, np.ones(2), 8.0, 1.0, 0.0, np.empty((2, M))),
            _fresh_asm(cauchy_f64_rows._radius_loop(), x.copy(), np.ones((4, M)), np.ones(2), np.ones(M), 1.0, 0.0, 0.0,
                       np.empty((2, M), dtype=complex), np.empty((2, M)), 0)]
    for asm in asms:
        assert "addsd" in asm or "addpd" in asm                  # the code is there
        assert not any(op in asm for op in ("vfmadd", "vfmsub", "vfnmadd", "vfnmsub"))
