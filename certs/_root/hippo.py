"""HiPPO models as DPLR models: certified (balls enclosing every entry) or the usual
float64 form.

``dplr(kind, N, theta=None, prec=128)`` is the certified DPLR model of LegS, LegT (window
``theta``) or LagT; ``legs``, ``legt`` and ``lagt`` are its three kinds;
``dplr_float64`` is the uncertified float64 model the usual S4 code builds.

>>> from s4cert import certify_kernel
>>> from s4cert.hippo import legs
>>> ck = certify_kernel(legs(4), step=0.01, L=8, eps=1e-12)
>>> ck.status
'ok'
"""
from __future__ import annotations

from typing import Any

from .algorithms.models.hippo import KINDS
from .algorithms.models.hippo_dplr import dplr
from .algorithms.models.hippo_float64 import dplr_float64
from .algorithms.s4.dplr import DPLR

__all__ = ["KINDS", "dplr", "dplr_float64", "lagt", "legs", "legt"]


def legs(N: int, prec: int = 128, C: Any = None) -> DPLR:
    """The certified DPLR model of HiPPO-LegS of state size N (``dplr("legs", N)``)."""
    return dplr("legs", N, prec=prec, C=C)


def legt(N: int, theta: Any = 1, prec: int = 128, C: Any = None) -> DPLR:
    """The certified DPLR model of HiPPO-LegT with window ``theta`` (the LMU's matrices)."""
    return dplr("legt", N, theta=theta, prec=prec, C=C)


def lagt(N: int, prec: int = 128, C: Any = None) -> DPLR:
    """The certified DPLR model of HiPPO-LagT of state size N."""
    return dplr("lagt", N, prec=prec, C=C)
