"""Three-valued answers (Truth, Kleene's logic) and the statuses procedures return."""
from __future__ import annotations

import itertools
import json

import pytest

from s4cert.algorithms import result
from s4cert.algorithms.result import Result, Status, undecided
from s4cert.arith import Truth

T, F, U = Truth.TRUE, Truth.FALSE, Truth.UNKNOWN
# Kleene's strong logic, read as intervals of {0, 1}: FALSE = {0}, TRUE = {1}, UNKNOWN = {0, 1}
SETS = {F: {0}, T: {1}, U: {0, 1}}


def from_set(s: set) -> Truth:
    return {frozenset({0}): F, frozenset({1}): T, frozenset({0, 1}): U}[frozenset(s)]


@pytest.mark.parametrize("a,b", list(itertools.product([T, F, U], repeat=2)))
def test_and_or_are_the_images_of_the_possible_values(a, b):
    assert a & b is from_set({x & y for x in SETS[a] for y in SETS[b]})
    assert a | b is from_set({x | y for x in SETS[a] for y in SETS[b]})


def test_not():
    assert (~T, ~F, ~U) == (F, T, U)


@pytest.mark.parametrize("n", range(4))
def test_all_and_any_fold_the_connectives(n):
    for xs in itertools.product([T, F, U], repeat=n):
        want_all, want_any = T, F
        for x in xs:
            want_all, want_any = want_all & x, want_any | x
        assert Truth.all(xs) is want_all and Truth.all(iter(xs)) is want_all
        assert Truth.any(xs) is want_any


def test_all_stops_at_the_first_false():
    seen = []

    def answers():
        for t in (T, F, U):
            seen.append(t)
            yield t
    assert Truth.all(answers()) is F and seen == [T, F]


def test_no_truth_value_and_no_mixing_with_bools():
    for t in (T, F, U):
        with pytest.raises(TypeError):
            bool(t)
        with pytest.raises(TypeError):
            t & True
        with pytest.raises(TypeError):
            True | t
    with pytest.raises(TypeError):
        Truth.all([T, True])
    assert Truth.of(True) is T and Truth.of(False) is F
    with pytest.raises(TypeError):
        Truth.of(1)


# -- statuses --------------------------------------------------------------------------

KINDS = {"ok": "ok", "collision": "domain", "resonant-diagonal": "domain", "resonant-correction": "domain",
         "singular-bilinear-matrix": "domain", "singular": "domain", "undecided": "unable",
         "precision-limit": "unable"}


def test_statuses_and_their_kinds():
    assert {s.value: s.kind for s in Status} == KINDS
    for name in ("OK", "COLLISION", "RESONANT_DIAGONAL", "RESONANT_CORRECTION", "SINGULAR_BILINEAR",
                 "SINGULAR", "UNDECIDED", "PRECISION_LIMIT"):
        assert getattr(result, name) is getattr(Status, name)


@pytest.mark.parametrize("s", list(Status))
def test_a_status_is_its_string(s):
    assert s == s.value and s.value == s and s in (s.value,) and s != "other"
    assert str(s) == s.value and f"{s}" == s.value and f"{s:>30}" == f"{s.value:>30}" and "%s" % s == s.value
    assert json.dumps({"status": s}) == json.dumps({"status": s.value})
    assert {s.value: 1}[s] == 1 and {s: 1}[s.value] == 1 and hash(s) == hash(s.value)
    assert Status(s.value) is s


def test_result_reads_statuses_and_keeps_a_reason():
    r = Result("collision", info={"roots": [1]})
    assert r.status is Status.COLLISION and not r.ok and r.kind == "domain" and r.reason == ""
    assert Result(Status.OK, 3).ok and Result("ok").kind == "ok"
    with pytest.raises(ValueError):
        Result("no-such-status")
    u = undecided("D(w^3) may vanish")
    assert u.status is Status.UNDECIDED and u.kind == "unable"
    assert u.reason == "D(w^3) may vanish" == u.info["reason"]
