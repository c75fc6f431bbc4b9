"""Safetensors, npz and json checkpoints: round trips and refusals."""
from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest

from s4cert.certs.checkpoint import ReadLimits, read_checkpoint
from s4cert.certs.checkpoint.read_safetensors import json_depth
from tests.certs.checkpoint.test_reader import refused
from tests.certs.checkpoint.torch_files import save_safetensors


def _bf16(x: np.ndarray) -> np.ndarray:
    """The bfloat16 bits of float32 values that bfloat16 represents exactly."""
    bits = x.astype(np.float32).view(np.uint32)
    assert not (bits & 0xFFFF).any()
    return (bits >> 16).astype(np.uint16)


def test_safetensors_round_trip(tmp_path):
    rng = np.random.default_rng(3)
    f32 = rng.standard_normal((2, 3)).astype(np.float32)
    f64 = rng.standard_normal(4)
    bf = np.array([[1.0, -0.5], [3.0, 2.0 ** -133]], np.float32)
    arrays = {"a.f32": ("F32", f32), "b.f64": ("F64", f64), "c.bf16": ("BF16", _bf16(bf)),
              "d.i64": ("I64", np.array([-5, 2 ** 40])),
              "e.bool": ("BOOL", np.array([1, 0], np.uint8)),
              "f.f16": ("F16", np.array([0.5, 65504.0], np.float16)),
              "g.empty": ("F32", np.zeros((0,), np.float32)),
              "h.scalar": ("I32", np.array(7, np.int32))}
    ck = read_checkpoint(save_safetensors(tmp_path / "m.safetensors", arrays, {"format": "pt"}))
    assert ck.format == "safetensors" and ck.hyper_parameters is None
    assert ck.extra == {"metadata": {"format": "pt"}, "bfloat16": ["c.bf16"]}
    assert list(ck.tensors) == list(arrays)
    t = ck.tensors
    assert t["a.f32"].dtype == np.float32 and np.array_equal(t["a.f32"], f32)
    assert t["b.f64"].dtype == np.float64 and np.array_equal(t["b.f64"], f64)
    assert t["c.bf16"].dtype == np.float32 and np.array_equal(t["c.bf16"], bf)
    assert t["d.i64"].tolist() == [-5, 2 ** 40] and t["e.bool"].tolist() == [True, False]
    assert t["f.f16"].dtype == np.float16 and t["g.empty"].shape == (0,)
    assert t["h.scalar"].shape == () and int(t["h.scalar"]) == 7
    assert all(a.flags.c_contiguous and a.dtype.isnative for a in t.values())


def _write(path: Path, header: object, body: bytes = b"", length: int | None = None) -> Path:
    head = header if isinstance(header, bytes) else json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(head) if length is None else length) + head + body)
    return path


F32_2 = {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}


@pytest.mark.parametrize("header,body,length,word", [
    ({"x": F32_2}, bytes(8), 10 ** 12, "header length"),
    (b"{not json", b"", None, "not valid JSON"),
    (b"[" * 5000 + b"]" * 5000, b"", None, "nests deeper"),
    ([1, 2], b"", None, "not a JSON object"),
    ({"x": dict(F32_2, dtype="F128")}, bytes(8), None, "unsupported dtype"),
    ({"x": dict(F32_2, shape=[3])}, bytes(8), None, "needs 12 bytes"),
    ({"x": dict(F32_2, shape=[-2])}, bytes(8), None, "non-negative"),
    ({"x": dict(F32_2, shape=[True, 2])}, bytes(8), None, "non-negative"),
    ({"x": dict(F32_2, data_offsets=[8, 0])}, bytes(8), None, "begin <= end"),
    ({"x": F32_2}, bytes(7), None, "describes 8"),
    ({"x": F32_2}, bytes(9), None, "describes 8"),
    ({"x": F32_2, "y": F32_2}, bytes(8), None, "gap or overlap"),
    ({"x": dict(F32_2, data_offsets=[4, 12])}, bytes(12), None, "gap or overlap"),
    ({"x": dict(F32_2, extra=1)}, bytes(8), None, "exactly dtype"),
    ({"x": {"dtype": "BOOL", "shape": [2], "data_offsets": [0, 2]}}, b"\x01\x07", None, "0 and 1"),
    ({"__metadata__": {"a": 1}}, b"", None, "strings to strings"),
    ({"x": dict(F32_2, shape=[1] * 40, data_offsets=[0, 4])}, bytes(4), None, "40 dimensions"),
])
def test_damaged_safetensors_are_refused(tmp_path, header, body, length, word):
    refused(_write(tmp_path / "bad.safetensors", header, body, length), word)


def test_safetensors_shorter_than_its_length_field(tmp_path):
    path = tmp_path / "short.safetensors"
    path.write_bytes(b"\x01\x02")
    refused(path, "8-byte")


def test_json_depth_skips_strings_and_survives_unterminated_ones():
    assert json_depth(b'{"a[[[": [1, {"b": "]]]\\"[["}], "c": []}') == 3
    assert json_depth(b'"' + b'\\"' * 1000) == 0
    assert json_depth(b"[[[[") == 4


def test_npz_round_trip_and_refusals(tmp_path):
    a = np.asfortranarray(np.arange(6.0).reshape(2, 3))
    np.savez(tmp_path / "m.npz", w=a, n=np.array(3), c=np.array([1 + 2j]))
    ck = read_checkpoint(tmp_path / "m.npz")
    assert ck.format == "npz" and set(ck.tensors) == {"w", "n", "c"}
    assert np.array_equal(ck.tensors["w"], a) and ck.tensors["w"].flags.c_contiguous
    np.savez(tmp_path / "obj.npz", o=np.array([{"a": 1}], dtype=object))
    refused(tmp_path / "obj.npz")
    np.savez(tmp_path / "s.npz", s=np.array(["text"]))
    refused(tmp_path / "s.npz", "not an array of numbers")
    np.savez_compressed(tmp_path / "z.npz", z=np.zeros(1 << 20))
    refused(tmp_path / "z.npz", "uncompressed bytes", limits=ReadLimits(max_unpacked_bytes=1 << 20))


def test_json_arrays(tmp_path):
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"A": [[1.5, 2], [3, 4]], "n": 3, "name": "s4",
                                "layer": {"B": [1, 2, 3], "flag": [True, False]}}))
    ck = read_checkpoint(path)
    assert ck.format == "json" and ck.extra == {"name": "s4"}
    assert ck.tensors["A"].dtype == np.float64 and ck.tensors["A"].tolist() == [[1.5, 2], [3, 4]]
    assert ck.tensors["n"].dtype == np.int64 and ck.tensors["layer.B"].tolist() == [1, 2, 3]
    assert ck.tensors["layer.flag"].dtype == np.bool_
    for bad, word in (([1, 2], "not an object"), ({"x": [[1, 2], [3]]}, "rectangular"),
                      ({"x": [1, "a"]}, "numbers"), ({"x": [2 ** 70]}, "numbers")):
        path.write_text(json.dumps(bad))
        refused(path, word)
    path.write_text("[" * 100 + "]" * 100)
    refused(path, "nests deeper")
    refused(path, "exceeds the limit", limits=ReadLimits(max_header_bytes=50))
