"""Tests of the float64 route for many kernels at once (algorithms/s4/layer_pass.py,
proofs/layer_pass.md).

Every check is containment, decided exactly, of an exact kernel or of a 320-bit ball run
in the batch's disks, kernel by kernel."""
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, strategies as st

from s4cert.algorithms.models.hippo_float64 import dplr_float64
from s4cert.algorithms.s4 import layer_pass
from s4cert.algorithms.s4.dplr import DPLR
from s4cert.algorithms.s4.filter import filter_kernel
from s4cert.algorithms.s4.midrad import filter_kernel_midrad
from s4cert.algorithms.s4.layer_pass import Head, filter_kernels_midrad
from tests.algorithms.test_s4_midrad import REF, disk_holds_ball, disk_holds_exact
from tests.helpers import dissipative_dplr, exact_kernel, gaussian, pole_near_the_grid, random_dplr


def _with_c(m: DPLR, C: list) -> DPLR:
    return DPLR(Lambda=m.Lambda, P=m.P, Q=m.Q, B=m.B, C=C)


@st.composite
def layer(draw):
    """Heads of random Gaussian-rational models (some lambda_j = -2/step), each with a few
    output vectors C~ (taken as C~ for the grid)."""
    r = draw(st.integers(1, 2))
    step = draw(st.sampled_from([Fraction(1, 2), Fraction(1, 3)]))
    heads = []
    for _ in range(draw(st.integers(1, 3))):
        m = random_dplr(draw, draw(st.integers(1, 4)), r, step, draw(st.booleans()))
        g = gaussian(12, 6)
        cts = [[draw(g) for _ in range(m.N)] for _ in range(draw(st.integers(1, 3)))]
        heads.append((m, cts))
    return heads, step, draw(st.integers(1, 12))


def _rows_hold_exact_kernels(heads, step, L: int, mid, rad, failed) -> int:
    """Each row not in ``failed`` (head-major, then C~) contains its exact kernel: that of
    C = (I - Abar^M)^-* C~, whose filter is exactly what the route evaluates (skipped when
    I - Abar^M is singular: no C has that C~).  Returns how many rows were checked."""
    from s4cert.algorithms.s4.c_tilde import c_from_c_tilde
    from s4cert.arith import ExactField
    M = 1 << max(0, (L - 1).bit_length())
    E = ExactField(4)
    rows = [(m, ct) for m, cts in heads for ct in cts]
    assert len(rows) == len(mid)
    checked = 0
    for row, (m, ct) in enumerate(rows):
        if row in failed:
            assert failure_is_justified(m, step, M, failed[row]), (row, failed[row])
            continue
        back = c_from_c_tilde(E, m, step, M, [E.from_number(x) for x in ct], method="dense-squaring")
        if not back.ok:
            continue
        exact = exact_kernel(_with_c(m, [E.to_fractions(x) for x in back.value]), step, L)
        for mm, r, (re, im) in zip(mid[row], rad[row], exact):
            assert disk_holds_exact(complex(mm), float(r), re, im)
        checked += 1
    return checked


def failure_is_justified(m: DPLR, step, M: int, why: str) -> bool:
    """Whether a kernel reported failed has the reason its exact (Gaussian-rational) model
    gives: an exceptional index lambda_j = -2/step (the arrays leave those to the balls), a
    pole mu_j = 0 (lambda_j = 2/step) or a singular G = I - (step/2) A (decided exactly by
    the bilinear solver) where G is checked, a rank above two, or a pole within float64
    reach of a root (proofs/midrad_filter.md, Lemma 9: below about 5 R_0, checked as
    2^-60).  Nothing else may go uncertified."""
    from s4cert.algorithms.s4.solver import bilinear
    from s4cert.arith import ExactField
    a = Fraction(2) / Fraction(step)
    lam = [complex_fraction(x) for x in m.Lambda]
    exc = [j for j, x in enumerate(lam) if x == (-a, 0)]
    if "exceptional" in why:
        return bool(exc)
    if "mu_j is not certainly nonzero" in why:
        return (a, 0) in lam
    if "W(0)" in why:
        return bilinear(ExactField(4), m, step).status == "singular-bilinear-matrix"
    if "ranks one and two" in why:
        return m.r > 2
    return "pole lies too close" in why and pole_near_the_grid(m, step, M, exc)


