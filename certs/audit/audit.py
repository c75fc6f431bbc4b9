"""Independent audit of a kernel file, and comparison of someone else's kernel with it.

``audit_kernel_file`` re-verifies a file written by :func:`certs.files.save_kernel`
without trusting any of its numbers but the problem:

* ``digest``: the SHA-256 of the content matches;
* ``status`` and ``claims``: status ok; the radii are what the mode claims (<= eps in
  ball mode, 0 in exact mode, eps for stored rounded circuit outputs);
* ``kernel``: the kernel recomputed by another route -- dense powers of Abar (with C
  solved from a supplied C~) when N^2 L is small, else the filter with direct Cauchy
  sums and C~ by the structured adjoint solver -- in ball arithmetic at a higher
  precision (exactly, in exact mode), and every stored disk certainly contains it;
* ``kappa``: kappa is 64 r w^2 (b+1)^2 s of the stored b, w, s, up to their rounding;
* a-priori only, ``u``: log2 K0 and u = 2^log2_u satisfy the theorem's inequalities
  for the stored T0, V0, D0, eps; ``circuit``: the re-traced filter has T0 gates, and
  its ball evaluation does not contradict V0 or D0;
* ``partition``, ``b``, ``w``, ``A_wt``, ``d``, ``s``: re-certified from a ball filter
  run at another precision: no stored bound is contradicted by the recomputed
  enclosures (the detail says when it is also proved by them).

``compare_with`` bounds the error of another kernel (float32, say) against the stored
disks, with certified lower and upper bounds.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable

import numpy as np
from flint import acb, acb_mat, arb, ctx

from ...algorithms.dft import next_power_of_two
from ...algorithms.s4.dplr import DPLR, bilinear, kernel_by_powers
from ...algorithms.linalg import lu, lu_solve, matmul, solve
from ...algorithms.result import undecided
from ...algorithms.s4.filter import filter_kernel
from ...arith import BallField, ExactField, trace
from ...arith.ball import float_lower, float_upper

from .. import routing
from ..constants import separation
from ..io.files import KernelFile, SOURCES, exact_arb, load_kernel, parse_rational

#: the dense route (powers of Abar) is used when its cost N^2 L (+ N^3 log2 M with a
#: supplied C~) is at most this; above it, the filter with direct Cauchy sums
POWERS_LIMIT = 2_000_000
#: how many times the kernel check doubles its precision when containment is undecided
RETRIES = 2


@dataclass
class AuditReport:
    """``ok`` only if every check passed; ``checks`` lists (name, passed, detail)."""

    path: str
    ok: bool
    checks: list[tuple[str, bool, str]]
    prec: int = 0

    def failed(self) -> list[str]:
        return [name for name, passed, _ in self.checks if not passed]

    def summary(self) -> str:
        lines = [f"{'ok  ' if p else 'FAIL'} {name}: {detail}" for name, p, detail in self.checks]
        verdict = "audit passed" if self.ok else "audit FAILED: " + ", ".join(self.failed())
        return "\n".join(lines + [verdict])


class _Checks:
    def __init__(self):
        self.items: list[tuple[str, bool, str]] = []

    def add(self, name: str, passed: bool, detail: str) -> None:
        self.items.append((name, bool(passed), detail))

    def run(self, name: str, fn: Callable[[], tuple[bool, str]]) -> None:
        """A check whose inputs may be malformed: an error fails it, naming the error."""
        try:
            passed, detail = fn()
        except (ValueError, KeyError, TypeError, ArithmeticError) as e:
            passed, detail = False, f"cannot be checked: {type(e).__name__}: {e}"
        self.add(name, passed, detail)


# -- exact points ------------------------------------------------------------------------

def _pt(v: Any, what: str) -> arb:
    """A stored real number as an arb: exact for ints, floats and dyadic strings."""
    if isinstance(v, bool) or v is None:
        raise ValueError(f"{what}: expected a number, got {v!r}")
    if isinstance(v, int):
        return arb(v)
    if isinstance(v, float):
        if math.isnan(v):
            raise ValueError(f"{what}: NaN")
        return arb(v)
    if v in ("inf", "-inf"):
        return arb(v)
    if isinstance(v, str):
        return exact_arb(parse_rational(v, what), prec=256)
    raise ValueError(f"{what}: expected a number, got {type(v).__name__}")


def _float(v: Any, what: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float, str)):
        raise ValueError(f"{what}: expected a number, got {v!r}")
    if isinstance(v, str):
        if v in ("inf", "-inf"):
            return float(v)
        raise ValueError(f"{what}: expected a float, got {v!r}")
    f = float(v)
    if math.isnan(f):
        raise ValueError(f"{what}: NaN")
    return f


def _int(v: Any, what: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise ValueError(f"{what}: expected an integer, got {v!r}")
    return v


def _max(a: arb, b: arb) -> arb:
    """max of two exact points (comparisons of exact points are decisive)."""
    return a if a >= b else b


def _min(a: arb, b: arb) -> arb:
    return a if a <= b else b


def _abs_bounds(x: acb) -> tuple[arb, arb]:
    """(lower, upper) exact points of |x| over the ball (0 and inf if not finite)."""
    if not x.is_finite():
        return arb(0), arb("inf")
    a = abs(x)
    lo = a.lower()
    return (lo if lo > 0 else arb(0)), a.upper()


def _sum_bounds(xs: list) -> tuple[arb, arb]:
    lo, hi = arb(0), arb(0)
    for x in xs:
        l, h = _abs_bounds(x)
        lo, hi = lo + l, hi + h
    return lo.lower(), hi.upper()


def _fmt(x: arb) -> str:
    return f"{float(x.mid()):.6g}" if x.is_finite() else str(x)


def _upper_check(name: str, stored: arb, lo: arb, hi: arb) -> tuple[bool, str]:
    """A stored upper bound of a quantity enclosed in [lo, hi]."""
    if stored < lo:
        return False, f"{name} = {_fmt(stored)} is below the recomputed lower bound {_fmt(lo)} of the true value"
    how = "proved" if stored >= hi else f"not contradicted (true value in [{_fmt(lo)}, {_fmt(hi)}])"
    return True, f"{name} = {_fmt(stored)} >= true value: {how}"


def _lower_check(name: str, stored: arb, lo: arb, hi: arb) -> tuple[bool, str]:
    """A stored lower bound of a quantity enclosed in [lo, hi]."""
    if stored > hi:
        return False, f"{name} = {_fmt(stored)} is above the recomputed upper bound {_fmt(hi)} of the true value"
    how = "proved" if stored <= lo else f"not contradicted (true value in [{_fmt(lo)}, {_fmt(hi)}])"
    return True, f"{name} = {_fmt(stored)} <= true value: {how}"


# -- the kernel by another route -----------------------------------------------------------

def powers_cost(N: int, L: int, c_tilde_supplied: bool) -> int:
    M = next_power_of_two(L)
    return N * N * L + (N ** 3 * max(1, M.bit_length() - 1) if c_tilde_supplied else 0)


def kernel_by_powers_from(F, model: DPLR, step: Any, L: int, c_tilde: list | None):
    """K_j = C* Abar^j Bbar by dense powers; with a supplied C~ the output vector is
    C = (I - Abar^M)^-* C~ (solved), which makes the filter's kernel of C~ the kernel of C."""
    if c_tilde is None:
        return kernel_by_powers(F, model, step, L)
    res = bilinear(F, model, step)
    if not res.ok:
        return res
    Abar = res.value[0]
    N, M = model.N, next_power_of_two(L)
    P = Abar
    for _ in range(M.bit_length() - 1):
        P = matmul(F, P, P)
    G = [[F.sub(F.one() if i == j else F.zero(), F.conj(P[j][i])) for j in range(N)] for i in range(N)]
    sol = solve(F, G, [F.from_number(x) for x in c_tilde])
    if not sol.ok:
        return sol
    return kernel_by_powers(F, DPLR(model.Lambda, model.P, model.B, sol.value, Q=model.Q), step, L)


