"""The ball run's plan (route and first precision), its radius bookkeeping and its float
arrays (certs/route_cost.py, certs/ball_run.py)."""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from flint import acb, arb, ctx

from s4cert.algorithms.models.hippo_float64 import dplr_float64
from s4cert.algorithms.s4.dplr import DPLR
from s4cert.arith import BallField
from s4cert.certs import route_cost
from s4cert.certs.ball_run import FIRST_PASS_DFT_SPARE, ball_filter, enclosure_arrays, log2_max_radius, max_radius
from s4cert.certs.kernel import certify_kernel


def _legs(N: int):
    m = dplr_float64("legs", N)
    return m, list(np.array(m.C, dtype=complex))


def test_enclosure_arrays_bound_every_entry():
    """|x - mid| <= rad for every point x of each ball (checked at the ball's extreme
    corners, exactly), through the 53-bit sweep and through the one-by-one path (exact
    points, tiny and huge radii, huge and non-finite balls)."""
    F = BallField(200)
    with ctx.workprec(200):
        third = acb(1) / 3
        balls = [third, acb(1, -2), acb(0), third + acb(arb(0, 2.0 ** -1100)), acb(arb(2) ** 1100, 1),
                 acb(third, arb(0, 1e-5)), acb("nan"), acb(arb(0, math.inf)), acb(2.0 ** -1060, 0)]
    mid, rad = enclosure_arrays(F, balls)
    assert rad[1] == 0.0 and rad[2] == 0.0 and math.isinf(rad[6]) and math.isinf(rad[7])
    with ctx.workprec(2000):
        for b, m, r in zip(balls, mid, rad):
            if not b.is_finite() or not math.isfinite(r):
                continue
            c = acb(m.real, m.imag)
            for sr in (-1, 1):
                for si in (-1, 1):
                    corner = acb(b.real.mid() + sr * b.real.rad(), b.imag.mid() + si * b.imag.rad())
                    assert abs(corner - c) <= arb(r)
    assert rad[0] < 2.0 ** -50 and rad[5] < 2e-5


def test_max_radius_is_the_largest_ball_radius():
    F = BallField(120)
    with ctx.workprec(120):
        balls = [acb(1) / 3, acb(arb(1, 1e-20), arb(0, 3e-20)), acb(2), acb(arb("0 +/- 1e-600"))]
    assert max_radius(balls) == max(F.radius(b) for b in balls)
    assert abs(log2_max_radius(balls) - math.log2(4e-20)) < 0.01
    assert log2_max_radius([acb(1), acb(0)]) is None and max_radius([acb(1)]) == 0.0
    assert log2_max_radius([acb("nan")]) == math.inf and max_radius([acb("nan")]) == math.inf
    tiny = [acb(arb("0 +/- 1e-903"))]  # about 2^-3000, below the float range
    assert -3001 < log2_max_radius(tiny) < -2998 and 0 < max_radius(tiny) < 1e-300


@pytest.mark.parametrize("N,L", [(8, 256), (16, 512), (32, 256)])
def test_tree_loss_estimate_close_and_first_pass_accepted(N, L):
    """On LegS the estimate is within 16 bits of the loss the ball run shows (which also
    holds the bits the first pass's final transform rounds away), and the tree run is
    accepted at its first precision."""
    m, ct = _legs(N)
    eps = Fraction(1, 10 ** 30)
    pl = route_cost.plan(m, 0.01, L, eps, ct, [], "tree")
    run = ball_filter(m, 0.01, L, eps, ct, [], True, 1 << 16, lambda s: None, "tree")
    assert run.status == "ok" and run.prec == pl.prec
    shown = run.prec + math.log2(run.max_radius)  # the bits the run lost
    assert -16 <= shown - pl.loss <= 16 - FIRST_PASS_DFT_SPARE, (shown, pl.loss)


def test_auto_takes_the_cheaper_route():
    """auto prices every route: the tree for LegS (small loss), the arcs when the tree
    would need more bits than the limit, and the route so chosen is what certified."""
    m, ct = _legs(32)
    eps = Fraction(1, 10 ** 30)
    pl = route_cost.plan(m, 0.01, 4096, eps, ct, [], "auto")
    assert pl.route == "tree" and set(pl.seconds) == {"tree", "fast", "direct"}
    assert pl.seconds["tree"] < pl.seconds["fast"] < pl.seconds["direct"]
    capped = route_cost.plan(m, 0.01, 4096, eps, ct, [], "auto", max_prec=200)
    assert capped.route == "fast" and "tree" not in capped.seconds and capped.prec == 64 + 101
    assert route_cost.plan(m, 0.01, 4096, eps, ct, [], "direct").route == "direct"
    ck = certify_kernel(m, 0.01, 64, 1e-20, c_tilde=ct, arithmetic="ball", counts=False)
    assert ck.certificate["cauchy"]["route"] == "tree"


def test_plan_without_an_estimate():
    """Poles on the grid (in floats), no regular poles, or ball inputs: the plan still
    stands, the tree at 64 + log2(1/eps) bits when nothing is estimated."""
    eps = Fraction(1, 2 ** 40)
    on_grid = DPLR([0, -1], [0, 0], [1, 1], [1, 1])  # mu = 1 = z_0
    assert route_cost.plan(on_grid, 1, 8, eps, None, [], "tree").prec == 64 + 41
    assert route_cost.tree_loss_bits(on_grid, 1, 8) == math.inf
    only_exceptional = DPLR([-2], [0], [1], [1])
    assert route_cost.tree_loss_bits(only_exceptional, 1, 8, exceptional=[0]) == 0.0
    balls = DPLR([acb(-1, arb(0, 1e-30)), -2], [[1], [0.5]], [1, 1], [1, (0, 1)])
    pl = route_cost.plan(balls, 0.5, 16, eps, None, [], "auto")
    assert pl.route in ("tree", "fast", "direct") and math.isfinite(pl.loss)
