"""Exact routing of certify_kernel against exact filters: collisions (Lemma R: poles at
1 and +-i), the singular correction decided in Q(zeta_m) (both outcomes, reached through
certify_kernel), problem numbers given as balls, and the precision-limit refusals."""
from __future__ import annotations

import math
from fractions import Fraction

import pytest
from flint import acb, arb, ctx

import s4cert.certs.routing as routing
from s4cert.algorithms.dft import next_power_of_two
from s4cert.algorithms.s4.dplr import DPLR
from s4cert.algorithms.linalg import lu
from s4cert.algorithms.s4.filter import correction_at, filter_kernel
from s4cert.arith import BallField, ExactField, Truth
from s4cert.certs.exact_mode import exact_field_for
from s4cert.certs.errors import CertificationError
from s4cert.certs.kernel import certify_kernel
from tests.helpers import q, point, exact_kernel

E4 = ExactField(4)
Q2 = tuple[Fraction, Fraction]
ZERO, ONE = Fraction(0), Fraction(1)


# -- exact Gaussian-rational arithmetic on (re, im) pairs, for the references ----------

def g(x) -> Q2:
    return x if isinstance(x, tuple) else (Fraction(x), ZERO)


def mul(x: Q2, y: Q2) -> Q2:
    return (x[0] * y[0] - x[1] * y[1], x[0] * y[1] + x[1] * y[0])


def sub(x: Q2, y: Q2) -> Q2:
    return (x[0] - y[0], x[1] - y[1])


def div(x: Q2, y: Q2) -> Q2:
    d = y[0] * y[0] + y[1] * y[1]
    return ((x[0] * y[0] + x[1] * y[1]) / d, (x[1] * y[0] - x[0] * y[1]) / d)


def power(x: Q2, n: int) -> Q2:
    out = (ONE, ZERO)
    for _ in range(n):
        out = mul(out, x)
    return out





def assert_encloses(ck, exact) -> None:
    with ctx.workprec(4096):
        for j, (re, im) in enumerate(exact):
            m = ck.mid[j]
            assert abs(point(re - Fraction(m.real), im - Fraction(m.imag))) <= arb(ck.rad[j])
            assert ck.balls[j].contains(point(re, im))


# -- collisions (ball_mode.md section 1, Lemma R) ----------------------------------------

def lam_for_pole(mu: Q2, a: Fraction) -> Q2:
    """lambda with (a - lambda)/(a + lambda) = mu, i.e. lambda = a (1 - mu)/(1 + mu)."""
    one = (ONE, ZERO)
    return mul((a, ZERO), div(sub(one, mu), (ONE + mu[0], mu[1])))


POLES = {
    "1": (ONE, ZERO),
    "i": (ZERO, ONE),
    "-i": (ZERO, -ONE),
    "(3+4i)/5": (Fraction(3, 5), Fraction(4, 5)),  # on the unit circle, not a root of unity
    "(3-4i)/5": (Fraction(3, 5), Fraction(-4, 5)),
    "i(1+2^-30)": (ZERO, 1 + Fraction(1, 2**30)),  # near the grid point i, off the circle
    "-i(1-2^-30)": (ZERO, -1 + Fraction(1, 2**30)),
    "3": (Fraction(3), ZERO),
}


