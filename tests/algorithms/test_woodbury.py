from hypothesis import given, strategies as st

from s4cert.algorithms.linalg import cdot, matmul, solve
from s4cert.algorithms.woodbury import prepare, woodbury_solve
from s4cert.arith import BallField, ExactField, Truth
from tests.algorithms.test_linalg import cofactor_det
from tests.helpers import AMPLE_PREC, all_exact_equal, assert_ball_run_agrees, exact_equal, gaussian, seeded_gaussian

E = ExactField(4)


def draw_problem(data):
    N = data.draw(st.integers(1, 6))
    r = data.draw(st.integers(1, 3))
    g = lambda: E.from_number(data.draw(gaussian()))
    d = [g() for _ in range(N)]
    U = [[g() for _ in range(r)] for _ in range(N)]
    V = [[g() for _ in range(r)] for _ in range(N)]
    b = [g() for _ in range(N)]
    return d, U, V, b


def dense(d, U, V):
    N = len(d)
    return [[E.add(d[i] if i == j else E.zero(), cdot(E, V[j], U[i])) for j in range(N)] for i in range(N)]


@given(data=st.data())
def test_woodbury_equals_dense_solve(data):
    d, U, V, b = draw_problem(data)
    w = woodbury_solve(E, d, U, V, b)
    ref = solve(E, dense(d, U, V), b)
    if any(E.is_zero(x) is Truth.TRUE for x in d):
        assert w.status == "singular"
        return
    # D invertible: W is singular exactly when D + U V* is
    assert w.status == ref.status
    if w.ok:
        assert all_exact_equal(E, w.value, ref.value)


def test_singular_correction_reported():
    one, two = E.one(), E.from_number(2)
    # D = I, U V* = -e1 e1^T: D + U V* is singular; W = 1 - 1 = 0
    d = [one, one]
    U = [[E.from_number(-1)], [E.zero()]]
    V = [[one], [E.zero()]]
    res = woodbury_solve(E, d, U, V, [one, two])
    assert res.status == "singular" and "W" in res.info["reason"]


@given(prec=st.integers(30, 300), data=st.data())
def test_ball_contains_exact(prec, data):
    d, U, V, b = draw_problem(data)
    ref = woodbury_solve(E, d, U, V, b)
    B = BallField(prec)
    tb = lambda x: B.from_number(E.to_fractions(x))
    got = woodbury_solve(B, [tb(x) for x in d], [[tb(x) for x in r] for r in U], [[tb(x) for x in r] for r in V],
                         [tb(x) for x in b])
    assert_ball_run_agrees(got, ref, E)
    if not ref.ok and got.status == "singular":  # the same reason: a zero of D, or a singular W
        assert got.info["reason"] == ref.info["reason"]


def test_ball_woodbury_decides_at_ample_precision():
    """At AMPLE_PREC bits the ball solve decides every problem of a fixed list of random
    ones (the exact status, with enclosures where ok): all 12, and every exactly regular
    one is certified."""
    import random
    decided, regular = 0, 0
    for seed in range(12):
        rng = random.Random(seed)
        N, r = 1 + seed % 6, 1 + seed % 3
        g = lambda: seeded_gaussian(rng)
        d, b = [g() for _ in range(N)], [g() for _ in range(N)]
        U, V = [[g() for _ in range(r)] for _ in range(N)], [[g() for _ in range(r)] for _ in range(N)]
        ref = woodbury_solve(E, [E.from_number(x) for x in d], [[E.from_number(x) for x in row] for row in U],
                             [[E.from_number(x) for x in row] for row in V], [E.from_number(x) for x in b])
        B = BallField(AMPLE_PREC)
        got = woodbury_solve(B, [B.from_number(x) for x in d], [[B.from_number(x) for x in row] for row in U],
                             [[B.from_number(x) for x in row] for row in V], [B.from_number(x) for x in b])
        decided += assert_ball_run_agrees(got, ref, E)
        regular += ref.ok
        assert got.ok or not ref.ok
    assert decided == 12 and regular >= 1


@given(data=st.data())
def test_inverse_formula(data):
    """det(D + U V*) = det D det W (statement 1), and, when W is invertible, the
    explicit X = D^-1 - D^-1 U W^-1 V* D^-1 (W^-1 by cofactors) satisfies
    (D + U V*) X = X (D + U V*) = I (statement 2), and Woodbury.solve applied to the
    unit vectors returns the columns of X."""
    N = data.draw(st.integers(1, 5))
    r = data.draw(st.integers(1, 3))
    g = lambda: E.from_number(data.draw(gaussian(6, 3)))
    d = [E.from_number(data.draw(gaussian(6, 3).filter(lambda v: v != (0, 0)))) for _ in range(N)]
    U = [[g() for _ in range(r)] for _ in range(N)]
    V = [[g() for _ in range(r)] for _ in range(N)]
    if data.draw(st.booleans()):
        # U V* = -d_j e_j e_j^T: row j of D + U V* vanishes, and W_00 = 1 - 1 = 0
        j = data.draw(st.integers(0, N - 1))
        U = [[E.zero()] * r for _ in range(N)]
        V = [[E.zero()] * r for _ in range(N)]
        U[j][0] = E.neg(d[j])
        V[j][0] = E.one()  # W[0][0] = 1 + conj(1) d_j^-1 (-d_j) = 0
    G = dense(d, U, V)
    Dinv = [[E.div(E.one(), d[i]) if i == j else E.zero() for j in range(N)] for i in range(N)]
    Vs = [[E.conj(V[j][i]) for j in range(N)] for i in range(r)]
    DinvU = matmul(E, Dinv, U)
    W = [[E.add(E.one() if i == k else E.zero(), x) for k, x in enumerate(row)]
         for i, row in enumerate(matmul(E, Vs, DinvU))]
    detD = E.one()
    for x in d:
        detD = E.mul(detD, x)
    detW = cofactor_det(E, W)
    assert exact_equal(E, cofactor_det(E, G), E.mul(detD, detW))
    p = prepare(E, d, U, V)
    if E.is_zero(detW) is Truth.TRUE:
        assert p.status == "singular" and "W" in p.info["reason"]
        return
    # W^-1 = adj(W) / det W
    minor = lambda M_, i, j: [row[:j] + row[j + 1:] for k, row in enumerate(M_) if k != i]
    Winv = [[E.div(cofactor_det(E, minor(W, j, i)) if (i + j) % 2 == 0 else E.neg(cofactor_det(E, minor(W, j, i))),
                   detW) for j in range(r)] for i in range(r)]
    corr = matmul(E, matmul(E, DinvU, Winv), matmul(E, Vs, Dinv))
    X = [[E.sub(a, c) for a, c in zip(ra, rc)] for ra, rc in zip(Dinv, corr)]
    I = [[E.one() if i == j else E.zero() for j in range(N)] for i in range(N)]
    for P_ in (matmul(E, G, X), matmul(E, X, G)):
        assert all(all_exact_equal(E, a, b) for a, b in zip(P_, I))
    assert p.ok
    for j in range(N):
        col = p.value.solve(E, I[j])
        assert all_exact_equal(E, col, [X[i][j] for i in range(N)])