def _partition(kf: KernelFile) -> list[int] | None:
    """The exact index partition when the inputs are exact, else None (decided by balls)."""
    if routing.exact_inputs(kf.model, kf.step, kf.c_tilde):
        return routing.exact_partition(kf.model, kf.step)
    return None


def _c_tilde(F: BallField, kf: KernelFile):
    """C~ as supplied, or C - (Abar^M)* C with Abar formed column by column through the
    structured bilinear solver (the certifier solves with the dense G instead) and Abar^M
    by log2 M squarings.  (Applying the adjoint step M times, as ``algorithms.dplr.c_tilde``
    does, is exact in exact arithmetic but widens balls geometrically with M.)"""
    if kf.c_tilde is not None:
        return kf.c_tilde, ""
    res = bilinear(F, kf.model, kf.step)
    if not res.ok:
        return None, f"forming Abar for C~ returned {res.status}"
    N, M = kf.N, next_power_of_two(kf.L)
    with ctx.workprec(F.prec):
        P = acb_mat(res.value[0])
        for _ in range(M.bit_length() - 1):
            P = P * P
        C = acb_mat([[F.from_number(c)] for c in kf.model.C])
        out = C - P.conjugate().transpose() * C
        return [out[i, 0] for i in range(N)], ""


def recompute_kernel(kf: KernelFile, prec: int, powers_limit: int = POWERS_LIMIT) -> tuple[str, Any]:
    """(route, Result) of the kernel recomputed in BallField(prec) by a route other than
    the certifier's."""
    F = BallField(prec)
    if powers_cost(kf.N, kf.L, kf.c_tilde is not None) <= powers_limit:
        return "dense powers of Abar", kernel_by_powers_from(F, kf.model, kf.step, kf.L, kf.c_tilde)
    ct, why = _c_tilde(F, kf)
    if ct is None:
        return "filter, direct Cauchy sums", undecided(why)
    return "filter, direct Cauchy sums", filter_kernel(F, kf.model, kf.step, kf.L, c_tilde=ct, cauchy="direct",
                                                       exceptional=_partition(kf))


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
    for j, (k, (a, b), r) in enumerate(zip(res.value, kf.mid, kf.rad)):
        re, im = E.to_fractions(k)
        if (re - a) ** 2 + (im - b) ** 2 > r * r:
            return False, f"K[{j}] recomputed exactly lies outside the stored disk"
    return True, f"all {kf.L} entries recomputed exactly (dense powers of Abar) lie in the stored disks"