@pytest.mark.parametrize("M", [1, 2, 4, 8, 16])
@pytest.mark.parametrize("name", sorted(POLES))
def test_exact_collisions_agree_with_the_exact_filter(name, M):
    """exact_collisions returns exactly the regular j with mu_j^M = 1 (decided here by
    exact powers), the exact filter reports resonant-diagonal exactly then, and
    certify_kernel refuses exactly then (with an exceptional index present)."""
    step = Fraction(1, 2)
    a = 2 / step
    lam = [lam_for_pole(POLES[name], a), (-a, ZERO), (Fraction(-1), Fraction(1, 3))]
    m = DPLR(lam, [0, 0, 0], [1, (1, 2), Fraction(1, 3)], [(1, -1), 1, 2])
    exc = routing.exact_partition(m, step)
    assert exc == [1]
    hit = routing.exact_collisions(m, step, M, exc)
    on_grid = [j for j in (0, 2) if power(div(sub((a, ZERO), lam[j]), (a + lam[j][0], lam[j][1])), M) == (ONE, ZERO)]
    assert hit == on_grid
    assert (hit == [0]) == (name == "1" or (name in ("i", "-i") and M >= 4))
    E = exact_field_for(m.N, M)
    ref = filter_kernel(E, m, step, M, c_tilde=[1, 1, 1], exceptional=exc)
    assert (ref.status == "resonant-diagonal") == bool(hit)
    if not hit:
        assert ref.ok
    if hit:
        with pytest.raises(CertificationError, match=r"resonant-diagonal: pole mu_0 .*decided exactly"):
            certify_kernel(m, step, M, 1e-9, counts=False)
    else:
        ck = certify_kernel(m, step, M, 1e-9, counts=False)
        assert ck.certificate["routing"] == "exact" and ck.certificate["partition"] == [1]
        assert_encloses(ck, exact_kernel(m, step, M))


def test_exact_inputs_and_partition():
    """exact_inputs: numbers and balls of radius 0 are exact, a ball of positive radius is
    not; exact_partition selects lambda_j = -2/step exactly (a float step read as its binary
    value), skips ball entries certainly different from -2/step and answers None for a ball
    entry containing it; exact_collisions leaves ball entries to the ball run."""
    m = DPLR([-4, (-4, 0), (-4, Fraction(1, 10**30)), -4 + 2.0 ** -50, Fraction(-8, 2), acb(-4)],
             [1] * 6, [1] * 6, [1] * 6)
    assert routing.exact_inputs(m, 0.5) and routing.exact_partition(m, 0.5) == [0, 1, 4, 5]
    assert routing.exact_partition(m, 0.5 + 2.0 ** -52) == []
    with ctx.workprec(64):
        blurred = acb(arb(-4, 2.0 ** -40))
        apart = acb(arb(-3, 2.0 ** -40))
    assert not routing.exact_inputs(DPLR([blurred], [1], [1], [1]), 0.5)
    assert not routing.exact_inputs(m, 0.5, c_tilde=[1] * 5 + [acb(arb(1, 2.0 ** -40))])
    assert not routing.exact_inputs(m, arb(0.5, 2.0 ** -60))
    assert routing.exact_partition(DPLR([blurred, -4], [1, 1], [1, 1], [1, 1]), 0.5) is None
    assert routing.exact_partition(DPLR([apart, -4], [1, 1], [1, 1], [1, 1]), 0.5) == [1]
    on_grid = (Fraction(0), Fraction(-4))  # lambda = -4i at a = 4: mu = i
    with ctx.workprec(64):
        ball_on_grid = acb(arb(0, 2.0 ** -40), arb(-4, 2.0 ** -40))
    assert routing.exact_collisions(DPLR([on_grid, ball_on_grid], [1, 1], [1, 1], [1, 1]), 0.5, 4, []) == [0]


# -- the singular correction in Q(zeta_m) -------------------------------------------------

def _poly_mul(E, p: list, r: list) -> list:
    out = [E.zero()] * (len(p) + len(r) - 1)
    for i, x in enumerate(p):
        for j, y in enumerate(r):
            out[i + j] = E.add(out[i + j], E.mul(x, y))
    return out


def s_of_root(E, m: int, k: int, a: Fraction):
    z = E.root_of_unity(m, k)
    return E.div(E.mul(E.from_number(a), E.sub(E.one(), z)), E.add(E.one(), z))


def min_poly_of_s(m: int, k: int, a: Fraction) -> list[Q2]:
    """The monic polynomial over Q(i) whose roots are s(z) = a(1 - z)/(1 + z) at the
    conjugates z = zeta^(kj), j = 1 mod 4, of z_k = exp(-2 pi i k/m) over Q(i) (its
    coefficients are Gaussian rationals: to_fractions would raise otherwise)."""
    E = ExactField(max(4, m))
    p = [E.one()]
    for j in range(1, max(m, 4), 4):
        p = _poly_mul(E, p, [E.neg(s_of_root(E, m, k * j, a)), E.one()])
    return [E.to_fractions(c) for c in p]


