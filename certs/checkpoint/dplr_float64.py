"""Every kernel of a DPLR module at once on float64 disks (``algorithms.s4.layer_pass``).

Each head is checked as ``certify_kernel`` checks one model before its float64 route
(the floating-point environment, the exact partition lambda_j = -2/step, no pole on the
root grid, and, with a supplied C~, G = I - (step/2) A invertible); C~ for the grid's M
points is the stored C when ``l_kernel`` is M, and is otherwise formed in balls from C
(recovered from the stored C~ for ``l_kernel`` points, or read as C when ``l_kernel``
is 0).  A head that fails a check, or a kernel the disks cannot decide, is left to the
caller (its rows NaN, radius inf), which certifies it one kernel at a time.
"""
from __future__ import annotations

import numpy as np

from ...algorithms.dft import next_power_of_two
from ...algorithms.s4.c_tilde import c_from_c_tilde, c_tilde as form_c_tilde
from ...algorithms.s4.dplr import DPLR
from ...algorithms.s4.layer_pass import Head, filter_kernels_midrad
from ...algorithms.s4.dplr_arrays import filter_kernels_arrays
from ...arith import BallField, fpenv
from ...arith.midrad import RangeError
from .. import routing
from ..ball_run import C_TILDE_METHOD
from .layouts import KernelModule
from .semantics import dplr_arrays, dplr_module, stored_l_kernel

#: bits of the balls of the set-up and of any C~ formed here (as the single route's)
SETUP_PREC = 128


def _c_tildes(models: list[DPLR], l: int, M: int) -> list[list] | None:
    """C~ for M points of each channel's model (see the module docstring), or None."""
    if l == M:
        return [m.C for m in models]
    F = BallField(SETUP_PREC)
    out = []
    for m in models:
        if l > 0:
            back = c_from_c_tilde(BallField(2 * SETUP_PREC), m, 1, l, m.C, method="dense-squaring")
            if not back.ok:
                return None
            m = DPLR(Lambda=m.Lambda, P=m.P, Q=m.Q, B=m.B, C=back.value)
        ct = form_c_tilde(F, m, 1, M, method=C_TILDE_METHOD)
        if not ct.ok:
            return None
        out.append(ct.value)
    return out


def _head(models: list[DPLR], l: int, M: int, conjugate_pairs: bool = False) -> Head | None:
    """The batch's head for one head's models (one per channel), or None when a check fails."""
    m = models[0]
    exceptional = routing.exact_partition(m, 1)
    if exceptional is None or routing.exact_collisions(m, 1, M, exceptional):
        return None
    cts = _c_tildes(models, l, M)
    if cts is None:
        return None
    # with C~ taken from the file (l == M), G is checked by the head's set-up (Lemma G of
    # proofs/ball_mode.md); a head it does not certify goes through certify_kernel
    return Head(m, cts, exceptional, conjugate_pairs, check_g=l == M)


def dplr_float64(models: list[list[DPLR]], l_kernel: int | None, L: int, progress=None,
                 conjugate_pairs: bool = False) -> tuple[np.ndarray, np.ndarray] | None:
    """(mid, rad), real float64 arrays of shape (channels, heads, L), of the kernels of
    ``models[channel][head]`` (step 1; C the stored C~ for ``l_kernel`` points, None
    meaning L), with |K - mid| <= rad where rad is finite; None when the floating-point
    environment rules the route out.  ``conjugate_pairs``: the exact models are
    conjugate-closed (``semantics.DPLRModule``), so half the roots suffice."""
    if not fpenv.probe().ok:
        return None
    channels, H = len(models), len(models[0])
    M = next_power_of_two(L)
    l = L if l_kernel is None else l_kernel
    heads, where = [], []
    for i in range(H):
        head = _head([models[c][i] for c in range(channels)], l, M, conjugate_pairs)
        if head is not None:
            heads.append(head)
            where.append(i)
    mid = np.full((channels, H, L), np.nan)
    rad = np.full((channels, H, L), np.inf)
    if not heads:
        return mid, rad
    m, r, _ = filter_kernels_midrad(heads, 1, L, prec=SETUP_PREC, progress=progress)
    # the kernel is real: |Re K - Re mid| <= |K - mid| <= rad
    mid[:, where] = m.real.reshape(len(where), channels, L).transpose(1, 0, 2)
    rad[:, where] = r.reshape(len(where), channels, L).transpose(1, 0, 2)
    return mid, rad


def arrays_apply(mod: KernelModule, L: int) -> bool:
    """Whether the module's heads are set up on double-double arrays (``dplr_float64_module``):
    a conjugate-closed layout (not the Annotated S4), C~ stored for the grid's M points, and
    rank at most two (for G's check)."""
    if mod.layout == "annotated-s4" or L <= 0:
        return False
    try:
        l_kernel = stored_l_kernel(mod)
        P = np.asarray(mod.tensors["P"])
    except (KeyError, ValueError):
        return False
    return l_kernel == next_power_of_two(L) and (P.shape[0] if P.ndim == 4 else 1) <= 2


def dplr_float64_module(mod: KernelModule, heads: list[int], L: int, prec: int,
                        progress=None) -> tuple[np.ndarray, np.ndarray] | None:
    """(mid, rad) of shape (channels, len(heads), L) for every kernel of a DPLR module, as
    :func:`dplr_float64` gives them, or None when the floating-point environment rules the
    route out.  When the module is conjugate-closed and its C~ is stored for the grid's M
    points, the heads are first set up all at once on double-double disks
    (``algorithms.s4.dplr_arrays``: no ball per element); the heads that set-up does not
    decide, and every head of another module, are set up in balls (``dplr_module`` at
    ``prec`` bits, then :func:`dplr_float64`)."""
    if not fpenv.probe().ok:
        return None
    todo = list(range(len(heads)))
    mid = rad = None
    a = None
    if arrays_apply(mod, L):
        try:
            a = dplr_arrays(mod, heads)
        except ValueError:      # a layout the arrays do not read: the ball set-up decides
            a = None
    if a is not None:
        channels = a.Ct.rh.shape[0]
        try:
            m, r, failed = filter_kernels_arrays(a, L, check_g=True, progress=progress)
        except RangeError:
            failed = None
        if failed is not None:
            mid = m.real.reshape(len(heads), channels, L).transpose(1, 0, 2).copy()
            rad = r.reshape(len(heads), channels, L).transpose(1, 0, 2).copy()
            todo = sorted({row // channels for row in failed})
    if todo:
        dm = dplr_module(mod, prec, [heads[i] for i in todo])
        sub = dplr_float64(dm.models, dm.l_kernel, L, progress=progress, conjugate_pairs=dm.conjugate_pairs)
        if sub is None:
            return None
        if mid is None:
            return sub
        mid[:, todo], rad[:, todo] = sub
    return mid, rad
