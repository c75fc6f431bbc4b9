"""All channels of one S4 layer, certified, against a float64 numpy kernel.

``--kind diag`` (default):

A V4 diagonal (S4D) kernel module with H heads, N states (N/2 stored modes), n_ssm = 1,
ZOH, is written as a state dict (npz, float32 parameters as S4D-Lin initialises them,
slightly perturbed); ``certify_model`` certifies every kernel at L with
eps = 1e-12 max|K|.  Baselines, run in the same process on the same float64 values of
the parameters (dt and A formed in float64 from the stored numbers):

* ``vandermonde``: the reference's form, ``2 Re einsum(C', exp(dtA * arange(L)))``
  with the exponent tensor of shape (H, N/2, L) (as S4D code does);
* ``blocked``: the same sum through the split l = m T + k and BLAS matrix products, the
  two power tables by ``exp``;
* ``blocked_fast``: the same split with the power tables by products (entry k is entry
  k - 2^h times z^(2^h), z^(2^h) by squaring) and only the real part formed (two real
  BLAS products): the fastest float64 form here, and the one the ratio is taken against
  (timed alternately with the certified run, so both meet the same state of the machine).

``--kind dplr``: a V4 DPLR kernel module (``SSMKernelDPLR``) with H heads, N states,
n_ssm = 1, rank 1, LegS-like A, P, B (the normal-plus-low-rank form diagonalised in
float64, stored in float32), random C~ for l_kernel = L.  Baselines, on the same float64
parameters: the reference's own form (the generating function at the M/2 + 1 roots of the
upper half, the poles one per conjugate pair, irfft: ``half_spectrum_kernel``), the fastest
float64 form for these conjugate-closed layers and the one the ratio is taken against (timed
alternately with the certified run); and
the S4 filter at all M roots with all N poles (``kernel_vs_float64.float64_kernel``: one
zgemm for the M x N Cauchy matrix against all (r+1)^2 weight sets, Woodbury per root,
ifft), head by head.  ``--one-by-one`` also times the
certification with the layer's float64 pass turned off (each kernel through
``certify_kernel``), for the gain of the pass.

With the ``fast`` extra (numba) the disk routes' hot loops run compiled; the first
repetition in a process also loads them (and, right after installing, compiles them into
numba's cache), which the min leaves out.  ``S4CERT_COMPILED=0`` times the numpy forms.

    OPENBLAS_NUM_THREADS=1 python benchmarks/model.py [--kind diag|dplr] [--H 256] [--N 64]
        [--L 16384] [--repeat 3] [--one-by-one]
"""
from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

import numpy as np

from s4cert.certs.checkpoint.model import certify_model