def complex_fraction(x) -> tuple:
    """A Gaussian rational given as (re, im) or a number, as a pair of Fractions."""
    re, im = x if isinstance(x, tuple) else (x, 0)
    return Fraction(re), Fraction(im)


@given(layer())
def test_every_kernel_is_contained(problem):
    """Random heads, ranks 1 and 2, exceptional indices: each kernel's disks contain its
    exact kernel (the kernel of C = (I - Abar^M)^-* C~, whose filter is exactly what the
    route evaluates), or the kernel is reported failed."""
    from s4cert.certs.routing import exact_partition
    heads, step, L = problem
    batch = [Head(m, cts, exact_partition(m, step)) for m, cts in heads]
    mid, rad, failed = filter_kernels_midrad(batch, step, L)
    _rows_hold_exact_kernels(heads, step, L, mid, rad, failed)


def test_every_dissipative_kernel_is_certified():
    """Layers of dissipative heads (tests.helpers.dissipative_dplr: no pole within 1/400 of
    the circle, G invertible, I - Abar^M and every W(z_k) regular), ranks 1 and 2, some with
    an exceptional index: no kernel is reported failed and every one contains its exact
    kernel: all 16 of 16."""
    from s4cert.certs.routing import exact_partition
    certified, rows = 0, 0
    for layer_seed in range(4):
        step, r = [Fraction(1, 2), Fraction(1, 3)][layer_seed % 2], 1 + layer_seed // 2
        heads = []
        for h in range(2):
            seed = 10 * layer_seed + h
            m = dissipative_dplr(seed, 1 + seed % 4, r, step, exceptional=h == 1)
            heads.append((m, [[(Fraction(k + 1, 3), Fraction(j - k, 5)) for j in range(m.N)] for k in range(2)]))
        batch = [Head(m, cts, exact_partition(m, step)) for m, cts in heads]
        mid, rad, failed = filter_kernels_midrad(batch, step, 12)
        certified += _rows_hold_exact_kernels(heads, step, 12, mid, rad, failed)
        rows += len(mid)
    assert certified == rows == 16


def _closed(half: list) -> list:
    """The conjugate-closed vector [x, conj x] of Gaussian rationals (re, im)."""
    return half + [(re, -im) for re, im in half]


@st.composite
def closed_layer(draw):
    """Heads of conjugate-closed Gaussian-rational models (state j + n paired with j), each
    with conjugate-closed output vectors C~, as a checkpoint's full state is."""
    r = draw(st.integers(1, 2))
    step = draw(st.sampled_from([Fraction(1, 2), Fraction(1, 3)]))
    g = gaussian(12, 6)
    heads = []
    for _ in range(draw(st.integers(1, 2))):
        n = draw(st.integers(1, 2))
        vec = lambda: _closed([draw(g) for _ in range(n)])
        lam = vec()
        P = [list(row) for row in zip(*[vec() for _ in range(r)])]
        Q = [list(row) for row in zip(*[vec() for _ in range(r)])]
        m = DPLR(lam, P, vec(), vec(), Q=Q)
        heads.append((m, [vec() for _ in range(draw(st.integers(1, 2)))]))
    return heads, step, draw(st.integers(3, 24))


@given(closed_layer())
def test_conjugate_closed_heads_on_half_the_roots_are_contained(problem):
    """With ``conjugate_pairs`` the sums and H run on the roots k <= M/2 and the rest is
    their conjugate (Lemma 3): every kernel's disks still contain its exact kernel, and the
    half route ran (M >= 4, no exceptional index)."""
    from s4cert.certs.routing import exact_partition
    heads, step, L = problem
    batch = [Head(m, cts, exact_partition(m, step), conjugate_pairs=True) for m, cts in heads]
    used = []
    real_prepare = layer_pass._prepare

    def spy(*args):
        p = real_prepare(*args)
        used.append(p.half)
        return p
    layer_pass._prepare = spy
    try:
        mid, rad, failed = filter_kernels_midrad(batch, step, L)
    finally:
        layer_pass._prepare = real_prepare
    assert all(used)   # every head that got through its set-up ran on half the roots
    _rows_hold_exact_kernels(heads, step, L, mid, rad, failed)