def model_with_W_numerator(p: list[Q2], lams: list[Q2]) -> DPLR:
    """r = 1, Q = 1, P_j = c_j with 1 + sum_j c_j/(x - lambda_j) = p(x) / prod_j (x - lambda_j)
    (partial fractions of the monic p of degree N), so W(z) = 0 exactly where p(s(z)) = 0."""
    assert len(p) == len(lams) + 1 and p[-1] == (ONE, ZERO)
    cs = []
    for j, lj in enumerate(lams):
        num = (ZERO, ZERO)
        for c in reversed(p):
            num = mul(num, lj)
            num = (num[0] + c[0], num[1] + c[1])
        den = (ONE, ZERO)
        for i, li in enumerate(lams):
            if i != j:
                den = mul(den, sub(lj, li))
        cs.append(div(num, den))
    return DPLR(lams, cs, [1] * len(lams), [1] * len(lams), Q=[1] * len(lams))


LAMS = [(Fraction(-1), ZERO), (Fraction(-3), ZERO), (Fraction(-1, 2), ONE), (Fraction(-1, 2), Fraction(-2))]


def singular_by_determinant(m: DPLR, step: Fraction, M: int, k: int) -> bool:
    """det W(z_k) = det(s I - A) / prod_j (s - lambda_j) (determinant lemma, A = Lambda - P Q*),
    so W(z_k) is singular iff s(z_k) I - A is; decided by exact elimination in Q(zeta_M)."""
    E = ExactField(max(4, M))
    s = s_of_root(E, M, k, 2 / step)
    A = m.dense_A(E)
    for lam in m.Lambda:
        assert E.is_zero(E.sub(s, E.from_number(lam))) is Truth.FALSE
    S = [[E.sub(s if i == j else E.zero(), A[i][j]) for j in range(m.N)] for i in range(m.N)]
    return lu(E, S).status == "singular"


CORRECTION_CASES = {
    # W singular at s(z) for z a primitive 8th root: z_1 and z_5 of the 8-point grid
    "order8-k1": (8, 1, 2),
    # the other class of primitive 8th roots over Q(i): z_3, z_7
    "order8-k3": (8, 3, 2),
    # primitive 16th roots z_1, z_5, z_9, z_13 (degree 4 over Q(i))
    "order16-k1": (16, 1, 4),
    # z = -i (k = 1 of 4): s Gaussian rational, N = 1
    "order4-k1": (4, 1, 1),
    # z = 1 (k = 0): s = 0, A singular; correction_singular_at's m = 1 branch
    "order1": (1, 0, 1),
}