def check_kernel(kf: KernelFile, prec: int, powers_limit: int = POWERS_LIMIT,
                 direct_run: Any = None) -> tuple[bool, str]:
    """Every stored disk contains the independently recomputed kernel.  ``direct_run``
    may hold the kernel already computed at ``prec`` by the direct-Cauchy filter (the
    constants' run), used when that is the route."""
    if kf.mode == "exact":
        return _check_kernel_exact(kf, powers_limit)
    p = prec
    for attempt in range(RETRIES + 1):
        if attempt == 0 and direct_run is not None and powers_cost(kf.N, kf.L, kf.c_tilde is not None) > powers_limit:
            route, res = "filter, direct Cauchy sums", direct_run
        else:
            route, res = recompute_kernel(kf, p, powers_limit)
        if res.ok:
            verdicts = [_contains(k, m, r, p + 64) for k, m, r in zip(res.value, kf.mid, kf.rad)]
            if "out" in verdicts:
                j = verdicts.index("out")
                return False, f"K[{j}] is certainly outside its stored disk ({route}, {p} bits)"
            if "?" not in verdicts:
                return True, f"all {kf.L} stored disks contain the kernel recomputed by {route} at {p} bits"
            why = f"K[{verdicts.index('?')}] not decided"
        elif res.status != "undecided":
            return False, f"recomputation ({route}) returned {res.status}"
        else:
            why = f"recomputation undecided ({res.info.get('reason', '')})"
        p *= 2
    return False, f"{why} up to {p // 2} bits: the recomputed enclosure is too wide to confirm the file"


# -- certificate arithmetic ------------------------------------------------------------------

