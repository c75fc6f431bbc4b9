"""Independent audit of a kernel file.

``audit_kernel_file`` re-verifies a file written by :func:`certs.io.kernel_file.save_kernel`
without trusting any of its numbers but the problem:

* ``digest``: the SHA-256 of the content matches;
* ``status`` and ``claims``: status ok; the radii are what the mode claims (<= eps in
  ball mode, 0 in exact mode, eps for stored rounded circuit outputs);
* ``kernel``: the kernel recomputed by another route -- dense powers of Abar (with C
  solved from a supplied C~) when N^2 L is small and the inputs are exact, else the
  filter with direct Cauchy sums and C~ by the method "structured-squaring" of ``algorithms.s4.c_tilde`` (the
  certifier uses "dense-squaring": see ``recompute.C_TILDE_METHOD``) -- in ball
  arithmetic at a higher precision (exactly, in exact mode), and every stored disk
  certainly contains it;
* ``kappa``: kappa is 64 r w^2 (b+1)^2 s of the stored b, w, s, up to their rounding;
* a-priori only, ``u``: log2 K0 and u = 2^log2_u satisfy the theorem's inequalities
  for the stored T0, V0, D0, eps; ``circuit``: the re-traced filter has T0 gates, and
  its ball evaluation does not contradict V0 or D0;
* ``problem``, ``max_radius``, ``counts``: the record's own entries (``record``): M, the
  C~ and exact-input flags, the largest radius, and the counts measured again (or named
  not verified, with the certificate's descriptive entries, in ``unverified``);
* ``partition``, ``b``, ``w``, ``A_wt``, ``d``, ``s``: re-certified from a ball filter
  run at another precision: no stored bound is contradicted by the recomputed
  enclosures (the detail says when it is also proved by them).
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import Any

from ..io.kernel_file import KernelFile, load_kernel
from .checks import Checks
from .claims import check_circuit, check_claims, check_kappa, check_u
from .recertify import constant_checks
from .recompute import POWERS_LIMIT, check_kernel
from .record import check_counts, check_max_radius, check_problem, unverified_entries


@dataclass
class AuditReport:
    """``ok`` only if every check passed; ``checks`` lists (name, passed, detail)."""

    path: str
    ok: bool
    checks: list[tuple[str, bool, str]]
    prec: int = 0
    #: (name, why) of the stored entries the audit does not re-verify (also the detail
    #: of the check "not verified", which passes: it names them, it claims nothing)
    unverified: list[tuple[str, str]] = field(default_factory=list)

    def failed(self) -> list[str]:
        return [name for name, passed, _ in self.checks if not passed]

    def summary(self) -> str:
        lines = [f"{'ok  ' if p else 'FAIL'} {name}: {detail}" for name, p, detail in self.checks]
        verdict = "audit passed" if self.ok else "audit FAILED: " + ", ".join(self.failed())
        return "\n".join(lines + [verdict])


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
    >>> from s4cert.certs.io.kernel_file import save_kernel
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
    checks = Checks()
    checks.add("digest", kf.digest_ok, "sha256 matches the content" if kf.digest_ok
               else "sha256 does not match: the file was altered")
    checks.add("status", kf.status == "ok", f"status {kf.status!r}")
    checks.run("claims", lambda: check_claims(kf))
    constants = Checks()
    run = None
    try:
        run = constant_checks(kf, p, constants)
    except (ValueError, KeyError, TypeError, ArithmeticError) as e:
        constants.add("constants", False, f"cannot be checked: {type(e).__name__}: {e}")
    checks.run("kernel", lambda: check_kernel(kf, p, powers_limit, run))
    checks.run("kappa", lambda: check_kappa(kf.certificate, kf.model.r))
    checks.items += constants.items
    checks.run("problem", lambda: check_problem(kf))
    checks.run("max_radius", lambda: check_max_radius(kf))
    unverified = _record_checks(kf, run, checks)
    if kf.mode == "a-priori":
        part = list(run.info["exceptional"]) if run is not None else None
        checks.run("u", lambda: check_u(kf.certificate, kf.eps))
        _check_or_list("circuit", lambda: check_circuit(kf, p, part), checks, unverified)
    if unverified:  # listed as a line of its own, so every output of the checks shows it
        checks.add("not verified", True, "; ".join(f"{name}: {why}" for name, why in unverified))
    ok = all(passed for _, passed, _ in checks.items)
    return AuditReport(os.fspath(path), ok, checks.items, p, unverified)


def _check_or_list(name: str, fn, checks: Checks, unverified: list[tuple[str, str]]) -> None:
    """A check that may answer None (cannot be made for this file): its result is added
    to ``checks``, or (name, why) to ``unverified``; an error fails it, naming the error."""
    try:
        passed, detail = fn()
    except (ValueError, KeyError, TypeError, ArithmeticError) as e:
        passed, detail = False, f"cannot be checked: {type(e).__name__}: {e}"
    if passed is None:
        unverified.append((name, detail))
    else:
        checks.add(name, passed, detail)


def _record_checks(kf: KernelFile, run: Any, checks: Checks) -> list[tuple[str, str]]:
    """The counts check (added to ``checks`` when it can be made); returns the (name, why)
    of what is not verified: the counts when they cannot be measured again, and the
    certificate's descriptive entries."""
    out: list[tuple[str, str]] = []
    part = list(run.info["exceptional"]) if run is not None else None
    _check_or_list("counts", lambda: check_counts(kf, part), checks, out)
    rest = unverified_entries(kf)
    if rest:
        out.append(("certificate", "a description of the run: " + ", ".join(rest)))
    return out
