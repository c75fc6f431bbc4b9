"""The filter's version (algorithms/s4/filter.py ``FILTER_VERSION``): kernel files record it
with their operation counts and a-priori circuits, and the audit measures or re-traces them
again only for the current version; for another version it says they are not verified,
and the rest of the audit still decides the file."""
from __future__ import annotations

import json

import pytest

from s4cert.algorithms.s4.dplr import DPLR
from s4cert.algorithms.s4.filter import FILTER_VERSION
from s4cert.certs import routing
from s4cert.certs.audit.report import audit_kernel_file
from s4cert.certs.counts import measure_counts
from s4cert.certs.io.kernel_file import file_digest, save_kernel
from s4cert.certs.kernel import certify_kernel

MODEL = DPLR([-1.0, -2.0, (-0.5 + 3j)], [0.5, 0.25, 1], [1, 1, 1j], [1, -1, 0.5])

#: the counts of FILTER_VERSION on MODEL at step 1/2, L = 16, per Cauchy route.  When the
#: filter's operations change these change: raise FILTER_VERSION and write the new counts.
PINNED = {2: {"tree": {"add": 751, "mul": 564, "div": 112, "ops": 1474},
              "direct": {"add": 360, "mul": 332, "div": 88, "ops": 859},
              "fast": {"add": 672, "mul": 565, "div": 73, "ops": 1373}}}


@pytest.mark.parametrize("route", ["tree", "direct", "fast"])
def test_the_version_pins_the_operations(route):
    """The operations the filter performs are those its version recorded."""
    c = measure_counts(MODEL, 0.5, 16, routing.exact_partition(MODEL, 0.5), route, 1e-10 if route == "fast" else None)
    assert c["filter_version"] == FILTER_VERSION
    assert {k: c[k] for k in PINNED[FILTER_VERSION][route]} == PINNED[FILTER_VERSION][route]


def _older(path, tmp_path, edit):
    doc = json.loads(path.read_text())
    edit(doc)
    doc["sha256"] = file_digest(doc)
    out = tmp_path / "older.json"
    out.write_text(json.dumps(doc))
    return audit_kernel_file(out)


def test_counts_of_another_version_are_not_verified(tmp_path):
    """A file whose counts came from another filter version (or from before versions were
    recorded) passes with its counts listed as not verified; the current version's counts
    are measured again, and a wrong count still fails."""
    path = tmp_path / "k.json"
    save_kernel(path, certify_kernel(MODEL, 0.5, 16, 1e-12, counts=True), MODEL, 0.5)
    fresh = audit_kernel_file(path)
    assert fresh.ok and "counts" in [n for n, _, _ in fresh.checks]
    for edit in (lambda d: d["counts"].pop("filter_version"), lambda d: d["counts"].update(filter_version=1)):
        rep = _older(path, tmp_path, edit)
        assert rep.ok and "counts" not in [n for n, _, _ in rep.checks]
        assert any(name == "counts" and "version" in why for name, why in rep.unverified)
    rep = _older(path, tmp_path, lambda d: d["counts"].update(add=d["counts"]["add"] + 1))
    assert not rep.ok and "counts" in rep.failed()


def test_a_priori_circuit_of_another_version_is_not_traced_again(tmp_path):
    """An a-priori file without the current filter version: its circuit is listed as not
    verified (the kernel, u and the constants are still checked); with it, re-traced."""
    m = DPLR([-1.0, -2.0], [0.5, 0.25], [1, 1], [1, -1])
    path = tmp_path / "a.json"
    save_kernel(path, certify_kernel(m, 0.5, 4, 1e-6, mode="a-priori"), m, 0.5)
    assert json.loads(path.read_text())["certificate"]["filter_version"] == FILTER_VERSION
    fresh = audit_kernel_file(path)
    assert fresh.ok and "circuit" in [n for n, _, _ in fresh.checks]
    rep = _older(path, tmp_path, lambda d: d["certificate"].pop("filter_version"))
    assert rep.ok and "circuit" not in [n for n, _, _ in rep.checks] and "u" in [n for n, _, _ in rep.checks]
    assert any(name == "circuit" for name, _ in rep.unverified)