@pytest.mark.parametrize("chunk", [1 << 19, 64])
def test_legs_layer_matches_the_single_route(monkeypatch, chunk):
    """Heads of LegS at different steps, three channels each, in one chunk and in chunks of
    one kernel: every kernel's disks contain the 320-bit run, and the radii are within a
    factor 2 of the single-kernel route's."""
    monkeypatch.setattr(layer_pass, "CHUNK_DISKS", chunk)
    base = dplr_float64("legs", 8)
    rng = np.random.default_rng(1)
    L, heads, steps = 64, [], [0.01, 0.1]
    for _ in steps:
        heads.append([list(rng.standard_normal(8) + 1j * rng.standard_normal(8)) for _ in range(3)])
    # one step per call: the route takes one step for all heads
    for step, cts in zip(steps, heads):
        mid, rad, failed = filter_kernels_midrad([Head(base, cts), Head(base, cts[:1])], step, L)
        assert not failed and mid.shape == (4, L)
        for k, ct in enumerate(cts + cts[:1]):
            ref = filter_kernel(REF, base, step, L, c_tilde=ct, cauchy="direct")
            one = filter_kernel_midrad(base, step, L, c_tilde=ct, quotient=False)   # the pass's own transfer
            assert ref.ok and one.ok
            for mm, r, b in zip(mid[k], rad[k], ref.value):
                assert disk_holds_ball(complex(mm), float(r), b)
            assert float(rad[k].max()) <= 2 * float(one.value[1].max())


def test_a_failing_head_leaves_the_others():
    """A head whose partition cannot be decided (a ball lambda containing -2/step) is
    reported for each of its kernels; the other head's kernels come back contained."""
    from flint import acb, arb
    good = DPLR([-1.0, -2.5], [0.5, 0.25], [1, 1], [1, -1])
    bad = DPLR([acb(arb(-4, 1e-3)), -1.0], [0.5, 0.25], [1, 1], [1, -1])
    cts = [[1, -1], [0.5j, 2]]
    mid, rad, failed = filter_kernels_midrad([Head(bad, cts), Head(good, cts)], 0.5, 16)
    assert sorted(failed) == [0, 1] and "undecided" in failed[0]
    assert np.all(np.isinf(rad[:2])) and np.all(np.isfinite(rad[2:]))
    for k, ct in zip((2, 3), cts):
        ref = filter_kernel(REF, good, 0.5, 16, c_tilde=ct, cauchy="direct")
        for mm, r, b in zip(mid[k], rad[k], ref.value):
            assert disk_holds_ball(complex(mm), float(r), b)


def test_a_head_whose_g_is_singular_fails_when_checked():
    """With ``check_g`` (C~ given), a head whose G = I - (step/2) A is singular (W(0) = 0,
    proofs/ball_mode.md Lemma G) is not run; the same check passes a generic head."""
    singular = DPLR([-1.0], [[-5.0]], [1.0], [1.0], Q=[[1.0]])    # step 1/2: G = 1 - (1/4)(-1 + 5) = 0
    good = DPLR([-1.0, -2.5], [0.5, 0.25], [1, 1], [1, -1])
    mid, rad, failed = filter_kernels_midrad([Head(singular, [[1.0]], check_g=True),
                                              Head(good, [[1, -1]], check_g=True)], 0.5, 16)
    assert list(failed) == [0] and "not certified invertible" in failed[0]
    assert np.all(np.isinf(rad[0])) and np.all(np.isfinite(rad[1]))


