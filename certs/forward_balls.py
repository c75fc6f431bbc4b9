"""The forward pass in FLINT's ball arithmetic, for an eps below what float64 disks hold
(``certify_forward`` switches to it): object arrays of ``arb`` balls in the layouts of the
float64 route, with the same operations (``BallOps`` beside ``forward.Float64Ops``).

The convolution is FLINT's ball polynomial product: ``K(z) v(z)`` truncated to its first T
coefficients is the causal sum ``sum_{j <= t} K_j v_{t-j}`` (proofs/outputs.md, section 6).
Kernels enter as their lossless enclosures (``mid_exact`` and ``rad_exact`` where the
kernel certification went to balls, the float64 disks elsewhere).
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np
from flint import acb, arb, arb_poly, ctx, fmpq

from ..arith.ball import float_upper
from ..arith.disk_convert import real_disk_of_ball
from .checkpoint.certify import ModuleKernels
from .checkpoint.compare import float_up
from .forward_conv import Disks
from .forward_layers import LAYER_NORM_EPS, gelu_ball
from .io.numbers import arb_parts, parse_rational, rational_string


def _ball(mid: Fraction, rad: Fraction) -> arb:
    b = arb(fmpq(mid.numerator, mid.denominator))
    return b + arb(0, float_up(rad)) if rad else b


def exact_balls(a: np.ndarray) -> np.ndarray:
    """Floats as exact balls (object array of the same shape)."""
    out = np.empty(np.shape(a), dtype=object)
    for i, x in np.ndenumerate(np.asarray(a, dtype=np.float64)):
        out[i] = arb(float(x))
    return out


def kernel_balls(k: ModuleKernels) -> np.ndarray:
    """A module's certified kernels (channels, H, L) as balls at the current precision."""
    out = np.empty(k.mid.shape, dtype=object)
    for i in np.ndindex(k.mid.shape):
        if k.mid_exact is not None:
            out[i] = _ball(parse_rational(k.mid_exact[i], "kernel"), parse_rational(k.rad_exact[i], "kernel"))
        else:
            out[i] = _ball(Fraction(float(k.mid[i])), Fraction(float(k.rad[i])))
    return out


def causal_balls(K: np.ndarray, D: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``sum_{j <= t} K[c, h, j] v[b, h, t - j] + D[c, h] v[b, h, t]`` in balls, (B, C, H, T)."""
    C, H, _ = K.shape
    B, _, T = v.shape
    out = np.empty((B, C, H, T), dtype=object)
    for c in range(C):
        for h in range(H):
            kp = arb_poly(list(K[c, h]))
            d = arb(float(D[c, h]))
            for b in range(B):
                prod = kp * arb_poly(list(v[b, h]))
                for t in range(T):
                    out[b, c, h, t] = prod[t] + d * v[b, h, t]
    return out


class BallOps:
    """The forward pass's operations on object arrays of balls (features last)."""

    @staticmethod
    def causal(K, D, v, progress=None):
        return causal_balls(K, D, v)

    @staticmethod
    def channels(K, C: int) -> tuple:
        pad = np.full(K[C:].shape[:2] + (1,), arb(0), dtype=object)
        return K[:C], np.concatenate([pad, K[C:]], axis=2)

    @staticmethod
    def reverse(v):
        return v[..., ::-1]

    @staticmethod
    def flat(y):
        B, C, H, T = y.shape
        return y.reshape(B, C * H, T)

    @staticmethod
    def swap(d):
        return np.swapaxes(d, -1, -2)

    @staticmethod
    def add(a, b):
        return a + b

    @staticmethod
    def linear(x, W, b):
        Wb = exact_balls(W)
        out = np.empty(x.shape[:-1] + (W.shape[0],), dtype=object)
        for i in np.ndindex(x.shape[:-1]):
            row = x[i]
            for o in range(W.shape[0]):
                s = sum((Wb[o, k] * row[k] for k in range(W.shape[1])), arb(0))
                out[i + (o,)] = s + arb(float(b[o])) if b is not None else s
        return out

    @staticmethod
    def activation(d, name: str):
        if name == "id":
            return d
        if name == "gelu":
            return np.vectorize(gelu_ball, otypes=[object])(d)
        if name == "glu":
            F = d.shape[-1]
            if F % 2:
                raise ValueError(f"glu: {F} features do not split in two halves")
            a, b = d[..., :F // 2], d[..., F // 2:]
            return np.vectorize(lambda x, y: x / (1 + (-y).exp()), otypes=[object])(a, b)
        raise ValueError(f"activation {name!r} is not supported")

    @staticmethod
    def layer_norm(d, weight, bias):
        F = d.shape[-1]
        w, bb = [arb(float(x)) for x in weight], [arb(float(x)) for x in bias]
        e = arb(LAYER_NORM_EPS)
        out = np.empty(d.shape, dtype=object)
        for i in np.ndindex(d.shape[:-1]):
            row = list(d[i])
            mean = sum(row, arb(0)) / F
            cen = [x - mean for x in row]
            inv = 1 / (sum((c * c for c in cen), arb(0)) / F + e).sqrt()
            for k in range(F):
                out[i + (k,)] = cen[k] * inv * w[k] + bb[k]
        return out


def ball_disks(balls: np.ndarray) -> tuple[Disks, np.ndarray, np.ndarray, float]:
    """Float64 disks holding the balls, their lossless strings (midpoint, radius) and the
    largest radius rounded up."""
    mid, rad = np.empty(balls.shape), np.empty(balls.shape)
    ms, rs = np.empty(balls.shape, dtype=object), np.empty(balls.shape, dtype=object)
    worst = 0.0
    for i, x in np.ndenumerate(balls):
        mid[i], rad[i] = real_disk_of_ball(acb(x))
        m, r = arb_parts(x, "output")
        ms[i], rs[i] = rational_string(m), rational_string(r)
        with ctx.workprec(64):
            worst = max(worst, float_upper(x.rad()))
    return Disks(mid, rad), ms.astype(str), rs.astype(str), worst
