"""What a kernel module's tensors mean: the exact systems its forward pass defines.

The stored numbers are exact binary floats.  The reference forward passes apply a
transform to some of them (the step ``dt = T_dt(inv_dt)``, ``A = -T_real(A_real) -
i T_imag(A_imag)``); those values are irrational, so they are enclosed in balls at the
precision asked for, and everything else is exact.  Conventions (proofs/checkpoints.md):

* complex tensors are real views (trailing axis of 2); one mode per conjugate pair;
* head ``h`` uses SSM ``h % n_ssm``; a step of shape (H, 1) is tied across the state,
  (H, N/2) is one step per mode;
* the reference writes ``y = C x`` with C a row; s4cert's DPLR writes ``y = C* x``;
* a DPLR module's state is the full conjugate-symmetric one (2 N/2 states), its matrix
  ``diag(A) - P P*``, always bilinear; with per-mode steps ``D = diag(dt)`` the forward
  pass is the bilinear step of ``(D A, D B)`` at step 1 (the low-rank term scaled by D too);
* a DPLR module's stored C is C~ for ``l_kernel`` points when ``l_kernel > 0``: the
  kernel is ``K_j = c (I - Abar^l)^{-1} Abar^j Bbar`` (any ``L``), and the raw C when
  ``l_kernel = 0``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from flint import acb, arb, ctx

from ...algorithms.s4.dplr import DPLR
from ...arith.disk_convert import dd_of_balls
from ...arith.double_double import DD
from .layouts import KernelModule

#: torch's softplus returns x itself above this threshold (beta = 1)
SOFTPLUS_THRESHOLD = 20.0
#: the constant the reference's relu transform adds
RELU_FLOOR = 1e-4


def _floats(a: np.ndarray, what: str) -> np.ndarray:
    a = np.asarray(a)
    if a.dtype.kind not in "fiu":
        raise ValueError(f"{what}: expected real numbers, got dtype {a.dtype}")
    a = a.astype(np.float64)  # float16/32 and small integers convert exactly
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{what}: holds a non-finite number")
    return a


def _complex_view(a: np.ndarray, what: str) -> np.ndarray:
    a = _floats(a, what)
    if a.ndim < 1 or a.shape[-1] != 2:
        raise ValueError(f"{what}: expected a real view of complex numbers (last axis 2), got shape {a.shape}")
    return a


def transform(x: float, name: str) -> arb:
    """``T(x)`` for an exact float x, as a ball at the current precision."""
    a = arb(x)
    if name == "none":
        return a
    if name == "exp":
        return a.exp()
    if name == "relu":
        return (a if x > 0 else arb(0)) + arb(RELU_FLOOR)
    if name == "sigmoid":
        return 1 / (1 + (-a).exp())
    if name == "softplus":
        return a if x > SOFTPLUS_THRESHOLD else (1 + a.exp()).log()
    raise ValueError(f"unknown transform {name!r}")


@dataclass
class DiagonalModule:
    """Per head h: modes lam[h], steps dt[h], B[h]; per channel c: C[c][h] (balls)."""

    lam: list
    dt: list
    B: list
    C: list
    re_positive: list
    channels: int
    H: int
    N: int


@dataclass
class DPLRModule:
    """Per (channel, head): a DPLR model at step 1 and the relation of its C."""

    models: list          # models[c][h]: DPLR with C the stored row c (full state, ours: conj)
    l_kernel: int | None  # C~ is for this many points (0: C itself; None: for the kernel length)
    channels: int
    H: int
    N: int
    #: the exact models are conjugate-closed (state j + N/2 the conjugate of state j in
    #: Lambda, P, Q, B and C), as the reference's full state of conjugate pairs is
    conjugate_pairs: bool = False


def _heads(H: int, n_ssm: int, what: str) -> None:
    if n_ssm < 1 or H % n_ssm:
        raise ValueError(f"{what}: {n_ssm} SSMs do not divide the {H} heads")


def _steps(mod: KernelModule, H: int, N2: int) -> tuple[np.ndarray, str]:
    if "inv_dt" in mod.tensors:
        a = _floats(mod.tensors["inv_dt"], "inv_dt")
    else:
        a = _floats(mod.tensors["log_dt"], "log_dt")
    if a.ndim == 1:
        a = a[:, None]
    if a.ndim != 2 or a.shape[0] != H or a.shape[1] not in (1, N2):
        raise ValueError(f"step parameter: expected shape ({H}, 1) or ({H}, {N2}), got {a.shape}")
    return np.broadcast_to(a, (H, N2)), mod.settings["dt_transform"]


def _diag_parameters(mod: KernelModule) -> tuple:
    """(A_real, A_imag, sign of the imaginary transform, B (n_ssm, N2, 2) or None, C (ch, H, N2, 2))."""
    t = mod.tensors
    if mod.layout == "s4d-minimal":
        C = _complex_view(t["C"], "C")
        if C.ndim != 3:
            raise ValueError(f"C: expected shape (H, N/2, 2), got {C.shape}")
        return _floats(t["log_A_real"], "log_A_real"), _floats(t["A_imag"], "A_imag"), +1, None, C[None]
    if mod.layout == "s4-v3-diag":
        B = _complex_view(t["B"], "B")
        while B.ndim > 3 and B.shape[0] == 1:
            B = B[0]
        C = _complex_view(t["C"], "C")
        return _floats(t["inv_A_real"], "inv_A_real"), _floats(t["A_imag"], "A_imag"), +1, B, \
            C if C.ndim == 4 else C[None]
    if mod.layout == "s4-v3-dplr":
        re, im = _floats(t["inv_w_real"], "inv_w_real"), -_floats(t["w_imag"], "w_imag")
    else:
        re, im = _floats(t["A_real"], "A_real"), _floats(t["A_imag"], "A_imag")
    B = _complex_view(t["B"], "B")
    while B.ndim > 3 and B.shape[0] == 1:
        B = B[0]
    C = _complex_view(t["C"], "C")
    if C.ndim == 3:
        C = C[None]
    if B.ndim != 3 or C.ndim != 4:
        raise ValueError(f"B, C: expected shapes (1, n_ssm, N/2, 2) and (channels, H, N/2, 2), "
                         f"got {t['B'].shape} and {t['C'].shape}")
    return re, im, -1, B, C


def _lam(re: float, im: float, sign: int, real_t: str, imag_t: str) -> acb:
    # V4: A = -T_real(A_real) - i T_imag(A_imag); minimal S4D: -exp(log_A_real) + i A_imag
    return acb(-transform(re, real_t), sign * transform(im, imag_t))


def _cx(v: np.ndarray) -> acb:
    return acb(arb(float(v[0])), arb(float(v[1])))


def _head_list(heads: list[int] | None, H: int) -> list[int]:
    heads = list(range(H)) if heads is None else list(heads)
    if any(not 0 <= h < H for h in heads):
        raise ValueError(f"heads must lie in [0, {H})")
    return heads


def _checked_diag(mod: KernelModule) -> tuple:
    """``_diag_parameters`` with the shapes checked, the number of SSMs, and the steps
    broadcast to (H, N/2) with their transform."""
    re, im, sign, B, C = _diag_parameters(mod)
    H, N2 = C.shape[1], C.shape[2]
    if re.ndim != 2 or re.shape != im.shape or re.shape[1] != N2:
        raise ValueError(f"A: expected shape (n_ssm, {N2}), got {re.shape} and {im.shape}")
    n_ssm = re.shape[0]
    _heads(H, n_ssm, "A")
    if B is not None and (B.shape[0] != n_ssm and B.shape[0] != 1 or B.shape[1] != N2):
        raise ValueError(f"B: expected (1, {n_ssm}, {N2}, 2), got {mod.tensors['B'].shape}")
    steps, dt_t = _steps(mod, H, N2)
    return re, im, sign, B, C, n_ssm, steps, dt_t


def diagonal_module(mod: KernelModule, prec: int, heads: list[int] | None = None) -> DiagonalModule:
    """The balls of a diagonal module at ``prec`` bits, for ``heads`` (default all;
    the lists are indexed by position in ``heads``)."""
    re, im, sign, B, C, n_ssm, steps, dt_t = _checked_diag(mod)
    channels, H, N2 = C.shape[0], C.shape[1], C.shape[2]
    s = mod.settings
    lam, dt, Bs, rp = [], [], [], []
    heads = _head_list(heads, H)
    with ctx.workprec(prec):
        for h in heads:
            k = h % n_ssm
            lam.append([_lam(re[k, n], im[k, n], sign, s["real_transform"], s["imag_transform"])
                        for n in range(N2)])
            # Re lambda = -T_real(A_real) > 0 only for T_real = none and A_real < 0 (exact floats)
            rp.append([s["real_transform"] == "none" and re[k, n] < 0 for n in range(N2)])
            dt.append([acb(transform(steps[h, n], dt_t)) for n in range(N2)])
            Bs.append([acb(1) if B is None else _cx(B[k % B.shape[0], n]) for n in range(N2)])
        Cs = [[[_cx(C[c, h, n]) for n in range(N2)] for h in heads] for c in range(channels)]
    return DiagonalModule(lam, dt, Bs, Cs, rp, channels, H, 2 * N2)


@dataclass
class DiagonalArrays:
    """A diagonal module as double-double disks for ``heads``: lam, dt, B of shape
    (heads, N/2), C of shape (channels, heads, N/2), re_positive as booleans."""

    lam: DD
    dt: DD
    B: DD
    C: DD
    re_positive: np.ndarray


def _transformed(values: np.ndarray, name: str, prec: int) -> DD:
    """T(x) for every exact float of ``values`` as double-double disks (each distinct
    value enclosed once by FLINT at ``prec`` bits)."""
    distinct, index = np.unique(values, return_inverse=True)
    with ctx.workprec(prec):
        balls = [acb(transform(float(x), name)) for x in distinct]
    d = dd_of_balls(balls, prec)
    return d[index.reshape(values.shape)]


def diagonal_arrays(mod: KernelModule, heads: list[int] | None = None, prec: int = 256) -> DiagonalArrays:
    """The exact parameters of :func:`diagonal_module` as double-double disks, arrays over
    (heads, modes) (same conventions: head h uses SSM ``h % n_ssm``)."""
    re, im, sign, B, C, n_ssm, steps, dt_t = _checked_diag(mod)
    H, N2 = C.shape[1], C.shape[2]
    s = mod.settings
    hs = np.array(_head_list(heads, H), dtype=np.int64)
    k = hs % n_ssm
    t_re, t_im = _transformed(re[k], s["real_transform"], prec), _transformed(im[k], s["imag_transform"], prec)
    # A = -T_real(re) + i sign T_imag(im): the parts are the transforms' pairs, exactly; the
    # radius r_re + r_im >= sqrt(r_re^2 + r_im^2), rounded up
    lam = DD(-t_re.rh, -t_re.rl, sign * t_im.rh, sign * t_im.rl, np.nextafter(t_re.rad + t_im.rad, np.inf))
    dt = _transformed(steps[hs], dt_t, prec)
    if B is None:
        Bd = DD.exact(np.ones((len(hs), N2), dtype=np.complex128))
    else:
        b = B[k % B.shape[0]]
        Bd = DD.exact(b[..., 0] + 1j * b[..., 1])
    Ch = C[:, hs]
    Cd = DD.exact(Ch[..., 0] + 1j * Ch[..., 1])
    rp = (s["real_transform"] == "none") & (re[k] < 0)
    return DiagonalArrays(lam, dt, Bd, Cd, np.asarray(rp))


#: the Annotated S4 clips the real part of Lambda at this value (the binary64 number of the literal)
ANNOTATED_CLIP = -1e-4


def _annotated_module(mod: KernelModule, prec: int, heads: list[int] | None) -> DPLRModule:
    """The Annotated S4 layer: per feature h, Lambda = min(Lambda_re, -1e-4) + i Lambda_im,
    A = Lambda - P P*, B, C~ = C (for the kernel length), step e^{log_step}; the kernel is
    the real part of the complex one (no conjugate halving)."""
    t = mod.tensors
    re, im = _floats(t["Lambda_re"], "Lambda_re"), _floats(t["Lambda_im"], "Lambda_im")
    P, B, C = (_complex_view(t[k], k) for k in ("P", "B", "C"))
    if re.ndim == 1:
        re, im, P, B, C = re[None], im[None], P[None], B[None], C[None]
    H, N = re.shape
    if im.shape != (H, N) or any(a.shape != (H, N, 2) for a in (P, B, C)):
        raise ValueError(f"annotated-s4: expected Lambda_re, Lambda_im of shape (H, N) and P, B, C of shape "
                         f"(H, N, 2); got {t['Lambda_re'].shape}, {t['P'].shape}, {t['B'].shape}, {t['C'].shape}")
    step = _floats(t["log_step"], "log_step").reshape(-1)
    if step.size not in (1, H):
        raise ValueError(f"log_step: expected 1 or {H} values, got shape {t['log_step'].shape}")
    heads = _head_list(heads, H)
    models = [[None] * len(heads)]
    with ctx.workprec(prec):
        for i, h in enumerate(heads):
            d = arb(float(step[h if step.size > 1 else 0])).exp()
            lam = [acb(arb(min(float(re[h, n]), ANNOTATED_CLIP)), arb(float(im[h, n]))) for n in range(N)]
            p = [_cx(P[h, n]) for n in range(N)]
            # the step enters as D = d I (step 1 form, as for the other DPLR layouts)
            models[0][i] = DPLR(Lambda=[d * x for x in lam], P=[[d * x] for x in p], Q=[[x] for x in p],
                                B=[d * _cx(B[h, n]) for n in range(N)], C=[_cx(C[h, n]) for n in range(N)])
    return DPLRModule(models, None, 1, H, N)


def stored_l_kernel(mod: KernelModule) -> int:
    """The number of points the stored C~ is for (``l_kernel``; 0: C itself)."""
    lk = mod.tensors.get("l_kernel", mod.tensors.get("L"))
    l_kernel = 0 if lk is None else int(np.asarray(lk).reshape(-1)[0]) if np.asarray(lk).size == 1 else -1
    if l_kernel < 0 or l_kernel > 1 << 24:
        raise ValueError(f"l_kernel: expected one integer in [0, 2^24], got {lk!r}")
    return l_kernel


def _dplr_P(mod: KernelModule, n_ssm: int, N2: int) -> np.ndarray:
    P = _complex_view(mod.tensors["P"], "P")
    if P.ndim == 3:
        P = P[None]
    if P.ndim != 4 or P.shape[1] != n_ssm or P.shape[2] != N2:
        raise ValueError(f"P: expected shape (rank, {n_ssm}, {N2}, 2), got {mod.tensors['P'].shape}")
    return P


def dplr_arrays(mod: KernelModule, heads: list[int] | None = None, prec: int = 256):
    """The models of :func:`dplr_module` as double-double disks (``algorithms.s4.dplr_arrays``):
    a ``DPLRArrays`` for ``heads``, the first half of each conjugate-closed
    state (lam, B and P scaled by the step, Q = P, C~ the conjugate of the stored C), or
    None for a layout that is not conjugate-closed (the Annotated S4)."""
    if mod.layout == "annotated-s4":
        return None
    from ...algorithms.s4.dplr_arrays import DPLRArrays
    d = diagonal_arrays(mod, heads, prec)
    re = _diag_parameters(mod)[0]
    N2 = d.lam.rh.shape[1]
    P = _dplr_P(mod, re.shape[0], N2)
    k = (np.arange(d.lam.rh.shape[0]) if heads is None else np.asarray(heads)) % re.shape[0]
    p = [DD.exact(P[i, k, :, 0] + 1j * P[i, k, :, 1]) for i in range(P.shape[0])]
    return DPLRArrays(d.dt.mul(d.lam), d.dt.mul(d.B), [d.dt.mul(x) for x in p], p, d.C.conj())


def dplr_module(mod: KernelModule, prec: int, heads: list[int] | None = None) -> DPLRModule:
    """The DPLR models of a module (balls at ``prec`` bits), one per (channel, head in
    ``heads``; default all, indexed by position in ``heads``).  ``l_kernel`` None means
    the stored C is C~ for the kernel length itself."""
    if mod.layout == "annotated-s4":
        return _annotated_module(mod, prec, heads)
    re, im, sign, B, C = _diag_parameters(mod)
    channels, H, N2 = C.shape[0], C.shape[1], C.shape[2]
    n_ssm = re.shape[0]
    _heads(H, n_ssm, "A")
    P = _dplr_P(mod, n_ssm, N2)
    steps, dt_t = _steps(mod, H, N2)
    l_kernel = stored_l_kernel(mod)
    s = mod.settings
    heads = _head_list(heads, H)
    models = [[None] * len(heads) for _ in range(channels)]
    with ctx.workprec(prec):
        for i, h in enumerate(heads):
            k = h % n_ssm
            d = [transform(steps[h, n], dt_t) for n in range(N2)]
            lam = [_lam(re[k, n], im[k, n], sign, s["real_transform"], s["imag_transform"]) for n in range(N2)]
            b = [_cx(B[k % B.shape[0], n]) for n in range(N2)]
            p = [[_cx(P[r, k, n]) for n in range(N2)] for r in range(P.shape[0])]
            D = d + d
            lam_f = [x * y for x, y in zip(D, lam + [x.conjugate() for x in lam])]
            b_f = [x * y for x, y in zip(D, b + [x.conjugate() for x in b])]
            p_full = [col + [x.conjugate() for x in col] for col in p]
            P_scaled = [[x * y for x, y in zip(D, col)] for col in p_full]
            rows = lambda cols: [[cols[r][n] for r in range(len(cols))] for n in range(2 * N2)]
            for c in range(channels):
                row = [_cx(C[c, h, n]) for n in range(N2)]
                row = row + [x.conjugate() for x in row]
                models[c][i] = DPLR(Lambda=lam_f, P=rows(P_scaled), Q=rows(p_full), B=b_f,
                                    C=[x.conjugate() for x in row])
    return DPLRModule(models, l_kernel, channels, H, 2 * N2, conjugate_pairs=True)
