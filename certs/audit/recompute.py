"""The audit's kernel check: the kernel recomputed by a route other than the
certifier's, and every stored disk tested for containing it."""
from __future__ import annotations

from fractions import Fraction
from typing import Any

from flint import acb, ctx

from ...algorithms.dft import next_power_of_two
from ...algorithms.s4.c_tilde import c_from_c_tilde, c_tilde
from ...algorithms.s4.dplr import DPLR
from ...algorithms.s4.kernels import kernel_by_powers
from ...algorithms.result import undecided
from ...algorithms.s4.filter import filter_kernel
from ...arith import BallField, ExactField

from .. import routing
from ..io.kernel_file import KernelFile
from ..io.numbers import exact_arb

#: the dense route (powers of Abar) is used when its cost N^2 L (+ N^3 log2 M with a
#: supplied C~) is at most this; above it, the filter with direct Cauchy sums
POWERS_LIMIT = 2_000_000
#: how many times the kernel check doubles its precision when containment is undecided
RETRIES = 2


def powers_cost(N: int, L: int, c_tilde_supplied: bool) -> int:
    """The dense route's cost: N^2 L, plus N^3 log2 M to solve for C from a supplied C~."""
    M = next_power_of_two(L)
    return N * N * L + (N ** 3 * max(1, M.bit_length() - 1) if c_tilde_supplied else 0)


#: how the audit forms Abar for C~ (and for C from a supplied C~): through the structured
#: (Woodbury/bordered) solver of G.  The certifier forms C~ by "dense-squaring", eliminating
#: on the dense G; the two methods share only the squarings, so the audit's C~ checks the
#: certifier's solve.  ("adjoint-steps" is exact in exact arithmetic but widens balls
#: geometrically with M.)
C_TILDE_METHOD = "structured-squaring"


def kernel_by_powers_from(F, model: DPLR, step: Any, L: int, c_tilde: list | None):
    """K_j = C* Abar^j Bbar by dense powers (a Result: value the L entries, statuses
    those of the bilinear step and of the solve for C); with a supplied C~ the output
    vector is C = (I - Abar^M)^-* C~ (solved), which makes the filter's kernel of C~ the
    kernel of C."""
    if c_tilde is None:
        return kernel_by_powers(F, model, step, L)
    sol = c_from_c_tilde(F, model, step, next_power_of_two(L), c_tilde, method=C_TILDE_METHOD)
    if not sol.ok:
        return sol
    return kernel_by_powers(F, DPLR(model.Lambda, model.P, model.B, sol.value, Q=model.Q), step, L)


def file_partition(kf: KernelFile) -> list[int] | None:
    """The exact index partition when the inputs are exact, else None (decided by balls)."""
    if routing.exact_inputs(kf.model, kf.step, kf.c_tilde):
        return routing.exact_partition(kf.model, kf.step)
    return None


def file_c_tilde(F: BallField, kf: KernelFile) -> tuple[list | None, str]:
    """(C~, "") with C~ as supplied or formed in F by ``C_TILDE_METHOD``; (None, why)
    when it cannot be formed."""
    if kf.c_tilde is not None:
        return kf.c_tilde, ""
    res = c_tilde(F, kf.model, kf.step, next_power_of_two(kf.L), method=C_TILDE_METHOD)
    if not res.ok:
        return None, f"forming Abar for C~ returned {res.status}"
    return res.value, ""


def dense_route(kf: KernelFile, powers_limit: int) -> bool:
    """Whether the kernel check recomputes by dense powers of Abar: when N^2 L is small and
    the inputs are exact.  With ball inputs the powers widen the input radii like the
    entrywise |Abar|^j, which can grow geometrically however small the spectral radius
    (HiPPO LegS, N = 16, L = 256: radius 3e13 at any precision), while the filter's
    radii stay near the inputs' (8e-42 there)."""
    return (powers_cost(kf.N, kf.L, kf.c_tilde is not None) <= powers_limit
            and routing.exact_inputs(kf.model, kf.step, kf.c_tilde))


