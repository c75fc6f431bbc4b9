"""The disk array fields (arith/array_field.py) on arrays of several entries.

Each result is checked entry by entry against FLINT at 300 bits: the operation on exact
points of the operand disks (midpoints and points on their circles) must lie in the result
disk, decided by the certain comparison ``upper(|value - mid|) <= rad``.  The zero test is
checked on arrays mixing exact zeros, disks that exclude 0 and disks that do not decide."""
from __future__ import annotations

from dataclasses import fields

import numpy as np
import pytest
from flint import acb, arb, ctx

from s4cert.algorithms.dft import dft
from s4cert.arith import DDArrayField, ExactField, MRArrayField, TDArrayField, Truth
from s4cert.arith.double_double import DD
from s4cert.arith.midrad import MR, RangeError
from s4cert.arith.triple_double import TD

PREC = 300
FIELDS = {"mr": MRArrayField, "dd": DDArrayField, "td": TDArrayField}
fields_ = pytest.mark.parametrize("kind", sorted(FIELDS))


def make(kind: str, mid, rad, lo_scale: float = 2.0 ** -58):
    """Disks of the kind with midpoints ``mid`` (plus lower parts for the multi-float kinds) and radii."""
    mid = np.asarray(mid, dtype=complex)
    if kind == "mr":
        return MR.from_parts(mid, rad)
    if kind == "dd":
        return DD.from_parts(mid, mid * lo_scale, rad)
    return TD.from_parts(mid, mid * lo_scale, mid * lo_scale ** 2, rad)


def mid_ball(x, i) -> acb:
    """The exact midpoint of entry i (float sums are exact at PREC bits here)."""
    if isinstance(x, MR):
        return acb(float(x.mid[i].real), float(x.mid[i].imag))
    if isinstance(x, TD):
        re, im = (x.r0[i], x.r1[i], x.r2[i]), (x.i0[i], x.i1[i], x.i2[i])
    else:
        re, im = (x.rh[i], x.rl[i]), (x.ih[i], x.il[i])
    with ctx.workprec(PREC):
        return acb(sum((arb(float(p)) for p in re), arb(0)), sum((arb(float(p)) for p in im), arb(0)))


def holds(x, i, value: acb) -> bool:
    with ctx.workprec(PREC):
        return bool(abs(value - mid_ball(x, i)).upper() <= arb(float(x.rad[i])))


def points(x, i, direction: complex) -> list[acb]:
    """The midpoint and the point of the circle in ``direction`` (|direction| <= 1, exact)."""
    with ctx.workprec(PREC):
        m = mid_ball(x, i)
        return [m, m + acb(direction) * arb(float(x.rad[i]))]


A = np.array([1 + 2j, -3e-50 + 1e-50j, 4e50 - 1j, 0.1, -7j, 1e-90 + 1e-90j])
B = np.array([0.5 - 0.25j, 2e-40j, -1e-60 + 3e-61j, 3.0, 1 + 1j, 1e40 - 1e39j])


def operands(kind: str):
    return make(kind, A, np.abs(A) * 1e-14), make(kind, B, np.abs(B) * 1e-15, -2.0 ** -57)


@fields_
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
def test_array_operations_contain_the_exact_results_entry_by_entry(kind, op):
    """The whole array at once: every entry's disk holds the exact operation on points of the
    operands' disks; and each entry is bitwise the scalar operation on that entry alone."""
    F = FIELDS[kind]()
    a, b = operands(kind)
    r = getattr(F, op)(a, b)
    for i in range(len(A)):
        for pa in points(a, i, 0.6 - 0.8j):
            for pb in points(b, i, -1j):
                with ctx.workprec(PREC):
                    v = {"add": pa + pb, "sub": pa - pb, "mul": pa * pb, "div": pa / pb}[op]
                assert holds(r, i, v), (kind, op, i)
        one = getattr(F, op)(a[i:i + 1], b[i:i + 1])
        for f in fields(r):
            assert np.asarray(getattr(one, f.name))[0] == np.asarray(getattr(r, f.name))[i]


@fields_
def test_unary_operations_and_broadcasting(kind):
    F = FIELDS[kind]()
    a, _ = operands(kind)
    neg, conj = F.neg(a), F.conj(a)
    for i in range(len(A)):
        for p in points(a, i, 0.999j):
            with ctx.workprec(PREC):
                assert holds(neg, i, -p) and holds(conj, i, p.conjugate())
    y = F.mul(F.from_number(2), a)                       # a 0-d disk broadcasts over the array
    assert y.rad.shape == (len(A),)
    for i in range(len(A)):
        for p in points(a, i, -0.6 + 0.8j):
            with ctx.workprec(PREC):
                assert holds(y, i, 2 * p)