def check_kappa(cert: dict, r: int) -> tuple[bool, str]:
    """kappa against 64 r w^2 (b+1)^2 s of the stored b, w, s.  The certifier rounds b, w,
    s up to floats and kappa, computed from the unrounded points at >= 64 bits, up to a
    float: so kappa >= the formula at the floats just below b, w, s, and kappa <= the
    formula at b, w, s times (1 + 2^-50)."""
    if _int(cert["r"], "r") != r:
        return False, f"certificate r = {cert['r']} but the model has r = {r}"
    b, w, s = (_float(cert[k], k) for k in ("b", "w", "s"))
    kappa = _float(cert["kappa"], "kappa")
    if min(b, w, s) < 1:
        return False, f"b, w, s must be >= 1 (b = {b}, w = {w}, s = {s})"
    below = [math.nextafter(x, -math.inf) for x in (b, w, s)]
    formula = lambda b_, w_, s_: 64 * r * arb(w_) ** 2 * (arb(b_) + 1) ** 2 * arb(s_)
    with ctx.workprec(128):
        lo = formula(*below).lower()
        k = arb(kappa)
        if k < lo:
            return False, f"kappa = {kappa:.6g} is below 64 r w^2 (b+1)^2 s = {float(lo):.6g} of the stored b, w, s"
        if math.isfinite(w * b * s):
            hi = (formula(b, w, s) * (1 + arb(2) ** -50)).upper()
            if k > hi:
                return False, f"kappa = {kappa:.6g} is above 64 r w^2 (b+1)^2 s = {float(hi):.6g} of the stored b, w, s"
    return True, f"kappa = {kappa:.6g} = 64 r w^2 (b+1)^2 s of the stored b, w, s (to their rounding)"


def _log2(x: Fraction) -> arb:
    return exact_arb(x, prec=256).log() / arb(2).log()


def _power_of_two_log(x: Fraction) -> int | None:
    n, d = x.numerator, x.denominator
    if n > 0 and n & (n - 1) == 0 and d & (d - 1) == 0:
        return n.bit_length() - d.bit_length()
    return None


def check_u(cert: dict, eps: Fraction) -> tuple[bool, str]:
    """The rational-circuit certificate: K0 = 64 (V0+1)^2 / D0^2, log2_K0 >= log2 K0, and
    u = 2^log2_u <= min(1, D0/2, eps/2) / (2 K0^(T0+1))."""
    T0 = _int(cert["T0"], "T0")
    V0 = parse_rational(cert["V0"], "V0")
    D0 = parse_rational(cert["D0"], "D0")
    k = -_int(cert["log2_u"], "log2_u")
    if _int(cert["precision_bits"], "precision_bits") != k:
        return False, f"precision_bits = {cert['precision_bits']} but log2_u = {-k}"
    if T0 < 1 or V0 < 1 or not 0 < D0 <= 1:
        return False, f"need T0 >= 1, V0 >= 1, 0 < D0 <= 1 (T0 = {T0}, V0 = {V0}, D0 = {D0})"
    K0 = 64 * (V0 + 1) ** 2 / D0 ** 2
    log2_K0 = _float(cert["log2_K0"], "log2_K0")
    exact_log = _power_of_two_log(K0)
    if exact_log is not None:
        if Fraction(log2_K0) < exact_log:
            return False, f"log2_K0 = {log2_K0} < log2 K0 = {exact_log}"
    else:  # log2 K0 is irrational: more precision decides
        for p in (128, 512, 2048, 8192):
            with ctx.workprec(p):
                t = _log2(K0)
                if arb(log2_K0) >= t:
                    break
                if arb(log2_K0) < t:
                    return False, f"log2_K0 = {log2_K0} is below log2 K0 = {float(t.mid()):.17g}"
        else:
            return False, "log2_K0 could not be compared with log2 K0"
    m = min(Fraction(1), D0 / 2, eps / 2)
    with ctx.workprec(256):
        need = (T0 + 1) * _log2(K0) + _log2(2 / m)
        if arb(k) >= need:
            decided = True
        elif arb(k) < need:
            return False, f"u = 2^-{k} is too large: the theorem needs 2^-{float(need.mid()):.1f}"
        else:
            decided = False
    if not decided and Fraction(2) ** k * m < 2 * K0 ** (T0 + 1):
        return False, f"u = 2^-{k} is too large (decided exactly)"
    return True, (f"u = 2^-{k} <= min(1, D0/2, eps/2) / (2 K0^(T0+1)) with T0 = {T0}, "
                  f"log2 K0 <= {log2_K0:.6g}")


# -- re-certified constants ------------------------------------------------------------------

def _key(key: tuple) -> str:
    u, v = key
    return f"S[{'Ct' if u == 'C' else f'Q{u}'},{'B' if v == 'B' else f'P{v}'}]"


