"""Shared checks and strategies for the test suite."""
from __future__ import annotations

from fractions import Fraction

from hypothesis import strategies as st

from s4cert.arith import ExactField, Truth


def exact_equal(F: ExactField, x, y) -> bool:
    """x == y exactly in an exact field."""
    return F.is_zero(F.sub(x, y)) is Truth.TRUE


def all_exact_equal(F, xs, ys) -> bool:
    return len(xs) == len(ys) and all(exact_equal(F, x, y) for x, y in zip(xs, ys))


def encloses(ball, E: ExactField, x) -> bool:
    """The ball certainly contains the exact element x of E (checked against a much
    tighter enclosure of x)."""
    return bool(ball.contains(E.to_acb(x, 4096)))


def all_enclose(balls, E, xs) -> bool:
    return len(balls) == len(xs) and all(encloses(b, E, x) for b, x in zip(balls, xs))


def assert_ball_run_agrees(got, ref, E) -> bool:
    """A ball run against the exact run of the same procedure: where the exact run is ok
    the ball run is ok with enclosures of its values, or undecided; otherwise it stops
    with the same status, or undecided.  Returns whether the ball run decided (a status
    other than undecided), for the callers' counts."""
    if ref.ok:
        assert got.status in ("ok", "undecided")
        if got.ok:
            assert all_enclose(got.value, E, ref.value)
    else:
        assert got.status in (ref.status, "undecided")
    return got.status != "undecided"


#: a ball precision far above what the small Gaussian-rational problems of the suite need:
#: every exact value their runs test is 0 or an algebraic number of small height, far
#: above 2^-300 in modulus, while radii at this precision stay below 2^-400 over their few
#: hundred operations; so every test is decided (the proofs bound no precision: this is the
#: "well inside the range" family of the ball runs, not a proved threshold)
AMPLE_PREC = 1024


def fractions(max_num: int = 20, max_den: int = 8):
    return st.builds(Fraction, st.integers(-max_num, max_num), st.integers(1, max_den))


def gaussian(max_num: int = 20, max_den: int = 8):
    """Gaussian rationals as (re, im) pairs of Fractions."""
    return st.tuples(fractions(max_num, max_den), fractions(max_num, max_den))


class Q2:
    """An exact Gaussian rational, for checking fields against exact arithmetic."""

    __slots__ = ("re", "im")

    def __init__(self, re, im=0):
        self.re, self.im = Fraction(re), Fraction(im)

    def __add__(self, o):
        return Q2(self.re + o.re, self.im + o.im)

    def __sub__(self, o):
        return Q2(self.re - o.re, self.im - o.im)

    def __neg__(self):
        return Q2(-self.re, -self.im)

    def __mul__(self, o):
        return Q2(self.re * o.re - self.im * o.im, self.re * o.im + self.im * o.re)

    def __truediv__(self, o):
        d = o.re * o.re + o.im * o.im
        return Q2((self.re * o.re + self.im * o.im) / d, (self.im * o.re - self.re * o.im) / d)

    def conj(self):
        return Q2(self.re, -self.im)

    def abs2(self) -> Fraction:
        return self.re * self.re + self.im * self.im

    def __repr__(self):
        return f"Q2({self.re}, {self.im})"


def random_dplr(draw, N: int, r: int, step: Fraction, exceptional: bool):
    """A DPLR model with Gaussian-rational entries; with ``exceptional`` some
    lambda_j = -2/step exactly."""
    from s4cert.algorithms.s4.dplr import DPLR
    g = gaussian(12, 6)
    lam = [draw(g) for _ in range(N)]
    if exceptional:
        for j in draw(st.sets(st.integers(0, N - 1), min_size=1)):
            lam[j] = (-2 / step, Fraction(0))
    P = [[draw(g) for _ in range(r)] for _ in range(N)]
    Q = [[draw(g) for _ in range(r)] for _ in range(N)]
    B = [draw(g) for _ in range(N)]
    C = [draw(g) for _ in range(N)]
    return DPLR(lam, P, B, C, Q=Q)