def test_a_chunk_that_cannot_decide_is_retried_head_by_head(monkeypatch):
    """When the per-root stage of a chunk raises (an undecided pivot, say) for one head's
    kernels, the chunk's heads are run again one by one: only that head's kernels are
    reported, and the others come back exactly as in a run where nothing failed."""
    from s4cert.arith.midrad import RangeError
    models = [DPLR([-1.0, -2.5], [0.5, 0.25], [1, 1], [1, -1]), DPLR([-0.5, -3.0], [0.25, 1], [1, 2], [1, 1]),
              DPLR([-2.0, -1.5], [1, 0.5], [2, 1], [1, -1])]
    cts = [[1, -1], [0.5j, 2]]
    heads = [Head(m, cts) for m in models]
    clean = filter_kernels_midrad(heads, 0.5, 16)
    real_prepare, real_chunk, marked = layer_pass._prepare, layer_pass._chunk, []

    def prepare(head, *args):
        p = real_prepare(head, *args)
        if head is heads[1]:
            marked.append(p)
        return p

    def chunk(prepared, *args):
        if any(p is marked[0] for p in prepared):
            raise RangeError("a pivot is not certainly nonzero")
        return real_chunk(prepared, *args)
    monkeypatch.setattr(layer_pass, "_prepare", prepare)
    monkeypatch.setattr(layer_pass, "_chunk", chunk)
    mid, rad, failed = filter_kernels_midrad(heads, 0.5, 16)
    assert sorted(failed) == [2, 3] and "pivot" in failed[2]
    assert np.all(np.isinf(rad[2:4]))
    for k in (0, 1, 4, 5):
        assert np.array_equal(mid[k], clean[0][k]) and np.array_equal(rad[k], clean[1][k])


def test_bad_input():
    m1 = DPLR([-1.0], [0.5], [1], [1])
    m2 = DPLR([-1.0], [[0.5, 1]], [1], [1], Q=[[1, 1]])
    with pytest.raises(ValueError):
        filter_kernels_midrad([Head(m1, [[1]]), Head(m2, [[1]])], 0.5, 4)
    with pytest.raises(ValueError):
        filter_kernels_midrad([Head(m1, [[1]])], 0.5, 0)
    mid, rad, failed = filter_kernels_midrad([], 0.5, 4)
    assert mid.shape == (0, 4) and not failed


@pytest.mark.parametrize("K", [1, 2, 5])
def test_paired_inverse_transforms_contain_both_real_kernels(K):
    """Lemma 4: rows of exactly Hermitian disks (random centres, random radii, true values
    Hermitian points inside them), two per transform: every true real kernel entry lies in
    its row's disk.  The reference transform is a 200-bit ball sum over exact roots."""
    from flint import acb, arb, ctx, fmpq
    from s4cert.arith.midrad import roots_of_unity
    M = 16
    rng = np.random.default_rng(K)
    half = rng.standard_normal((K, M // 2 + 1)) + 1j * rng.standard_normal((K, M // 2 + 1))
    half[:, 0], half[:, M // 2] = half[:, 0].real, half[:, M // 2].real
    mid = np.concatenate([half, np.conj(half[:, M // 2 - 1:0:-1])], axis=1)
    rad = np.abs(rng.standard_normal((K, M // 2 + 1))) * 1e-9
    rad = np.concatenate([rad, rad[:, M // 2 - 1:0:-1]], axis=1)
    shift = rng.standard_normal((K, M // 2 + 1)) * 0.7e-9 * (1 + 0j)   # a Hermitian truth inside the disks
    shift = np.clip(shift.real, -1, 1)
    shift = shift * np.minimum(1.0, rad[:, :M // 2 + 1] / np.maximum(np.abs(shift), 1e-300)) * 0.5
    true_half = half + shift
    true = np.concatenate([true_half, np.conj(true_half[:, M // 2 - 1:0:-1])], axis=1)
    got, R = layer_pass._paired_idft(mid.copy(), rad, roots_of_unity(M))
    with ctx.workprec(200):
        for i in range(K):
            for j in range(M):
                s = acb(0)
                for k in range(M):
                    s += acb(true[i, k].real, true[i, k].imag) * acb.exp_pi_i(acb(fmpq(2 * k * j, M)))
                s /= M
                assert abs(s.imag) < arb(2) ** -150             # the kernel is real
                assert abs(s.real - arb(float(got[i, j].real))) < arb(float(R[i, j]))