def constant_bounds(F: BallField, info: dict, r: int) -> dict:
    """Certified (lower, upper) exact points of the least valid b, w, A_wt (per sum),
    d and s, from a ball filter run with ``keep_blocks``.  ||u|| of the row u = C~* D P is
    its absolute row sum; ||v|| of the column v = Q* D B its largest entry."""
    blocks, M = info["blocks"], info["M"]
    minus_one = M // 2 if M >= 2 else None
    out: dict = {}
    with ctx.workprec(F.prec):
        b_lo = b_hi = w_lo = w_hi = arb(1)
        for k in range(M):
            if k == minus_one:
                continue
            T = [[blocks[(i, c)][k] for c in range(r)] for i in range(r)]
            cands = [_abs_bounds(blocks[("C", "B")][k]), _sum_bounds([blocks[("C", i)][k] for i in range(r)])]
            cands += [_abs_bounds(blocks[(i, "B")][k]) for i in range(r)]
            cands += [_sum_bounds(row) for row in T]
            for lo, hi in cands:
                b_lo, b_hi = _max(b_lo, lo), _max(b_hi, hi)
            beta = (1 + F.root_of_unity(M, k)) / 2
            W = [[(1 if i == c else 0) + beta * T[i][c] for c in range(r)] for i in range(r)]
            f = lu(F, W)
            if not f.ok:
                w_hi = arb("inf")
                continue
            cols = [lu_solve(F, f.value, [F.one() if i == c else F.zero() for i in range(r)]) for c in range(r)]
            for i in range(r):
                lo, hi = _sum_bounds([cols[c][i] for c in range(r)])
                w_lo, w_hi = _max(w_lo, lo), _max(w_hi, hi)
        out["b"], out["w"] = (b_lo, b_hi), (w_lo, w_hi)
        poles = info["poles"]
        d_lo = separation(F, poles, M)
        d_hi = arb("inf")
        for mu in poles:
            if not mu.is_finite():
                continue
            k0 = round(-float(mu.arg().mid()) * M / (2 * math.pi))
            for k in (k0 - 1, k0, k0 + 1):
                d_hi = _min(d_hi, abs(F.root_of_unity(M, k) - mu).upper())
        out["d"] = (d_lo, d_hi)
        out["A_wt"] = {_key(key): _sum_bounds(weights) for key, weights in info["weights"].items()}
        s_lo = s_hi = arb(1)
        if poles:
            for lo, hi in out["A_wt"].values():
                s_lo = _max(s_lo, (lo / d_hi).lower() if d_hi > 0 else arb("inf"))
                s_hi = _max(s_hi, (hi / d_lo).upper() if d_lo > 0 else arb("inf"))
        out["s"] = (s_lo, s_hi)
    return out


def _constants_run(kf: KernelFile, prec: int):
    F = BallField(prec)
    ct, why = _c_tilde(F, kf)
    if ct is None:
        return F, None, why
    res = filter_kernel(F, kf.model, kf.step, kf.L, c_tilde=ct, cauchy="direct", exceptional=_partition(kf),
                        keep_blocks=True)
    if not res.ok:
        return F, None, f"the ball filter (direct Cauchy sums, {prec} bits) returned {res.status}"
    return F, res, ""


def constant_checks(kf: KernelFile, prec: int, checks: _Checks) -> Any:
    """partition, b, w, A_wt, d, s; returns the ball filter run (direct Cauchy sums)."""
    F, res, why = _constants_run(kf, prec)
    if res is None:
        for name in ("partition", "b", "w", "A_wt", "d", "s"):
            checks.add(name, False, why)
        return None
    cert = kf.certificate
    part = list(res.info["exceptional"])
    checks.run("partition", lambda: (
        [_int(j, "partition") for j in cert["partition"]] == part,
        f"stored {cert['partition']}, recomputed {part} (the j with lambda_j = -2/step)"))
    bounds = constant_bounds(F, res.info, kf.model.r)
    with ctx.workprec(prec):
        for name in ("b", "w", "s"):
            checks.run(name, lambda name=name: _at_least_one(name, _pt(cert[name], name), *bounds[name]))
        checks.run("d", lambda: _check_d(_pt(cert["d"], "d"), *bounds["d"], bool(res.info["poles"])))
        checks.run("A_wt", lambda: _check_awt(cert["A_wt"], bounds["A_wt"]))
    return res


