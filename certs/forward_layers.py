"""The layers around the convolution, on real float64 disks (``forward_conv.Disks``), with
features on the last axis.

* ``linear``: ``x W^T + b`` as a midpoint-radius product (Rump): the midpoints' product on
  BLAS in float64 and an a-priori bound of its rounding that holds for any summation order,
  fused or not (proofs/outputs.md, section 2), plus the radii through ``|W|``.
* ``gelu`` (the exact erf), ``glu`` (``a sigmoid(b)`` over the two halves of the features)
  and ``layer_norm`` (biased variance, ``eps`` the binary64 number of the literal 1e-5, as
  torch's LayerNorm) in FLINT's ball arithmetic at ``PREC`` bits, one ball per entry, and
  back to float64 disks (``arith.disk_convert.real_disk_of_ball``).
"""
from __future__ import annotations

from typing import Callable

import numpy as np
from flint import acb, arb, ctx

from ..arith.disk_convert import real_disk_of_ball
from ..arith.midrad import UNDERFLOW, sum_upper, up
from .forward_conv import Disks, gamma_upper, in_range

#: bits of the ball arithmetic of the nonlinear layers
PREC = 128
#: torch.nn.LayerNorm's default eps (the binary64 number of the literal)
LAYER_NORM_EPS = 1e-5
ACTIVATIONS = ("gelu", "id", "glu")


def linear(x: Disks, W: np.ndarray, b: np.ndarray | None) -> Disks:
    """Disks of ``x @ W.T + b`` for every x in the disks (W (out, in), b (out,) exact)."""
    x = in_range(x, "linear input")
    W = np.asarray(W, dtype=np.float64)
    n = W.shape[1] + (b is not None)
    if x.shape[-1] != W.shape[1]:
        raise ValueError(f"linear: input features {x.shape[-1]} do not match the weight {W.shape}")
    for what, a in (("weight", W), ("bias", b)):
        if a is not None and not np.all(np.isfinite(a) & (np.abs(a) <= 2.0 ** 400)):
            raise ValueError(f"linear {what}: a value is not finite or exceeds 2^400")
    mid = x.mid @ W.T
    size = np.abs(x.mid) @ np.abs(W).T
    if b is not None:
        mid = mid + b
        size = size + np.abs(b)
    # |fl - exact| <= gamma_n sum |products| + n 2^-1074 (proofs/outputs.md, Lemma 2)
    err = up(up(gamma_upper(n) * sum_upper(size, n)) + n * 2 * UNDERFLOW)
    rad = up(err + sum_upper(x.rad @ np.abs(W).T, n))
    return Disks(mid, rad)


def _balls(d: Disks) -> list:
    return [arb(float(m), float(r)) for m, r in zip(d.mid.reshape(-1), d.rad.reshape(-1))]


def _disks(balls: list, shape: tuple) -> Disks:
    mid, rad = np.empty(len(balls)), np.empty(len(balls))
    for i, x in enumerate(balls):
        mid[i], rad[i] = real_disk_of_ball(acb(x))
    if not np.all(np.isfinite(rad)):
        raise ValueError("a layer's output is not finite")
    return Disks(mid.reshape(shape), rad.reshape(shape))


def elementwise(d: Disks, f: Callable[[arb], arb]) -> Disks:
    """``f`` on every entry, in balls at PREC bits."""
    with ctx.workprec(PREC):
        return _disks([f(x) for x in _balls(d)], d.shape)


def gelu_ball(x: arb) -> arb:
    """GELU of one ball: x (1 + erf(x / sqrt 2)) / 2 at the current precision."""
    return x * (1 + (x / arb(2).sqrt()).erf()) / 2


def gelu(d: Disks) -> Disks:
    """x Phi(x) = x (1 + erf(x / sqrt 2)) / 2 (torch's GELU without the tanh approximation)."""
    return elementwise(d, gelu_ball)


def glu(d: Disks) -> Disks:
    """a sigmoid(b) with (a, b) the first and second halves of the last axis."""
    F = d.shape[-1]
    if F % 2:
        raise ValueError(f"glu: {F} features do not split in two halves")
    a, b = Disks(d.mid[..., :F // 2], d.rad[..., :F // 2]), Disks(d.mid[..., F // 2:], d.rad[..., F // 2:])
    with ctx.workprec(PREC):
        out = [x / (1 + (-y).exp()) for x, y in zip(_balls(a), _balls(b))]
        return _disks(out, a.shape)


def activation(d: Disks, name: str) -> Disks:
    if name == "gelu":
        return gelu(d)
    if name == "glu":
        return glu(d)
    if name == "id":
        return d
    raise ValueError(f"activation {name!r} is not supported (supported: {', '.join(ACTIVATIONS)})")


def layer_norm(d: Disks, weight: np.ndarray, bias: np.ndarray, eps: float = LAYER_NORM_EPS) -> Disks:
    """(x - mean) / sqrt(var + eps) * weight + bias over the last axis (biased variance)."""
    F = d.shape[-1]
    if np.shape(weight) != (F,) or np.shape(bias) != (F,):
        raise ValueError(f"layer norm: weight {np.shape(weight)} and bias {np.shape(bias)} do not match {F} features")
    w = [arb(float(x)) for x in np.asarray(weight, dtype=np.float64)]
    b = [arb(float(x)) for x in np.asarray(bias, dtype=np.float64)]
    rows = _balls_rows(d)
    out = []
    with ctx.workprec(PREC):
        e = arb(float(eps))
        for row in rows:
            mean = sum(row, arb(0)) / F
            cen = [x - mean for x in row]
            var = sum((c * c for c in cen), arb(0)) / F
            inv = 1 / (var + e).sqrt()
            out.extend(c * inv * wi + bi for c, wi, bi in zip(cen, w, b))
        return _disks(out, d.shape)


def _balls_rows(d: Disks) -> list[list]:
    F = d.shape[-1]
    flat = _balls(d)
    return [flat[i:i + F] for i in range(0, len(flat), F)]
