"""The audit's checks of the file's record: the problem's own entries (M, the C~ and
exact-input flags, the routing), the certificate's ``max_radius``, the counts (measured
again), and the list of stored entries no check can re-verify (timings, the route's
parameters), which the report names as not verified."""
from __future__ import annotations

from fractions import Fraction
from ...algorithms.dft import next_power_of_two
from ...algorithms.s4.filter import FILTER_VERSION

from .. import routing
from ..counts import COUNTS_AUTO_LIMIT, measure_counts
from ..io.kernel_file import KernelFile
from .checks import stored_float

#: counts are measured again up to this N + L (a counted run is generic Python)
COUNTS_RECHECK_LIMIT = 4 * COUNTS_AUTO_LIMIT
#: certificate entries the checks re-verify (the a-priori ones only in that mode)
VERIFIED_KEYS = {"mode", "routing", "b", "w", "s", "d", "A_wt", "kappa", "partition", "r", "max_radius"}
APRIORI_KEYS = {"T0", "V0", "D0", "log2_K0", "log2_u", "precision_bits", "circuit_cauchy", "filter_version"}


def check_problem(kf: KernelFile) -> tuple[bool, str]:
    """problem.M is the least power of two >= L; c_tilde_supplied says whether C~ is
    stored; exact_inputs and certificate.routing say whether the stored inputs are exact."""
    pr, cert = kf.problem, kf.certificate
    M = next_power_of_two(kf.L)
    if pr.get("M") != M or isinstance(pr.get("M"), bool):
        return False, f"problem.M = {pr.get('M')!r}, but L = {kf.L} gives M = {M}"
    supplied = kf.c_tilde is not None
    if pr.get("c_tilde_supplied") is not supplied:
        return False, (f"problem.c_tilde_supplied = {pr.get('c_tilde_supplied')!r}, but c_tilde is "
                       f"{'stored' if supplied else 'null'}")
    exact = routing.exact_inputs(kf.model, kf.step, kf.c_tilde)
    if pr.get("exact_inputs") is not exact:
        return False, f"problem.exact_inputs = {pr.get('exact_inputs')!r}, but the stored inputs are {'' if exact else 'not '}exact"
    if kf.mode != "exact" and cert.get("routing") != ("exact" if exact else "ball"):
        return False, f"certificate.routing = {cert.get('routing')!r} does not follow from the inputs"
    return True, f"M = {M}, c_tilde {'supplied' if supplied else 'formed'}, inputs {'exact' if exact else 'balls'}"


def check_max_radius(kf: KernelFile) -> tuple[bool, str]:
    """certificate.max_radius against the stored radii: 0 in exact mode, eps (as a float)
    in a-priori mode; in ball mode within a factor 2 of the largest stored disk radius
    (the run's radius is the box's rad_re + rad_im, at most sqrt(2) times the disk's, or,
    on the multiple-double routes, the radius of the disk around the box that holds the
    file's disk, at least that disk's radius and at most about sqrt(2) times it), up to
    float rounding."""
    stored = stored_float(kf.certificate["max_radius"], "max_radius")
    worst = kf.max_radius()
    if kf.mode == "exact":
        want = Fraction(0)
        ok = stored == 0
    elif kf.mode == "a-priori":
        want = Fraction(float(kf.eps))
        ok = stored == float(kf.eps)
    else:
        want = worst
        s = Fraction(stored) if stored != float("inf") else None
        ok = s is not None and worst * (1 - Fraction(1, 2 ** 50)) / 2 <= s <= 2 * worst * (1 + Fraction(1, 2 ** 50))
    rel = "matches" if ok else "does not match"
    return ok, f"max_radius = {stored:.6g} {rel} the stored radii (largest {float(worst):.6g}, expected {float(want):.6g})"


def check_counts(kf: KernelFile, partition: list[int] | None) -> tuple[bool | None, str]:
    """The stored counts measured again by ``counts.measure_counts`` (same model, route and
    per-sum accuracy) and compared entry by entry; None (not verified) above
    COUNTS_RECHECK_LIMIT or when nothing was measured."""
    c = kf.counts
    if c.get("measured") is False:
        return None, f"no counts stored ({c.get('reason', 'no reason given')})"
    if c.get("measured") is not True:
        return False, f"counts.measured must be true or false, got {c.get('measured')!r}"
    if kf.N + kf.L > COUNTS_RECHECK_LIMIT:
        return None, f"N + L > {COUNTS_RECHECK_LIMIT}: the counts are not measured again"
    if c.get("filter_version") != FILTER_VERSION:
        return None, (f"measured on the filter of version {c.get('filter_version', 1)!r}, not this one's "
                      f"({FILTER_VERSION}): its operations differ, so the counts are not measured again")
    route = c.get("route")
    if route not in ("tree", "direct", "fast"):
        return False, f"counts.route {route!r} is not a Cauchy route"
    sum_eps = None
    if route == "fast":
        sum_eps = kf.certificate.get("cauchy", {}).get("sum_eps")
        if not isinstance(sum_eps, float) or not 0 < sum_eps < 1:
            return False, "counts on the arcs need certificate.cauchy.sum_eps to be measured again"
    if partition is None:
        return None, "the partition was not recomputed: the counts are not measured again"
    again = measure_counts(kf.model, kf.step, kf.L, partition, route, sum_eps)
    diff = sorted(k for k in set(c) | set(again) if c.get(k) != again.get(k))
    if diff:
        k = diff[0]
        return False, f"counts differ from a new measurement: {k} stored {c.get(k)!r}, measured {again.get(k)!r}"
    return True, f"measured again: {again['ops']} operations, peak {again['peak_words']} words"


def unverified_entries(kf: KernelFile) -> list[str]:
    """The certificate's entries no check re-verifies (descriptions of the run)."""
    keys = VERIFIED_KEYS | (APRIORI_KEYS if kf.mode == "a-priori" else set())
    out = []
    for key, v in kf.certificate.items():
        if key in keys:
            continue
        if isinstance(v, dict):
            out += [f"{key}.{k}" for k in v]
        else:
            out.append(key)
    return out