def _at_least_one(name: str, stored: arb, lo: arb, hi: arb) -> tuple[bool, str]:
    if stored < 1:
        return False, f"{name} = {_fmt(stored)} must be >= 1"
    return _upper_check(name, stored, lo, hi)


def _check_d(stored: arb, lo: arb, hi: arb, has_poles: bool) -> tuple[bool, str]:
    if has_poles and not stored > 0:
        return False, f"d = {_fmt(stored)} must be > 0"
    return _lower_check("d", stored, lo, hi)


def _check_awt(stored: Any, bounds: dict) -> tuple[bool, str]:
    if not isinstance(stored, dict) or set(stored) != set(bounds):
        return False, f"the Cauchy sums are {sorted(bounds)}, the file lists {sorted(stored) if isinstance(stored, dict) else stored}"
    details = []
    for key, (lo, hi) in sorted(bounds.items()):
        ok, detail = _upper_check(f"A_wt{key[1:]}", _pt(stored[key], key), lo, hi)
        if not ok:
            return False, detail
        details.append("proved" in detail)
    return True, f"{len(bounds)} weight bounds, {sum(details)} proved, none contradicted"


# -- the circuit (a-priori) ---------------------------------------------------------------------

def check_circuit(kf: KernelFile, prec: int, partition: list[int] | None) -> tuple[bool, str]:
    """Re-trace the filter into a circuit; T0 equal; V0 and D0 not contradicted by a ball
    evaluation of every node (V0 >= max |node|, D0 <= min |divisor|)."""
    cert = kf.certificate
    F = BallField(prec)
    ct, why = _c_tilde(F, kf)
    if ct is None:
        return False, why
    part = partition if partition is not None else _partition(kf)
    t = trace(F, filter_kernel, kf.model, kf.step, kf.L, c_tilde=ct, exceptional=part)
    if t.status != "ok":
        return False, f"the traced filter returned {t.status}"
    circuit = t.circuit
    T0 = _int(cert["T0"], "T0")
    if circuit.gates != T0:
        return False, f"T0 = {T0} but the re-traced circuit has {circuit.gates} gates"
    vals = circuit.run(BallField(prec + 32), circuit.input_values)
    divisors = set(circuit.divisors())
    with ctx.workprec(prec):
        v_lo = v_hi = arb(1)
        d_lo = d_hi = arb(1)
        for i, v in enumerate(vals):
            lo, hi = _abs_bounds(v)
            v_lo, v_hi = _max(v_lo, lo), _max(v_hi, hi)
            if i in divisors:
                d_lo, d_hi = _min(d_lo, lo), _min(d_hi, hi)
        V0 = exact_arb(parse_rational(cert["V0"], "V0"), prec=prec)
        D0 = exact_arb(parse_rational(cert["D0"], "D0"), prec=prec)
        ok_v, det_v = _upper_check("V0", V0, v_lo, v_hi)
        ok_d, det_d = _lower_check("D0", D0, d_lo, d_hi)
    if not (V0 >= 1 and D0 > 0 and D0 <= 1):
        return False, "need V0 >= 1 and 0 < D0 <= 1"
    return ok_v and ok_d, f"T0 = {T0} gates re-traced; {det_v}; {det_d}"


# -- claims ----------------------------------------------------------------------------------

def check_claims(kf: KernelFile) -> tuple[bool, str]:
    cert = kf.certificate
    if cert.get("mode") != kf.mode:
        return False, f"certificate mode {cert.get('mode')!r} differs from the problem's {kf.mode!r}"
    if kf.mode == "exact":
        ok = kf.source == SOURCES["exact"] and all(r == 0 for r in kf.rad)
        return ok, "exact values with radius 0" if ok else "exact mode needs exact values with radius 0"
    if kf.mode == "ball":
        if kf.source != SOURCES["ball"]:
            return False, f"ball mode stores ball enclosures, not {kf.source!r}"
        worst = max(kf.rad)
        return worst <= kf.eps, f"max radius {float(worst):.3e} {'<=' if worst <= kf.eps else '>'} eps {float(kf.eps):.3e}"
    if kf.source == SOURCES["a-priori"]:
        ok = all(r == kf.eps for r in kf.rad)
        return ok, "rounded circuit outputs with radius eps" if ok else "rounded circuit outputs need radius eps"
    if kf.source == SOURCES["a-priori enclosure"]:  # the claim is ||K^ - K|| <= eps: every disk within eps
        worst = max(kf.rad)
        ok = worst <= kf.eps
        return ok, f"enclosures of the rounded outputs, max radius {float(worst):.3e} {'<=' if ok else '>'} eps"
    return False, f"a-priori mode cannot store {kf.source!r}"


