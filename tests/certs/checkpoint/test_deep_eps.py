"""Checkpoints certified far below the double-double range (certs/checkpoint/certify.py:
the DPLR kernels' ball inputs formed at ``input_prec`` bits, twice as many while the ball
run reports them as what holds the radius back; certs/ball_run.py: that report,
"input-precision")."""
from __future__ import annotations

import numpy as np
import pytest
from flint import acb, arb, ctx

from s4cert.algorithms.s4.dplr import DPLR
from s4cert import CertificationError
from s4cert.certs.checkpoint.certify import INPUT_GUARD_BITS, START_PREC, input_prec
from s4cert.certs.checkpoint.model import certify_model
from s4cert.certs.kernel import certify_kernel

from .test_model import DATA, FIXTURES, fixture, options_of


def _path(name: str):
    return next(p for p in (DATA / f"{name}.pt", DATA / f"{name}.ckpt") if p.exists())


@pytest.mark.parametrize("name", FIXTURES)
def test_every_fixture_certifies_at_1e40_and_1e60_of_max_abs_k(name):
    """Every module of every public fixture, DPLR and diagonal, is certified with every
    radius <= 1e-40 and <= 1e-60 of the kernel's largest entry; both runs enclose the same
    kernel, so their disks meet, entry by entry (|mid_a - mid_b| <= rad_a + rad_b, which a
    run that certified a wrong kernel fails)."""
    meta, _ = fixture(name)
    L, opts = int(meta["kernel"]["L"]), options_of(meta)
    scale = min(float(np.max(np.abs(k.mid))) for k in certify_model(_path(name), L=L, **opts).kernels)
    runs = []
    for rel in (1e-40, 1e-60):
        rep = certify_model(_path(name), L=L, eps=rel * scale, **opts)
        assert [k.status for k in rep.kernels] == ["ok"] * len(rep.kernels), [k.reason for k in rep.kernels]
        assert all(k.max_rad <= rel * scale for k in rep.kernels)
        runs.append(rep.kernels)
    for a, b in zip(*runs):
        assert np.all(np.abs(a.mid - b.mid) <= a.rad + b.rad)


def test_input_prec_covers_the_target_with_guard_bits():
    base = 2 * START_PREC
    assert input_prec(None, 1.0) == base
    assert input_prec(1e-13, 1.0) == base                      # 43 + 128 bits < 192
    for target, scale in [(1e-40, 1.0), (1e-60, 3.5), (2.0 ** -300, 2.0 ** 10)]:
        p = input_prec(target, scale)
        assert p % 32 == 0 and p >= np.log2(scale / target) + INPUT_GUARD_BITS
        assert p < np.log2(scale / target) + INPUT_GUARD_BITS + 32 + 1
    assert input_prec(1e-40, None) == input_prec(1e-40, 1.0)   # unknown scale: 1
    assert input_prec(float("nan"), 1.0) == base


def test_a_radius_held_by_the_inputs_is_reported_as_such():
    """Ball inputs of about 60 bits cannot give radii of 1e-40: the ball run stops with
    status "input-precision" after a pass past their accuracy leaves the radius where it
    was, instead of raising the precision to its limit."""
    with ctx.workprec(60):
        lam = [acb(-1) + acb(arb(0, 2.0 ** -60)), acb(-2)]
    model = DPLR(lam, [0.5, 0.25], [1, 1], [1, -1])
    with pytest.raises(CertificationError) as e:
        certify_kernel(model, 0.5, 8, 1e-40, arithmetic="ball", counts=False)
    assert e.value.status == "input-precision"
    assert "give them more precisely" in str(e.value)
    k = certify_kernel(model, 0.5, 8, 1e-14, arithmetic="ball", counts=False)   # within their reach
    assert k.status == "ok"
