"""Dense elimination (Lemma E of proofs/woodbury.md) against references that do not
eliminate: the system checked by multiplying out, singularity by a cofactor
determinant, and ball runs against exact ones."""
from fractions import Fraction

from flint import acb
from hypothesis import given, strategies as st

from s4cert.algorithms.linalg import lu, lu_solve, solve
from s4cert.arith import BallField, ExactField, Truth
from tests.helpers import all_enclose, all_exact_equal, exact_equal, gaussian

E = ExactField(4)


def cofactor_det(F, A: list[list]):
    """det A by expansion along the first row (n! terms; for small n only)."""
    n = len(A)
    if n == 0:
        return F.one()
    if n == 1:
        return A[0][0]
    acc = F.zero()
    for j in range(n):
        if F.is_zero(A[0][j]) is Truth.TRUE:
            continue
        minor = [row[:j] + row[j + 1:] for row in A[1:]]
        term = F.mul(A[0][j], cofactor_det(F, minor))
        acc = F.add(acc, term) if j % 2 == 0 else F.sub(acc, term)
    return acc


def times(F, A: list[list], x: list) -> list:
    """A x by its definition, entry by entry."""
    out = []
    for row in A:
        acc = F.zero()
        for a, y in zip(row, x):
            acc = F.add(acc, F.mul(a, y))
        out.append(acc)
    return out


@st.composite
def matrices(draw, max_n: int = 5):
    """Square Gaussian-rational matrices, often built singular (a row or column
    combination of others, a zero column), with small entries so that singular ones
    also arise by chance; and a right-hand side."""
    n = draw(st.integers(1, max_n))
    g = gaussian(4, 2)
    A = [[draw(g) for _ in range(n)] for _ in range(n)]
    E_ = lambda v: E.from_number(v)
    A = [[E_(v) for v in row] for row in A]
    kind = draw(st.sampled_from(["random", "row", "column", "zero-column"]))
    i = draw(st.integers(0, n - 1))
    if kind == "row" and n >= 2:
        j, k = draw(st.integers(0, n - 1)), draw(st.integers(0, n - 1))
        if j != i and k != i:
            c1, c2 = E_(draw(g)), E_(draw(g))
            A[i] = [E.add(E.mul(c1, x), E.mul(c2, y)) for x, y in zip(A[j], A[k])]
    elif kind == "column" and n >= 2:
        j = draw(st.integers(0, n - 1))
        if j != i:
            c = E_(draw(g))
            for row in A:
                row[i] = E.mul(c, row[j])
    elif kind == "zero-column":
        for row in A:
            row[i] = E.zero()
    b = [E_(draw(g)) for _ in range(n)]
    return A, b


@given(Ab=matrices())
def test_solve_satisfies_the_system(Ab):
    """Lemma E: ``singular`` exactly when det A = 0; otherwise A x = b exactly."""
    A, b = Ab
    det = cofactor_det(E, A)
    res = solve(E, A, b)
    if E.is_zero(det) is Truth.TRUE:
        assert res.status == "singular"
    else:
        assert res.ok
        assert all_exact_equal(E, times(E, A, res.value), b)


def test_solve_small_cases():
    n = E.from_number
    # a zero pivot in the first position forces a row exchange
    res = solve(E, [[n(0), n(1)], [n(2), n(3)]], [n(1), n(4)])
    assert res.ok and all_exact_equal(E, res.value, [n(Fraction(1, 2)), n(1)])
    # rows 0 and 2 equal: singular although no column is zero
    A = [[n(1), n(2), n(3)], [n(0), n(1), n(4)], [n(1), n(2), n(3)]]
    assert solve(E, A, [n(1), n(1), n(1)]).status == "singular"
    assert exact_equal(E, cofactor_det(E, A), E.zero())


def widen(B: BallField, x, shift: tuple[Fraction, Fraction]):
    """A ball containing the exact value x whose midpoint is moved towards x + shift:
    the union of enclosures of x and of x + shift."""
    bx = B.from_number(E.to_fractions(x))
    return bx.union(B.add(bx, B.from_number(shift)))


@given(Ab=matrices(4), prec=st.integers(30, 200), data=st.data())
def test_ball_lu_status_is_exact_or_undecided(Ab, prec, data):
    """Entries given as balls around the exact values, some with moved midpoints (so
    the ball run may pick other pivots, or leave candidates undecided): the ball
    status is the exact status or ``undecided``; when ``ok``, the solution balls
    contain the exact solution."""
    A, b = Ab
    B = BallField(prec)
    shift = gaussian(1, 4)
    Ab_ = [[widen(B, x, data.draw(shift)) if data.draw(st.booleans()) else B.from_number(E.to_fractions(x))
            for x in row] for row in A]
    bb = [B.from_number(E.to_fractions(x)) for x in b]
    exact = lu(E, A)
    got = lu(B, Ab_)
    assert got.status in (exact.status, "undecided")
    if got.ok:
        assert all_enclose(lu_solve(B, got.value, bb), E, lu_solve(E, exact.value, b))


def test_ball_pivots_differ_from_exact_ones():
    """Two runs where the ball pivot is another row than the exact pivot: the status
    and the enclosure of the solution still agree with the exact run."""
    n = E.from_number
    B = BallField(100)
    cases = [
        # entry (1, 0) given as a ball around 3 that contains 0: undecided, not a pivot
        ([[1, 2], [3, 40]], {(1, 0): (-4, 0)}),
        # entry (0, 0) given as a ball around 2 with midpoint 4 > 3: preferred pivot
        ([[2, 1], [3, 10]], {(0, 0): (4, 0)}),
    ]
    for rows, shifts in cases:
        A = [[n(v) for v in row] for row in rows]
        b = [n(1), n(-2)]
        Ab_ = [[widen(B, A[i][j], shifts[(i, j)]) if (i, j) in shifts else B.from_number(rows[i][j])
                for j in range(2)] for i in range(2)]
        exact, got = lu(E, A), lu(B, Ab_)
        assert exact.ok and got.ok
        assert exact.value.perm != got.value.perm
        x = lu_solve(E, exact.value, b)
        assert all_exact_equal(E, times(E, A, x), b)
        assert all_enclose(lu_solve(B, got.value, [acb(1), acb(-2)]), E, x)