# -- the audit --------------------------------------------------------------------------------

def default_prec(kf: KernelFile) -> int:
    """Twice the file's working precision plus 64 bits (ball mode), or twice what eps
    needs plus 64 (the a-priori precision is far more than a check needs)."""
    e = kf.eps
    base = 64 + max(0, math.ceil(math.log2(e.denominator) - math.log2(e.numerator)))
    pb = kf.certificate.get("precision_bits")
    if kf.mode == "ball" and isinstance(pb, int) and not isinstance(pb, bool) and pb > 0:
        base = max(base, pb)
    return 2 * base + 64


def audit_kernel_file(path: Any, *, prec: int | None = None, powers_limit: int = POWERS_LIMIT) -> AuditReport:
    """Re-verify a kernel file independently (see the module docstring).  ValueError when
    the file cannot be read at all; otherwise a report whose ``ok`` holds only if every
    check passed.

    >>> import os, tempfile
    >>> from s4cert.algorithms.s4.dplr import DPLR
    >>> from s4cert.certs.kernel import certify_kernel
    >>> from s4cert.certs.io.files import save_kernel
    >>> m = DPLR([-1.0, -2.0], [0.5, 0.25], [1, 1], [1, -1])
    >>> path = os.path.join(tempfile.mkdtemp(), "k.json")
    >>> _ = save_kernel(path, certify_kernel(m, 0.5, 4, 1e-12), m, 0.5)
    >>> audit_kernel_file(path).ok
    True
    """
    kf = load_kernel(path)
    p = prec if prec is not None else default_prec(kf)
    if not isinstance(p, int) or p < 16:
        raise ValueError(f"prec must be an integer >= 16, got {p!r}")
    checks = _Checks()
    checks.add("digest", kf.digest_ok, "sha256 matches the content" if kf.digest_ok
               else "sha256 does not match: the file was altered")
    checks.add("status", kf.status == "ok", f"status {kf.status!r}")
    checks.run("claims", lambda: check_claims(kf))
    constants = _Checks()
    run = None
    try:
        run = constant_checks(kf, p, constants)
    except (ValueError, KeyError, TypeError, ArithmeticError) as e:
        constants.add("constants", False, f"cannot be checked: {type(e).__name__}: {e}")
    checks.run("kernel", lambda: check_kernel(kf, p, powers_limit, run))
    checks.run("kappa", lambda: check_kappa(kf.certificate, kf.model.r))
    checks.items += constants.items
    if kf.mode == "a-priori":
        part = list(run.info["exceptional"]) if run is not None else None
        checks.run("u", lambda: check_u(kf.certificate, kf.eps))
        checks.run("circuit", lambda: check_circuit(kf, p, part))
    ok = all(passed for _, passed, _ in checks.items)
    return AuditReport(os.fspath(path), ok, checks.items, p)


# -- comparing another kernel -------------------------------------------------------------------

@dataclass
class CompareReport:
    """Errors of another kernel ``o`` against the certified one, with certified bounds:
    ``abs_error`` = max_j |o_j - K_j| lies in ``abs_error_bounds``; ``rel_error`` =
    abs_error / max_j |K_j| lies in ``rel_error_bounds``; ``kernel_max_bounds`` encloses
    max_j |K_j|.  The plain values are computed from the stored midpoints (estimates);
    the bounds are rounded outward to floats."""

    path: str
    L: int
    abs_error: float
    abs_error_bounds: tuple[float, float]
    rel_error: float
    rel_error_bounds: tuple[float, float]
    kernel_max_bounds: tuple[float, float]
    worst_index: int
    digest_ok: bool = True

    def summary(self) -> str:
        a, r = self.abs_error_bounds, self.rel_error_bounds
        lines = [f"max abs error {self.abs_error:.6e}  (certified in [{a[0]:.6e}, {a[1]:.6e}]) at index {self.worst_index}",
                 f"max rel error {self.rel_error:.6e}  (certified in [{r[0]:.6e}, {r[1]:.6e}]; relative to max|K|)"]
        if not self.digest_ok:
            lines.append("warning: the kernel file's digest does not match its content")
        return "\n".join(lines)