@pytest.mark.parametrize("name", sorted(CORRECTION_CASES))
def test_correction_singular_at_matches_exact_elimination(name):
    """For every root z_k != -1 of grids of 4..32 points, correction_singular_at agrees with
    the exact elimination of s(z_k) I - A in Q(zeta_M); both outcomes occur."""
    order, k0, N = CORRECTION_CASES[name]
    step = Fraction(1, 2)
    p = min_poly_of_s(order, k0, 2 / step)
    assert len(p) == N + 1
    m = model_with_W_numerator(p, LAMS[:N])
    seen = set()
    for M in (4, 8, 16, 32):
        for k in range(M):
            if k == M // 2:
                continue
            got = routing.correction_singular_at(m, step, M, k)
            assert got == singular_by_determinant(m, step, M, k), (M, k)
            # z_k is a root of p(s(z)) = 0 iff it is one of the conjugates of z_k0
            expected = order <= M and (k * order) % M == 0 and ((k * order // M) % order) in {
                (k0 * j) % order for j in range(1, max(order, 4), 4)}
            assert got == expected, (M, k)
            seen.add(got)
    assert seen == {True, False}


def _spy(monkeypatch) -> list:
    calls = []
    real = routing.correction_singular_at

    def spy(model, step, M, k):
        out = real(model, step, M, k)
        calls.append((M, k, out))
        return out

    monkeypatch.setattr(routing, "correction_singular_at", spy)
    return calls


@pytest.mark.parametrize("L,root", [(8, 1), (16, 2)])
def test_a_singular_correction_is_decided_exactly_through_certify_kernel(monkeypatch, L, root):
    """W(z) singular at a primitive 8th root: the ball elimination cannot decide (a ball
    around 0), certify_kernel calls correction_singular_at, which decides singular, and the
    refusal is the exact filter's status at the same root."""
    step = Fraction(1, 2)
    m = model_with_W_numerator(min_poly_of_s(8, 1, 2 / step), LAMS[:2])
    M = next_power_of_two(L)
    ball = filter_kernel(BallField(128), m, step, L, exceptional=[])
    assert ball.status == "undecided" and ball.info["stage"] == "correction" and ball.info["root"] == root
    exact = filter_kernel(ExactField(M), m, step, L, c_tilde=[1, 1], exceptional=[])
    assert exact.status == "resonant-correction" and exact.info["root"] == root
    calls = _spy(monkeypatch)
    refusal = rf"resonant-correction: W\(z_{root}\) is singular \(decided exactly\)"
    with pytest.raises(CertificationError, match=refusal):
        certify_kernel(m, step, L, 1e-9, counts=False)
    assert calls == [(M, root, True)]


def test_a_nonsingular_correction_undecided_in_balls_raises_the_precision(monkeypatch):
    """W(z_1) nonzero but of modulus ~2^-300: the first ball pass is undecided at the
    correction, the exact check says nonsingular, the precision is raised and the kernel
    certified; with a precision limit below what the decision needs, precision-limit."""
    step = Fraction(1, 2)
    p = min_poly_of_s(8, 1, 2 / step)
    p[0] = (p[0][0] + Fraction(1, 2**300), p[0][1])
    m = model_with_W_numerator(p, LAMS[:2])
    calls = _spy(monkeypatch)
    ck = certify_kernel(m, step, 8, 1e-9, counts=False)
    assert calls and all(c == (8, 1, False) for c in calls)
    assert_encloses(ck, exact_kernel(m, step, 8))
    calls.clear()
    with pytest.raises(CertificationError, match=r"precision-limit: not certified within 160 bits: undecided"):
        certify_kernel(m, step, 8, 1e-9, counts=False, max_prec=160)
    assert calls == [(8, 1, False)]


# -- problem numbers given as balls (ball_mode.md sections 1-3) ---------------------------

def ball(x, prec: int = 300) -> acb:
    re, im = g(x)
    with ctx.workprec(prec):
        return acb(arb(q(re)), arb(q(im)))


def test_ball_inputs_enclose_the_exact_kernel():
    """Every number given as an acb ball (some exact dyadic points, some with radius
    2^-300, the step an exact arb): the inputs are not exact, so the ball run routes; the
    exceptional lambda_0 = -2/step, an exact ball, is found; the balls and float arrays
    enclose the exact kernel of the rationals the balls stand for."""
    lam = [Fraction(-4), (Fraction(-1, 3), Fraction(1, 7)), Fraction(-5, 3)]
    P = [[Fraction(1, 3), 1], [Fraction(2, 5), (0, 1)], [1, Fraction(-1, 3)]]
    Q = [[1, Fraction(1, 7)], [(Fraction(1, 3), 1), 0], [Fraction(1, 2), 1]]
    B = [1, (Fraction(1, 3), Fraction(-1, 5)), Fraction(2, 7)]
    C = [(Fraction(1, 7), 1), Fraction(-2, 3), 1]
    step, L = Fraction(1, 2), 12
    as_balls = lambda rows: [[ball(x) for x in row] for row in rows]
    m_balls = DPLR([ball(x) for x in lam], as_balls(P), [ball(x) for x in B], [ball(x) for x in C], Q=as_balls(Q))
    assert m_balls.Lambda[1].real.rad() > 0 and m_balls.Lambda[0].real.rad() == 0
    ck = certify_kernel(m_balls, arb(q(step)), L, 1e-12, counts=False)
    assert ck.certificate["routing"] == "ball" and ck.certificate["partition"] == [0]
    assert ck.certificate["max_radius"] <= 1e-12
    assert_encloses(ck, exact_kernel(DPLR(lam, P, B, C, Q=Q), step, L))


# -- precision-limit refusals (section 3) -------------------------------------------------

def test_precision_limit_is_refused_in_the_loop():
    """The refusals after ball passes, none returning a value: a partition no precision
    decides (lambda_0 a ball of width 2^-40 around -2/step, the step a ball too): the
    precision limit, or, once the precision is far beyond the inputs' own, undecided;
    radii that cannot reach eps (an input of width 2^-30 against eps = 1e-15: its radius is
    the inputs', "input-precision", once a pass past them gains nothing); a non-finite
    ok run (an infinite C entry); G never certified invertible (lambda_0 a ball around
    2/step: the ball solve's ZeroDivisionError is caught and the precision raised); and
    eps needing more bits than the limit before any pass."""
    with ctx.workprec(64):
        near = acb(arb(-4, 2.0 ** -40))
        step = arb(0.5, 2.0 ** -60)
        wide = acb(arb(1, 2.0 ** -30))
        singular = acb(arb(4, 2.0 ** -40))
    undecided = DPLR([near, -1], [1, 1], [1, 1], [1, -1])
    with pytest.raises(CertificationError, match=r"precision-limit: .*undecided .*lambda_j = -2/step"):
        certify_kernel(undecided, step, 4, 1e-9, max_prec=128, counts=False)
    with pytest.raises(CertificationError, match=r"undecided: .*lambda_j = -2/step.*give them more precisely"):
        certify_kernel(undecided, step, 4, 1e-9, max_prec=4096, counts=False)
    with pytest.raises(CertificationError, match=r"input-precision: radius .* the ball inputs \(about \d+ bits\)"):
        certify_kernel(DPLR([-1, -2], [1, 1], [wide, 1], [1, -1]), 0.5, 4, 1e-15, max_prec=512, counts=False)
    with pytest.raises(CertificationError, match=r"precision-limit: not certified within 512 bits: radius .*inf"):
        certify_kernel(DPLR([-1, -2], [1, 1], [1, 1], [acb(arb(1, math.inf)), -1]), 0.5, 4, 1e-9, max_prec=512,
                       counts=False)
    with pytest.raises(CertificationError,
                       match=r"precision-limit: not certified within 512 bits: G not certified invertible"):
        certify_kernel(DPLR([singular, -1], [0, 0], [1, 1], [1, 1]), 0.5, 4, 1e-9, max_prec=512, counts=False)
    with pytest.raises(CertificationError, match=r"precision-limit: eps = .* needs at least \d+ bits"):
        certify_kernel(DPLR([-1, -2], [1, 1], [1, 1], [1, -1]), 0.5, 4, 1e-60, max_prec=128, counts=False)
    # the same width is certified once eps allows it
    ck = certify_kernel(DPLR([-1, -2], [1, 1], [wide, 1], [1, -1]), 0.5, 4, 1e-6, counts=False)
    assert ck.certificate["max_radius"] <= 1e-6


# -- a singular G with C~ supplied (no kernel exists) -------------------------------------

SINGULAR_G = DPLR([4.0, -2.0], [0.0, 0.0], [1, 1], [1, -1])  # lambda_0 = 2/step, P = 0


@pytest.mark.parametrize("c_tilde", [[1, 1], None])
def test_singular_g_is_refused_with_or_without_c_tilde(c_tilde):
    with pytest.raises(CertificationError, match="singular-bilinear-matrix"):
        certify_kernel(SINGULAR_G, 0.5, 8, 1e-10, c_tilde=c_tilde)


# G singular with D invertible (W(0) singular, proofs/ball_mode.md Lemma G), so the disk
# routes' set-up check meets it: with an exceptional index (r = 1), and at r = 2
W0_SINGULAR = [DPLR([-1, -4, -2 + 1j], [-6.25, 2, 0], [1, 1, 1], [1, -1, 0.5], Q=[1, 1, 1]),
               DPLR([-1, -4, -3], [[0, 5], [8, 0], [0, 0]], [1, 2, 3], [1, 1, 1], Q=[[1, 0], [0, 1], [0, 0]])]


@pytest.mark.parametrize("arithmetic", ["auto", "float64", "double-double", "ball"])
@pytest.mark.parametrize("which", [0, 1])
def test_singular_g_at_w0_is_refused_on_every_route(which, arithmetic):
    m = W0_SINGULAR[which]
    with pytest.raises(CertificationError, match="singular-bilinear-matrix"):
        certify_kernel(m, 0.5, 8, 1e-10, c_tilde=[1] * m.N, arithmetic=arithmetic, counts=False)
    # the same models with an invertible G certify on the float64 route, G decided by its set-up
    ok = DPLR([-1, -4, -2 + 1j], [-6.0, 2, 0], [1, 1, 1], [1, -1, 0.5], Q=[1, 1, 1])
    ck = certify_kernel(ok, 0.5, 8, 1e-10, c_tilde=[1] * ok.N, arithmetic="float64", counts=False)
    assert ck.status == "ok"


def test_g_decided_for_ball_inputs_with_c_tilde():
    from s4cert.algorithms.models.hippo_dplr import dplr as hippo_dplr
    model = hippo_dplr("legs", 4)
    ck = certify_kernel(model, 0.25, 16, 1e-10, c_tilde=[1, 2, 3, 4])
    assert ck.status == "ok"
    assert routing.g_not_invertible(SINGULAR_G, 0.5, True).startswith("singular-bilinear-matrix")
    assert routing.g_not_invertible(model, 0.25, False) == ""


# -- escalation from the arcs to direct Cauchy sums ----------------------------------------

def _nearly_singular_correction(d: int) -> DPLR:
    """N = 8 (run on the arcs, cauchy="fast"), P scaled exactly so that W(z_0) = W(1) = 2^-d:
    nonsingular, but far below the arcs' per-sum accuracy."""
    N, E = 8, ExactField(4)
    lam = [Fraction(-1 - j, 2) for j in range(N)]
    P, Q = [Fraction(1, j + 2) for j in range(N)], [[Fraction(1)]] * N

    def w(p):
        m = DPLR(lam, [[x] for x in p], [1] * N, [1] * N, Q=Q)
        return E.to_fractions(correction_at(E, m, Fraction(1, 2), E.one()).value[0][0])[0]
    t = -(1 - Fraction(1, 2 ** d)) / (w(P) - 1)  # W is affine in P (Q fixed)
    model = DPLR(lam, [[t * x] for x in P], [1] * N, [1] * N, Q=Q)
    assert w([t * x for x in P]) == Fraction(1, 2 ** d)
    return model


def test_nearly_singular_correction_escalates_to_direct_sums():
    """The arcs stayed undecided up to the precision limit (the per-sum accuracy did not
    tighten); the direct sums decide W(z_0) != 0 at a few hundred bits."""
    ck = certify_kernel(_nearly_singular_correction(200), Fraction(1, 2), 64, 1e-10, arithmetic="ball",
                        counts=True, cauchy="fast")
    assert ck.status == "ok" and ck.certificate["cauchy"]["route"] == "direct"
    assert ck.counts["route"] == "direct" and ck.certificate["precision_bits"] <= 1024


def test_numpy_binary64_entries_are_read_like_python_floats():
    """numpy float64/complex128 entries take the no-Fraction path: the same answers as the
    Python floats they equal (exact, the partition -2/step and a collision found), and a
    non-finite numpy entry is still refused."""
    import numpy as np
    step = 0.25
    lam = [-8.0, 0.0, -1.0 + 2.0j, -0.5j]        # -2/step = -8 (exceptional); 0 collides (mu = 1)
    py = DPLR(lam, [0.5, 0.25, 1.0, 2.0], [1.0, 1.0, 1.0, 1.0], [1.0, -1.0, 0.5, 0.5j])
    nu = DPLR([np.complex128(x) for x in lam], [np.float64(x) for x in (0.5, 0.25, 1.0, 2.0)],
              [np.float64(1.0)] * 4, [np.complex128(x) for x in (1.0, -1.0, 0.5, 0.5j)])
    for m in (py, nu):
        assert routing.exact_inputs(m, np.float64(step))
        assert routing.exact_partition(m, np.float64(step)) == [0]
        assert routing.exact_collisions(m, np.float64(step), 8, [0]) == [1]
    for bad in (np.float64(math.inf), np.complex128(complex(math.nan, 1.0))):
        with pytest.raises(ValueError, match="non-finite"):
            routing._is_exact(bad)