@fields_
def test_one_procedure_runs_for_every_entry(kind):
    """The DFT of 8 inputs, each an array of 3 entries: the disks hold the exact transform
    of each entry's inputs (ExactField)."""
    F, E = FIELDS[kind](), ExactField(8)
    rng = np.random.default_rng(3)
    vals = (rng.integers(-8, 9, (8, 3)) + 1j * rng.integers(-8, 9, (8, 3))) / 4     # exact binary inputs
    got = dft(F, [F.from_array(v) for v in vals])
    assert len(got) == 8
    for c in range(3):
        want = dft(E, [E.from_number(complex(v)) for v in vals[:, c]])
        for g, w in zip(got, want):
            assert holds(g, c, E.to_acb(w, PREC))


@fields_
def test_mixed_arrays_give_the_right_masks(kind):
    """Entries certainly zero (the point 0), certainly nonzero, and undecided (disks holding 0
    that are not the point): the masks say which; the whole-array test is UNKNOWN; the
    entries the mask clears can be inverted alone."""
    F = FIELDS[kind]()
    x = make(kind, [0, 1 + 1j, 0, 1e-3, -2j, 0.5], [0.0, 0.5, 1e-30, 0.01, 0.5, 0.5], lo_scale=0.0)
    zero, nonzero = F.zero_mask(x)
    assert zero.tolist() == [True, False, False, False, False, False]
    assert nonzero.tolist() == [False, True, False, False, True, False]     # 0.5 +- 0.5 touches 0
    assert F.is_zero(x) is Truth.UNKNOWN
    with pytest.raises(RangeError):
        F.div(F.one(), x)
    inv = F.div(F.one(), x[nonzero])
    for j, i in enumerate(np.flatnonzero(nonzero)):
        for p in points(x, i, -1):
            with ctx.workprec(PREC):
                assert holds(inv, j, 1 / p)
    assert F.is_zero(x[zero]) is Truth.TRUE and F.is_zero(x[nonzero]) is Truth.FALSE
    assert F.is_zero(F.from_array(np.zeros(4))) is Truth.TRUE
    assert F.zero_mask(F.from_array([[0, 1], [2, 0]]))[0].tolist() == [[True, False], [False, True]]


@fields_
def test_enclosures_and_errors_of_arrays(kind):
    """A ball per entry holds that entry's circle; ``enclose`` holds every entry; ``add_error``
    widens every entry by the error; the modulus bounds hold over all entries."""
    F = FIELDS[kind]()
    a, _ = operands(kind)
    balls, hull = F.enclose_entries(a), F.enclose(a)
    assert len(balls) == len(A)
    for i, b in enumerate(balls):
        for p in points(a, i, 0.6 + 0.8j) + points(a, i, -1):
            assert b.contains(p) and hull.contains(p)
    e = F.add_error(a, 2.0 ** -10)
    for i in range(len(A)):
        for p in points(a, i, 1j):
            for d in (1, -1j):
                with ctx.workprec(PREC):
                    assert holds(e, i, p + acb(d) * 2.0 ** -10)
    with pytest.raises(RangeError):
        F.add_error(a, 1e300)
    up, low = F.abs_upper(a), F.abs_lower(a)
    with ctx.workprec(PREC):
        mods = [abs(mid_ball(a, i)) for i in range(len(A))]
    assert all(arb(up) >= m + float(a.rad[i]) for i, m in enumerate(mods))
    assert all(arb(low) <= m - float(a.rad[i]) for i, m in enumerate(mods))
    assert F.to_complex(a) == complex(A[2])                 # the midpoint of largest modulus


@fields_
def test_roots_numbers_and_refusals(kind):
    F = FIELDS[kind]()
    for k in range(16):
        w = F.root_of_unity(16, k)
        with ctx.workprec(PREC):
            z = acb.exp_pi_i(acb(-2 * k) / 16)
        assert w.rad.shape == () and holds(w.reshape(1), 0, z)
        if k % 4 == 0:
            assert float(w.rad) == 0.0
    grid = F.roots_of_unity(8)
    assert len(grid) == 8 and complex(grid[0].mid_complex()) == 1 and float(grid[0].rad) == 0
    with ctx.workprec(PREC):
        third = acb(1) / 3
    x = F.from_number(third)
    assert x is F.from_number(x) and holds(x.reshape(1), 0, third)
    with pytest.raises(ValueError):
        F.from_number(acb(arb(0, float("inf"))))
    with pytest.raises(RangeError):
        F.from_number(1e300)                            # beyond either class's range
    assert F.const(7) is F.const(7)


def test_the_checks_can_fail():
    """The containment check refuses a disk whose radius is a little too small."""
    x = MR.from_parts([1.0], [0.0])
    with ctx.workprec(PREC):
        v = acb(1) + arb(2) ** -60
    assert not holds(x, 0, v) and holds(MR.from_parts([1.0], [2.0 ** -59]), 0, v)
