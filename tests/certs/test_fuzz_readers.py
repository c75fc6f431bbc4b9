"""Fuzzing the parameter-file and kernel-file readers (hypothesis; bounded, derandomized
under the CI profile of tests/conftest.py): whatever the file holds, the reader returns
a clean result or raises ValueError, and converts no number beyond its limits."""
from __future__ import annotations

import contextlib
import copy
import json
import math
import os
import re
import tempfile
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, strategies as st

from s4cert.certs.io.kernel_file import load_kernel, save_kernel
from s4cert.certs.io.numbers import MAX_EXPONENT, MAX_NUMBER_CHARS
from s4cert.certs.io.params import load_params
from s4cert.certs.kernel import certify_kernel
from s4cert.algorithms.s4.dplr import DPLR

HOSTILE_STRINGS = ["1e999999999", "-1e-999999999", "1/0", "0/0", "nan", "inf", "-inf", "1e", "/", "1/-3",
                   "１２", "0x10", " 3/4 ", "+5", "1_000", "9" * 5000, "1/" + "7" * 5000, "1.5e308", "2e-400",
                   "1e+0000000000000000001", ""]
numbers = st.one_of(st.integers(-10**30, 10**30), st.floats(allow_nan=False, allow_infinity=False),
                    st.fractions(max_denominator=10**12).map(lambda q: f"{q.numerator}/{q.denominator}"),
                    st.sampled_from(HOSTILE_STRINGS), st.text(max_size=12))
scalars = st.one_of(st.none(), st.booleans(), numbers)
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                      st.dictionaries(st.text(max_size=4), inner, max_size=4)),
                      max_leaves=12)
complex_entry = st.one_of(numbers, st.lists(numbers, min_size=2, max_size=2),
                          st.fixed_dictionaries({"re": numbers, "im": numbers}), values)


def _vector(n):
    return st.lists(complex_entry, min_size=n, max_size=n)


@st.composite
def param_docs(draw):
    n = draw(st.integers(1, 3))
    doc = {"Lambda": draw(_vector(n)), "P": draw(st.one_of(_vector(n), st.lists(_vector(2), min_size=n, max_size=n)))}
    for key in ("B", "C", "Ct", "Q", "step", "L", "r"):
        if draw(st.booleans()):
            doc[key] = draw(st.one_of(_vector(n), complex_entry, values))
    return doc


def _write(suffix: str, data: bytes) -> str:
    fd, path = tempfile.mkstemp(suffix=suffix)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    return path


#: the most bits a number within the readers' limits can have: at most MAX_NUMBER_CHARS
#: digits times 10^MAX_EXPONENT (log2 10 < 3.33 bits per decimal digit)
MAX_BITS = math.ceil(3.33 * (MAX_NUMBER_CHARS + MAX_EXPONENT)) + 64
_EXPONENT = re.compile(r"[eE]\s*([+-]?[0-9]+)")


@contextlib.contextmanager
def _bounded_numbers():
    """While active, every Fraction made from a string must be within the readers' limits
    before its conversion starts (at most MAX_NUMBER_CHARS characters, a decimal exponent
    of at most MAX_EXPONENT) and every Fraction made from integers within MAX_BITS: the
    work a hostile number can cause is bounded before it is done (no "1e999999999"
    expanded to a billion digits)."""
    real_new = Fraction.__new__

    def guarded(cls, *args, **kw):
        for a in args:
            if isinstance(a, str):
                assert len(a) <= MAX_NUMBER_CHARS, "a number string beyond the limit reached a conversion"
                m = _EXPONENT.search(a)
                assert not m or (len(m.group(1)) <= 9 and abs(int(m.group(1))) <= MAX_EXPONENT), \
                    f"exponent {m.group(1)[:12]} reached a conversion"
            elif isinstance(a, int):
                assert a.bit_length() <= MAX_BITS, "an integer beyond the limits reached a conversion"
        return real_new(cls, *args, **kw)
    Fraction.__new__ = guarded
    try:
        yield
    finally:
        Fraction.__new__ = real_new


def _read_cleanly(reader, path: str, **kw):
    """reader(path) either returns or raises ValueError, and no number beyond the readers'
    limits is converted on the way (``_bounded_numbers``)."""
    try:
        with _bounded_numbers():
            reader(path, **kw)
    except ValueError as e:
        assert str(e) and "\n" not in str(e).strip()
    finally:
        os.unlink(path)


def test_the_number_guard_catches_an_unchecked_conversion():
    """The guard is live: a conversion of a hostile exponent under it fails."""
    with _bounded_numbers():
        with pytest.raises(AssertionError, match="exponent"):
            Fraction("1e999999999")
        assert Fraction("1e5") == 100000


@given(param_docs(), st.booleans())
def test_json_parameter_files(doc, conj_pairs):
    _read_cleanly(load_params, _write(".json", json.dumps(doc).encode()), conj_pairs=conj_pairs)


@given(st.binary(max_size=200), st.sampled_from([".json", ".npz"]))
def test_raw_bytes(data, suffix):
    _read_cleanly(load_params, _write(suffix, data))
    if suffix == ".json":
        _read_cleanly(load_kernel, _write(suffix, data))


@given(st.dictionaries(st.sampled_from(["Lambda", "P", "Q", "B", "C", "Ct", "step", "L"]),
                       st.one_of(st.lists(st.complex_numbers(max_magnitude=1e300), max_size=3).map(np.array),
                                 st.lists(st.integers(-5, 5), max_size=3).map(np.array),
                                 st.lists(st.text(max_size=3), max_size=2).map(np.array),
                                 st.floats().map(np.array)), max_size=8))
def test_npz_parameter_files(arrays):
    path = _write(".npz", b"")
    np.savez(path, **arrays)
    _read_cleanly(load_params, path)


_MODEL = DPLR([-1.0, -2.0], [0.5, 0.25], [1, 1], [1, -1])
_DOC: dict = {}


def _valid_kernel_doc() -> dict:
    if not _DOC:
        path = _write(".json", b"")
        save_kernel(path, certify_kernel(_MODEL, 0.5, 4, 1e-12, counts=False), _MODEL, 0.5)
        with open(path) as fh:
            _DOC.update(json.load(fh))
        os.unlink(path)
    return copy.deepcopy(_DOC)


def _paths(v, prefix=()):
    yield prefix
    if isinstance(v, dict):
        for k, x in v.items():
            yield from _paths(x, prefix + (k,))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            yield from _paths(x, prefix + (i,))


@given(st.data())
def test_altered_kernel_files(data):
    doc = _valid_kernel_doc()
    for _ in range(data.draw(st.integers(1, 3))):
        paths = [p for p in _paths(doc) if p]
        where = data.draw(st.sampled_from(paths))
        target = doc
        for k in where[:-1]:
            target = target[k]
        if data.draw(st.booleans()):
            target[where[-1]] = data.draw(values)
        elif isinstance(target, dict):
            del target[where[-1]]
        else:
            target.pop(where[-1])
    _read_cleanly(load_kernel, _write(".json", json.dumps(doc).encode()))