def state_dict(H: int, N: int, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    n = N // 2
    log_dt = rng.uniform(np.log(1e-3), np.log(1e-1), size=(H, 1))
    A_real = np.log(0.5 * np.ones((1, n))) + 0.05 * rng.standard_normal((1, n))
    A_imag = np.pi * np.arange(n)[None, :] + 0.05 * rng.standard_normal((1, n))
    B = np.stack([np.ones((1, 1, n)), np.zeros((1, 1, n))], axis=-1) + 0.05 * rng.standard_normal((1, 1, n, 2))
    C = rng.standard_normal((1, H, n, 2)) * np.sqrt(0.5)
    f32 = lambda a: np.asarray(a, dtype=np.float32)
    return {"layer.kernel.inv_dt": f32(log_dt), "layer.kernel.A_real": f32(A_real),
            "layer.kernel.A_imag": f32(A_imag), "layer.kernel.B": f32(B), "layer.kernel.C": f32(C)}


def parameters(sd: dict):
    """dt, A, B, C in float64 from the stored float32 numbers (exp transforms, V4 signs)."""
    g = lambda k: sd[f"layer.kernel.{k}"].astype(np.float64)
    dt = np.exp(g("inv_dt"))                       # (H, 1)
    A = -np.exp(g("A_real")) - 1j * g("A_imag")    # (1, n)
    B = g("B")[..., 0] + 1j * g("B")[..., 1]       # (1, 1, n)
    C = g("C")[..., 0] + 1j * g("C")[..., 1]       # (1, H, n)
    return dt, A, B[0], C[0]


def legs_dplr(N: int):
    """LegS as normal plus low rank (S = A + P P^T normal), diagonalised in float64: the
    N/2 eigenvalues with positive imaginary part, and P, B in that eigenbasis."""
    q = np.sqrt(1 + 2 * np.arange(N))
    A = -(np.tril(np.outer(q, q)) - np.diag(np.arange(N)))
    P = np.sqrt(np.arange(N) + 0.5)
    lam, V = np.linalg.eig(A + np.outer(P, P))
    keep = np.argsort(lam.imag)[N // 2:]
    lam, V = lam[keep], V[:, keep]
    return lam, V.conj().T @ P.astype(complex), V.conj().T @ q.astype(complex)


def dplr_state_dict(H: int, N: int, L: int, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    lam, P, B = legs_dplr(N)
    n = N // 2
    ri = lambda z: np.stack([z.real, z.imag], axis=-1).astype(np.float32)
    log_dt = rng.uniform(np.log(1e-3), np.log(1e-1), size=(H, 1))
    C = (rng.standard_normal((1, H, n)) + 1j * rng.standard_normal((1, H, n))) * np.sqrt(0.5)
    return {"layer.kernel.inv_dt": log_dt.astype(np.float32),
            "layer.kernel.A_real": np.log(-lam.real)[None].astype(np.float32),
            "layer.kernel.A_imag": lam.imag[None].astype(np.float32), "layer.kernel.B": ri(B)[None, None],
            "layer.kernel.C": ri(C), "layer.kernel.P": ri(P)[None, None],
            "layer.kernel.l_kernel": np.array(L, dtype=np.int64)}


def _dplr_parameters(sd: dict):
    g = lambda k: sd[f"layer.kernel.{k}"].astype(np.float64)
    cx = lambda a: a[..., 0] + 1j * a[..., 1]
    dt = np.exp(g("inv_dt"))[:, 0]
    lam = -np.exp(g("A_real")[0]) - 1j * g("A_imag")[0]   # V4 signs
    return dt, lam, cx(g("B"))[0, 0], cx(g("P"))[0, 0], cx(g("C"))[0]


def dplr_kernels(sd: dict, L: int) -> np.ndarray:
    """The layer's H kernels in float64 (V4 DPLR semantics: the step folded into Lambda,
    B and P at step 1; the full state of conjugate pairs; C the stored C~), at all M
    roots with all N poles (``kernel_vs_float64.float64_kernel``)."""
    from kernel_vs_float64 import float64_kernel
    dt, lam, B, P, C = _dplr_parameters(sd)
    full = lambda z: np.concatenate([z, np.conj(z)])
    out = []
    for h in range(len(dt)):
        Pf = full(P)[:, None]
        K = float64_kernel(dt[h] * full(lam), dt[h] * Pf, Pf, dt[h] * full(B), np.conj(full(C[h])), 1.0, L)
        out.append(K.real)
    return np.array(out)


def half_spectrum_kernel(lam, P, Q, B, Ct, L):
    """The reference's float64 form for a conjugate-closed system at step 1: the generating
    function at the M/2 + 1 roots exp(-2 pi i k/M), k <= M/2, one Cauchy matrix per half of
    the poles (mu and its conjugate; ``lam``, ``P``, ``B``, ``Ct`` hold one mode per pair),
    each one zgemm against all weight sets, Woodbury per root, irfft.  ``P`` (N/2 x r) is the
    right low-rank factor, ``Q`` the left one."""
    M = 1 << max(0, (L - 1).bit_length())
    z = np.exp(-2j * np.pi * np.arange(M // 2 + 1) / M)
    mu, gain = (2 - lam) / (2 + lam), -2.0 / (2 + lam)
    U = np.concatenate([Ct[:, None], Q], axis=1)                 # left vectors
    V = np.concatenate([B[:, None], P], axis=1)
    r = P.shape[1]
    Wt = (gain[:, None, None] * np.conj(U)[:, :, None] * V[:, None, :]).reshape(len(lam), -1)
    Wc = (np.conj(gain)[:, None, None] * U[:, :, None] * np.conj(V)[:, None, :]).reshape(len(lam), -1)
    S = (1.0 / (z[:, None] - mu) @ Wt + 1.0 / (z[:, None] - np.conj(mu)) @ Wc).reshape(-1, r + 1, r + 1)
    CB, CP, QB, QP = S[:, 0, 0], S[:, 0, 1:], S[:, 1:, 0], S[:, 1:, 1:]
    beta = (1 + z) / 2
    X = np.linalg.solve(np.eye(r)[None] + beta[:, None, None] * QP, QB[:, :, None])[:, :, 0]
    H = CB - beta * np.einsum("mk,mk->m", CP, X)
    H[M // 2] = 0.5 * (np.vdot(Ct, B) + np.vdot(np.conj(Ct), np.conj(B)))
    return np.fft.irfft(H, n=M)[:L]


def dplr_kernels_half(sd: dict, L: int) -> np.ndarray:
    """The same kernels in the reference's own form (:func:`half_spectrum_kernel`): the
    fastest float64 form for these conjugate-closed layers."""
    dt, lam, B, P, C = _dplr_parameters(sd)
    return np.array([half_spectrum_kernel(dt[h] * lam, dt[h] * P[:, None], P[:, None], dt[h] * B, np.conj(C[h]), L)
                     for h in range(len(dt))])


def vandermonde(dt, A, B, C, L):
    dtA = dt * A                                            # (H, n)
    W = C * B * (np.exp(dtA) - 1) / A                       # (H, n)
    V = np.exp(dtA[:, :, None] * np.arange(L))              # (H, n, L)
    return 2 * np.einsum("hn,hnl->hl", W, V, optimize=True).real


def blocked(dt, A, B, C, L):
    dtA = dt * A
    W = C * B * (np.exp(dtA) - 1) / A
    T = int(np.ceil(np.sqrt(L)))
    m = -(-L // T)
    a = W[:, None, :] * np.exp(dtA[:, None, :] * np.arange(T)[None, :, None])    # (H, T, n)
    b = np.exp(dtA[:, :, None] * (T * np.arange(m))[None, None, :])              # (H, n, m)
    K = np.matmul(a, b)                                                          # (H, T, m)
    return 2 * K.real.transpose(0, 2, 1).reshape(len(dt), T * m)[:, :L]


def _table(z, count, first):
    """first * z^k for k < count, shape (H, count, n), by products: entry k is entry k - 2^h
    times z^(2^h) (whole rows written per stage)."""
    out = np.empty((z.shape[0], count, z.shape[1]), dtype=complex)
    out[:, 0] = first
    h, f = 0, z.copy()
    while (1 << h) < count:
        lo, hi = 1 << h, min(count, 2 << h)
        np.multiply(out[:, :hi - lo], f[:, None, :], out=out[:, lo:hi])
        f, h = f * f, h + 1
    return out


def blocked_fast(dt, A, B, C, L):
    dtA = dt * A
    z = np.exp(dtA)
    W = C * B * (z - 1) / A
    T = int(np.ceil(np.sqrt(L)))
    m = -(-L // T)
    a = _table(z, T, W)                                        # (H, T, n): W z^k
    b = _table(np.exp(dtA * T), m, np.ones_like(z))            # (H, m, n): z^(T m)
    at = a.swapaxes(1, 2)
    K = np.matmul(b.real, at.real) - np.matmul(b.imag, at.imag)   # (H, m, T)
    return 2 * K.reshape(len(dt), m * T)[:, :L]


def timed(f, repeat):
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t)
    return min(times), statistics.median(times), out


def timed_pair(base, other, repeat):
    """Both timed ``repeat`` times alternately (base, other, base, ...), so that the ratio's
    two sides meet the same state of a noisy machine: (base min, base median, base's output,
    other min, other median, other's output)."""
    tb, to, ob, oo = [], [], None, None
    for _ in range(repeat):
        t = time.perf_counter()
        ob = base()
        tb.append(time.perf_counter() - t)
        t = time.perf_counter()
        oo = other()
        to.append(time.perf_counter() - t)
    return min(tb), statistics.median(tb), ob, min(to), statistics.median(to), oo


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--kind", choices=("diag", "dplr"), default="diag")
    p.add_argument("--one-by-one", action="store_true")
    p.add_argument("--H", type=int, default=256)
    p.add_argument("--N", type=int, default=64)
    p.add_argument("--L", type=int, default=16384)
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    if args.kind == "dplr":
        return main_dplr(args)
    sd = state_dict(args.H, args.N)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "layer.npz")
        np.savez(path, **sd)
        dt, A, B, C = parameters(sd)
        v_min, v_med, Kv = timed(lambda: vandermonde(dt, A, B, C, args.L), args.repeat)
        b_min, b_med, Kb = timed(lambda: blocked(dt, A, B, C, args.L), args.repeat)
        eps = 1e-12 * float(np.max(np.abs(Kv)))
        # the ratio's two sides, timed alternately
        f_min, f_med, Kf, c_min, c_med, rep = timed_pair(lambda: blocked_fast(dt, A, B, C, args.L),
                                                         lambda: certify_model(path, L=args.L, eps=eps), args.repeat)
    k = rep.kernels[0]
    err = float(np.max(np.abs(Kv - k.mid[0]) - k.rad[0]))
    print(f"H={args.H} N={args.N} L={args.L}: {args.H} kernels, eps = 1e-12 max|K| = {eps:.3e}")
    print(f"  float64 vandermonde (reference form): min {v_min:.3f}s  median {v_med:.3f}s")
    print(f"  float64 blocked (BLAS):              min {b_min:.3f}s  median {b_med:.3f}s")
    print(f"  float64 blocked, tables by products: min {f_min:.3f}s  median {f_med:.3f}s "
          f"(agrees with blocked to {float(np.max(np.abs(Kf - Kb))):.1e})")
    print(f"  certified ({', '.join(k.info.get('arithmetic', []))}): min {c_min:.3f}s  median {c_med:.3f}s; "
          f"status {k.status}, max radius {k.max_rad:.3e}")
    print(f"  ratio certified / vandermonde: {c_min / v_min:.2f}x (median {c_med / v_med:.2f}x); "
          f"certified / blocked: {c_min / b_min:.2f}x (median {c_med / b_med:.2f}x); "
          f"certified / blocked by products (the fastest): {c_min / f_min:.2f}x (median {c_med / f_med:.2f}x)")
    print(f"  the float64 vandermonde kernel lies within the disks up to {max(err, 0):.2e}")


def main_dplr(args) -> None:
    sd = dplr_state_dict(args.H, args.N, args.L)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "layer.npz")
        np.savez(path, **sd)
        f_min, f_med, Kf = timed(lambda: dplr_kernels(sd, args.L), args.repeat)
        eps = 1e-12 * float(np.max(np.abs(Kf)))
        # the ratio's two sides, timed alternately
        h_min, h_med, Kh, c_min, c_med, rep = timed_pair(lambda: dplr_kernels_half(sd, args.L),
                                                         lambda: certify_model(path, L=args.L, eps=eps), args.repeat)
        if args.one_by_one:
            from s4cert.certs.checkpoint import certify
            saved = certify.dplr_float64_module
            certify.dplr_float64_module = lambda *a, **k: None
            try:
                o_min, o_med, _ = timed(lambda: certify_model(path, L=args.L, eps=eps), 1)
            finally:
                certify.dplr_float64_module = saved
    k = rep.kernels[0]
    err = float(np.max(np.abs(Kf - k.mid[0]) - k.rad[0]))
    print(f"DPLR H={args.H} N={args.N} L={args.L}: {args.H} kernels, eps = 1e-12 max|K| = {eps:.3e}")
    print(f"  float64 S4 filter, all M roots and N poles (zgemm Cauchy, Woodbury, ifft): min {f_min:.3f}s  "
          f"median {f_med:.3f}s")
    print(f"  float64, the reference's form (M/2 + 1 roots, N/2 pole pairs, irfft): min {h_min:.3f}s  "
          f"median {h_med:.3f}s (agrees with the first to {float(np.max(np.abs(Kh - Kf))):.1e})")
    print(f"  certified ({', '.join(k.info.get('arithmetic', []))}): min {c_min:.3f}s  median {c_med:.3f}s; "
          f"status {k.status}, max radius {k.max_rad:.3e}")
    print(f"  ratio certified / reference form: {c_min / h_min:.2f}x (median {c_med / h_med:.2f}x); "
          f"certified / all roots: {c_min / f_min:.2f}x (median {c_med / f_med:.2f}x)")
    if args.one_by_one:
        print(f"  one kernel at a time (no layer pass): {o_min:.3f}s = {o_min / c_min:.2f}x the layer pass")
    print(f"  the float64 kernel lies within the disks up to {max(err, 0):.2e}")


if __name__ == "__main__":
    main()