def seeded_gaussian(rng, max_num: int = 20, max_den: int = 8) -> tuple:
    """One Gaussian rational (re, im) from a ``random.Random``, as ``gaussian`` draws them."""
    f = lambda: Fraction(rng.randint(-max_num, max_num), rng.randint(1, max_den))
    return f(), f()


def dissipative_dplr(seed: int, N: int, r: int, step: Fraction, exceptional: bool = False):
    """A Gaussian-rational DPLR model well inside every route's range: Q = P and
    Re lambda_j in [-12, -1/4], so A + A* = 2 Re Lambda - 2 P P* <= -I/2.  Then every
    eigenvalue of A has Re <= -1/4 and the Cayley transform Abar is a strict contraction:
    G = I - (step/2) A is invertible, no eigenvalue of Abar (nor of Abar^M) lies on the
    unit circle (C~ is formed and W(z_k) is regular at every root), and each pole
    mu_j = (a - lambda_j)/(a + lambda_j) has |mu_j|^2 - 1 = 4a |Re lambda_j| / |a + lambda_j|^2
    >= a / (a + 17)^2 >= 1/200 for a = 2/step in [2, 8] (|lambda_j| <= 17): far beyond float64 reach of
    every root.  With ``exceptional`` lambda_0 = -2/step exactly (Re -a, still dissipative).
    Deterministic in ``seed``."""
    import random

    from s4cert.algorithms.s4.dplr import DPLR
    rng = random.Random(seed)
    frac = lambda: Fraction(rng.randint(-12, 12), rng.randint(1, 6))
    g = lambda: (frac(), frac())
    lam = [(-Fraction(rng.randint(1, 48), 4), frac()) for _ in range(N)]
    if exceptional:
        lam[0] = (-2 / step, Fraction(0))
    P = [[g() for _ in range(r)] for _ in range(N)]
    B = [g() for _ in range(N)]
    C = [g() for _ in range(N)]
    return DPLR(lam, P, B, C, Q=[list(row) for row in P])


def pole_near_the_grid(m, step: Fraction, M: int, exceptional, within: float = 2.0 ** -60) -> bool:
    """Whether some pole mu_j = (a - lambda_j)/(a + lambda_j), a = 2/step, j not exceptional,
    of a Gaussian-rational model lies certainly within ``within`` of an M-th root of unity
    (decided with 200-bit balls)."""
    from flint import acb, arb, ctx, fmpq
    qa = Fraction(2) / Fraction(step)
    with ctx.workprec(200):
        a = acb(arb(fmpq(qa.numerator, qa.denominator)))
        roots = [acb.exp_pi_i(acb(fmpq(-2 * k, M))) for k in range(M)]
        for j, (re, im) in enumerate(m.Lambda):
            if j in exceptional:
                continue
            lam = acb(arb(q(Fraction(re))), arb(q(Fraction(im))))
            mu = (a - lam) / (a + lam)
            if any(abs(mu - z).upper() < arb(within) for z in roots):
                return True
    return False


def q(x: Fraction):
    """A Fraction as a flint fmpq."""
    from flint import fmpq
    return fmpq(x.numerator, x.denominator)


def point(re: Fraction, im: Fraction):
    """The exact complex number re + i im as an acb point."""
    from flint import acb, arb
    return acb(arb(q(re)), arb(q(im)))


def exact_kernel(m, step, L: int) -> list:
    """K_j = C* Abar^j Bbar exactly, as (re, im) Fractions (Gaussian-rational data)."""
    from s4cert.algorithms.s4.kernels import kernel_by_powers
    E = ExactField(4)
    res = kernel_by_powers(E, m, step, L)
    assert res.ok
    return [E.to_fractions(k) for k in res.value]


def nonnegative(E: ExactField, t, max_prec: int = 1 << 16) -> bool:
    """Whether the real element t of E is >= 0: exactly when it is zero, otherwise from
    enclosures tight enough to exclude zero (t is then a nonzero algebraic number)."""
    if E.is_zero(t) is Truth.TRUE:
        return True
    prec = 256
    while prec <= max_prec:
        b = E.to_acb(t, prec)
        assert b.imag.contains(0)
        if b.real > 0:
            return True
        if b.real < 0:
            return False
        prec *= 2
    raise AssertionError("sign not decided")