def _other_array(other: Any, key: str | None) -> np.ndarray:
    if isinstance(other, np.ndarray):
        if key is not None:
            raise ValueError("key selects an array in an .npz file; got an array")
        return other
    path = os.fspath(other)
    if not os.path.isfile(path):
        raise ValueError(f"{path}: no such file")
    ext = os.path.splitext(path)[1].lower()
    try:
        if ext == ".npy":
            if key is not None:
                raise ValueError("key selects an array in an .npz file; a .npy file holds one array")
            return np.load(path, allow_pickle=False)
        if ext == ".npz":
            with np.load(path, allow_pickle=False) as z:
                names = list(z.files)
                if key is None:
                    if len(names) != 1:
                        raise ValueError(f"{path} holds arrays {names}: choose one with key")
                    key = names[0]
                if key not in names:
                    raise ValueError(f"{path}: no array {key!r} (it holds {names})")
                return z[key]
    except (OSError, EOFError) as e:
        raise ValueError(f"{path}: cannot read ({e})") from None
    raise ValueError(f"{path}: expected a .npy or .npz file")


def compare_with(path: Any, other: Any, *, key: str | None = None) -> CompareReport:
    """Bound the error of ``other`` (a .npy/.npz path or an array of length L; a real array
    is compared as real) against the certified kernel in ``path``.  For every j,
    |o_j - K_j| lies in [|o_j - mid_j| - rad_j, |o_j - mid_j| + rad_j], computed in ball
    arithmetic from the exact stored midpoints and radii."""
    kf = load_kernel(path)
    o = np.asarray(_other_array(other, key))
    if o.ndim != 1:
        raise ValueError(f"the other kernel must be a vector, got shape {o.shape}")
    if o.shape[0] != kf.L:
        raise ValueError(f"the other kernel has length {o.shape[0]}, the certified one L = {kf.L}")
    if o.dtype.kind not in "iufc":
        raise ValueError(f"the other kernel must hold numbers, got dtype {o.dtype}")
    if o.dtype.kind in "fc" and not np.all(np.isfinite(o)):
        raise ValueError(f"the other kernel has a non-finite entry at index {int(np.argmin(np.isfinite(o)))}")
    prec = kf.prec + 64
    e_lo = e_hi = k_lo = k_hi = arb(0)
    est, scale, worst = [], [], 0
    with ctx.workprec(prec):
        for j, ((a, b), r) in enumerate(zip(kf.mid, kf.rad)):
            x = complex(o[j])
            m = acb(exact_arb(a, prec=prec), exact_arb(b, prec=prec))
            dist = abs(acb(x.real, x.imag) - m)
            mod = abs(m)
            rb = exact_arb(r, prec=prec)
            lo = (dist - rb).lower()
            e_lo = _max(e_lo, lo if lo > 0 else arb(0))
            e_hi = _max(e_hi, (dist + rb).upper())
            lo = (mod - rb).lower()
            k_lo = _max(k_lo, lo if lo > 0 else arb(0))
            k_hi = _max(k_hi, (mod + rb).upper())
            est.append(float(dist.mid()))
            scale.append(float(mod.mid()))
        worst = int(np.argmax(est))
        rel_lo = (e_lo / k_hi).lower() if k_hi > 0 else arb(0)
        rel_hi = (e_hi / k_lo).upper() if k_lo > 0 else arb("inf")
    abs_err = est[worst]
    kmax = max(scale)
    return CompareReport(kf.path, kf.L, abs_err, (float_lower(e_lo), float_upper(e_hi)),
                         abs_err / kmax if kmax > 0 else math.inf,
                         (float_lower(rel_lo), float_upper(rel_hi) if rel_hi.is_finite() else math.inf),
                         (float_lower(k_lo), float_upper(k_hi)), worst, kf.digest_ok)
