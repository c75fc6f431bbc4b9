import pytest
from hypothesis import given, strategies as st

from s4cert.algorithms.dft import dft, idft, polymul
from s4cert.arith import BallField, Counting, ExactField, Float64Field
from tests.helpers import all_enclose, all_exact_equal, gaussian

E = ExactField(32)
lengths = st.sampled_from([1, 2, 4, 8, 16, 32])


def vec(draw_list):
    return [E.from_number(v) for v in draw_list]


@given(M=lengths, data=st.data())
def test_dft_matches_definition_and_inverts(M, data):
    a = vec(data.draw(st.lists(gaussian(), min_size=M, max_size=M)))
    got = dft(E, a)
    want = []
    for k in range(M):
        acc = E.zero()
        for j in range(M):
            acc = E.add(acc, E.mul(a[j], E.root_of_unity(M, j * k)))
        want.append(acc)
    assert all_exact_equal(E, got, want)
    assert all_exact_equal(E, idft(E, got), a)
    assert all_exact_equal(E, dft(E, idft(E, a)), a)


@pytest.mark.parametrize("M", [1, 2, 4, 8, 16])
def test_dft_matrix_is_unitary_up_to_M(M):
    """F* F = M I, with F's columns the transforms of the unit vectors."""
    cols = [dft(E, [E.one() if i == j else E.zero() for i in range(M)]) for j in range(M)]
    for j in range(M):
        for l in range(M):
            acc = E.zero()
            for k in range(M):
                acc = E.add(acc, E.mul(E.conj(cols[j][k]), cols[l][k]))
            assert all_exact_equal(E, [acc], [E.from_number(M if j == l else 0)])


@given(data=st.data())
def test_polymul_equals_schoolbook(data):
    p = vec(data.draw(st.lists(gaussian(), min_size=1, max_size=9)))
    q = vec(data.draw(st.lists(gaussian(), min_size=1, max_size=8)))
    want = [E.zero()] * (len(p) + len(q) - 1)
    for i, x in enumerate(p):
        for j, y in enumerate(q):
            want[i + j] = E.add(want[i + j], E.mul(x, y))
    assert all_exact_equal(E, polymul(E, p, q), want)
    assert polymul(E, [], q) == []


@given(prec=st.integers(30, 300), M=lengths, data=st.data())
def test_ball_transforms_contain_exact(prec, M, data):
    raw = data.draw(st.lists(gaussian(), min_size=M, max_size=M))
    exact_f, exact_i = dft(E, vec(raw)), idft(E, vec(raw))
    for F in (BallField(prec), Counting(BallField(prec))):  # fast primitive, then generic recursion
        a = [F.from_number(v) for v in raw]
        unwrap = (lambda xs: [x.v for x in xs]) if isinstance(F, Counting) else (lambda xs: xs)
        assert all_enclose(unwrap(dft(F, a)), E, exact_f)
        assert all_enclose(unwrap(idft(F, a)), E, exact_i)
    p, q = raw[: M // 2 + 1], raw[M // 2:]
    B = BallField(prec)
    assert all_enclose(polymul(B, [B.from_number(v) for v in p], [B.from_number(v) for v in q]), E,
                       polymul(E, vec(p), vec(q)))


def test_float64_primitive_follows_convention():
    F = Float64Field()
    out = dft(F, [0, 1, 0, 0])  # forward: w^k with w = exp(-2 pi i/4) = -i
    assert out == [1, -1j, -1, 1j]
    assert idft(F, out) == [0, 1, 0, 0]


def test_bad_lengths():
    for n in (0, 3, 6, 12):
        with pytest.raises(ValueError):
            dft(E, [E.one()] * n)
        with pytest.raises(ValueError):
            idft(E, [E.one()] * n)