def recompute_kernel(kf: KernelFile, prec: int, powers_limit: int = POWERS_LIMIT) -> tuple[str, Any]:
    """(route, Result) of the kernel recomputed in BallField(prec) by a route other than
    the certifier's."""
    F = BallField(prec)
    if dense_route(kf, powers_limit):
        return "dense powers of Abar", kernel_by_powers_from(F, kf.model, kf.step, kf.L, kf.c_tilde)
    ct, why = file_c_tilde(F, kf)
    if ct is None:
        return "filter, direct Cauchy sums", undecided(why)
    return "filter, direct Cauchy sums", filter_kernel(F, kf.model, kf.step, kf.L, c_tilde=ct, cauchy="direct",
                                                       exceptional=file_partition(kf))


def _contains(rec: acb, m: tuple[Fraction, Fraction], r: Fraction, prec: int) -> str:
    """'in' if the disk (m, r) certainly contains the ball rec, 'out' if certainly
    disjoint from it, '?' otherwise."""
    with ctx.workprec(prec):
        if not rec.is_finite():
            return "?"
        c = acb(exact_arb(m[0], prec=prec), exact_arb(m[1], prec=prec))
        dist = abs(rec - c)
        rb = exact_arb(r, prec=prec)
        if dist <= rb:
            return "in"
        if dist > rb:
            return "out"
        return "?"


def _check_kernel_exact(kf: KernelFile, powers_limit: int) -> tuple[bool, str]:
    if powers_cost(kf.N, kf.L, kf.c_tilde is not None) > powers_limit:
        return False, (f"exact values are re-verified exactly only up to cost {powers_limit} "
                       "(N^2 L); raise powers_limit")
    E = ExactField(4)
    res = kernel_by_powers_from(E, kf.model, kf.step, kf.L, kf.c_tilde)
    if not res.ok:
        return False, f"exact recomputation returned {res.status}"
    values = [E.to_fractions(k) for k in res.value]
    n = 0
    for j, (a, b), r in kf.stated_disks():
        re, im = values[j]
        n += 1
        if (re - a) ** 2 + (im - b) ** 2 > r * r:
            return False, f"K[{j}] recomputed exactly lies outside the stored disk"
    return True, f"all {kf.L} entries recomputed exactly (dense powers of Abar) lie in the stored disks{_also(n - kf.L)}"


def _also(extra: int) -> str:
    """How many float64 disks a binary file states besides the exact ones (none: "")."""
    return f" (and the {extra} float64 disks of the entries stored more tightly)" if extra else ""


def check_kernel(kf: KernelFile, prec: int, powers_limit: int = POWERS_LIMIT,
                 direct_run: Any = None) -> tuple[bool, str]:
    """Every stored disk contains the independently recomputed kernel.  ``direct_run``
    may hold the kernel already computed at ``prec`` by the direct-Cauchy filter (the
    constants' run), used when that is the route."""
    if kf.mode == "exact":
        return _check_kernel_exact(kf, powers_limit)
    p = prec
    for attempt in range(RETRIES + 1):
        if attempt == 0 and direct_run is not None and not dense_route(kf, powers_limit):
            route, res = "filter, direct Cauchy sums", direct_run
        else:
            route, res = recompute_kernel(kf, p, powers_limit)
        if res.ok:
            verdicts = [(j, _contains(res.value[j], m, r, p + 64)) for j, m, r in kf.stated_disks()]
            out = [j for j, v in verdicts if v == "out"]
            if out:
                return False, f"K[{out[0]}] is certainly outside its stored disk ({route}, {p} bits)"
            undecided_j = [j for j, v in verdicts if v == "?"]
            if not undecided_j:
                return True, (f"all {kf.L} stored disks{_also(len(verdicts) - kf.L)} contain the kernel "
                              f"recomputed by {route} at {p} bits")
            why = f"K[{undecided_j[0]}] not decided"
        elif res.status != "undecided":
            return False, f"recomputation ({route}) returned {res.status}"
        else:
            why = f"recomputation undecided ({res.info.get('reason', '')})"
        p *= 2
    return False, f"{why} up to {p // 2} bits: the recomputed enclosure is too wide to confirm the file"
