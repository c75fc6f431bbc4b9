"""The audit's checks of the certificate's own arithmetic and claims: kappa, the
a-priori u and circuit, and the radii the mode claims."""
from __future__ import annotations

import math
from fractions import Fraction

from flint import arb, ctx

from ...algorithms.s4.filter import FILTER_VERSION, filter_kernel
from ...arith import BallField, trace

from ..apriori import CIRCUIT_ROUTES
from ..io.kernel_file import SOURCES, KernelFile
from ..io.numbers import exact_arb, parse_rational
from .checks import abs_bounds, lower_check, pt_max, pt_min, stored_float, stored_int, upper_check
from .recompute import file_c_tilde, file_partition


def check_kappa(cert: dict, r: int) -> tuple[bool, str]:
    """kappa against 64 r w^2 (b+1)^2 s of the stored b, w, s.  The certifier rounds b, w,
    s up to floats and kappa, computed from the unrounded points at >= 64 bits, up to a
    float: so kappa >= the formula at the floats just below b, w, s, and kappa <= the
    formula at b, w, s times (1 + 2^-50)."""
    if stored_int(cert["r"], "r") != r:
        return False, f"certificate r = {cert['r']} but the model has r = {r}"
    b, w, s = (stored_float(cert[k], k) for k in ("b", "w", "s"))
    kappa = stored_float(cert["kappa"], "kappa")
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
    T0 = stored_int(cert["T0"], "T0")
    V0 = parse_rational(cert["V0"], "V0")
    D0 = parse_rational(cert["D0"], "D0")
    k = -stored_int(cert["log2_u"], "log2_u")
    if stored_int(cert["precision_bits"], "precision_bits") != k:
        return False, f"precision_bits = {cert['precision_bits']} but log2_u = {-k}"
    if T0 < 1 or V0 < 1 or not 0 < D0 <= 1:
        return False, f"need T0 >= 1, V0 >= 1, 0 < D0 <= 1 (T0 = {T0}, V0 = {V0}, D0 = {D0})"
    K0 = 64 * (V0 + 1) ** 2 / D0 ** 2
    log2_K0 = stored_float(cert["log2_K0"], "log2_K0")
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


# -- the circuit (a-priori) ---------------------------------------------------------------------

def check_circuit(kf: KernelFile, prec: int, partition: list[int] | None) -> tuple[bool | None, str]:
    """Re-trace the filter into a circuit (with the certificate's Cauchy route); T0 equal;
    (None, why) for a certificate of another version of the filter (``FILTER_VERSION``); V0 and D0 not contradicted by a ball
    evaluation of every node (V0 >= max |node|, D0 <= min |divisor|)."""
    cert = kf.certificate
    if cert.get("filter_version") != FILTER_VERSION:  # None: not verified
        return None, (f"traced from the filter of version {cert.get('filter_version', 1)!r}, not this one's "
                      f"({FILTER_VERSION}): its circuit is not traced again")
    F = BallField(prec)
    ct, why = file_c_tilde(F, kf)
    if ct is None:
        return False, why
    part = partition if partition is not None else file_partition(kf)
    route = cert.get("circuit_cauchy")
    if route not in CIRCUIT_ROUTES:
        return False, f"circuit_cauchy: expected one of {', '.join(CIRCUIT_ROUTES)}, got {route!r}"
    t = trace(F, filter_kernel, kf.model, kf.step, kf.L, c_tilde=ct, exceptional=part, cauchy=route)
    if t.status != "ok":
        return False, f"the traced filter returned {t.status}"
    circuit = t.circuit
    T0 = stored_int(cert["T0"], "T0")
    if circuit.gates != T0:
        return False, f"T0 = {T0} but the re-traced circuit has {circuit.gates} gates"
    vals = circuit.run(BallField(prec + 32), circuit.input_values)
    divisors = set(circuit.divisors())
    with ctx.workprec(prec):
        v_lo = v_hi = arb(1)
        d_lo = d_hi = arb(1)
        for i, v in enumerate(vals):
            lo, hi = abs_bounds(v)
            v_lo, v_hi = pt_max(v_lo, lo), pt_max(v_hi, hi)
            if i in divisors:
                d_lo, d_hi = pt_min(d_lo, lo), pt_min(d_hi, hi)
        V0 = exact_arb(parse_rational(cert["V0"], "V0"), prec=prec)
        D0 = exact_arb(parse_rational(cert["D0"], "D0"), prec=prec)
        ok_v, det_v = upper_check("V0", V0, v_lo, v_hi)
        ok_d, det_d = lower_check("D0", D0, d_lo, d_hi)
    if not (V0 >= 1 and D0 > 0 and D0 <= 1):
        return False, "need V0 >= 1 and 0 < D0 <= 1"
    return ok_v and ok_d, f"T0 = {T0} gates re-traced; {det_v}; {det_d}"


# -- claims ----------------------------------------------------------------------------------

def check_claims(kf: KernelFile) -> tuple[bool, str]:
    """(passed, detail): the certificate's mode is the problem's and the stored values
    are what that mode stores, with the radii it claims (see the module)."""
    cert = kf.certificate
    if cert.get("mode") != kf.mode:
        return False, f"certificate mode {cert.get('mode')!r} differs from the problem's {kf.mode!r}"
    if kf.mode == "exact":
        ok = kf.source == SOURCES["exact"] and all(r == 0 for r in kf.rad)
        return ok, "exact values with radius 0" if ok else "exact mode needs exact values with radius 0"
    if kf.mode == "ball":
        if kf.source != SOURCES["ball"]:
            return False, f"ball mode stores ball enclosures, not {kf.source!r}"
        worst = kf.max_radius()
        return worst <= kf.eps, f"max radius {float(worst):.3e} {'<=' if worst <= kf.eps else '>'} eps {float(kf.eps):.3e}"
    if kf.source == SOURCES["a-priori"]:
        ok = all(r == kf.eps for r in kf.rad)
        return ok, "rounded circuit outputs with radius eps" if ok else "rounded circuit outputs need radius eps"
    if kf.source == SOURCES["a-priori enclosure"]:  # the claim is ||K^ - K|| <= eps: every disk within eps
        worst = kf.max_radius()
        ok = worst <= kf.eps
        return ok, f"enclosures of the rounded outputs, max radius {float(worst):.3e} {'<=' if ok else '>'} eps"
    return False, f"a-priori mode cannot store {kf.source!r}"
