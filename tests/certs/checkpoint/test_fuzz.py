"""Damaged files, generated: the only outcomes allowed are a Checkpoint or a one-line
ValueError (never another exception, a crash or a hang)."""
from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from s4cert.certs.checkpoint import Checkpoint, CheckpointError, read_checkpoint
from tests.certs.checkpoint.torch_files import save_safetensors, write_torch_zip

DATA = Path(__file__).resolve().parents[2] / "data" / "s4-checkpoints"
FIXTURE = DATA / "a05_s4d_minimal.pt"


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz")


def _outcome(path: Path) -> str:
    try:
        ck = read_checkpoint(path)
    except CheckpointError as e:
        assert "\n" not in str(e) and str(e).startswith(f"{path}: ")
        return "refused"
    assert isinstance(ck, Checkpoint)
    assert all(isinstance(a, np.ndarray) and a.flags.c_contiguous for a in ck.tensors.values())
    return "read"


def _mutate(raw: bytes, edits: list[tuple[int, int]], cut: int | None) -> bytes:
    out = bytearray(raw)
    for at, byte in edits:
        out[at % len(out)] = byte
    return bytes(out[:cut] if cut is not None else out)


EDITS = st.lists(st.tuples(st.integers(0, 1 << 20), st.integers(0, 255)), max_size=8)
CUT = st.none() | st.integers(0, 8000)


@given(edits=EDITS, cut=CUT)
def test_mutated_torch_archives(folder, edits, cut):
    path = folder / "m.pt"
    path.write_bytes(_mutate(FIXTURE.read_bytes(), edits, cut))
    _outcome(path)


@given(edits=EDITS, cut=CUT)
def test_mutated_pickles_in_valid_archives(folder, edits, cut):
    """The pickle damaged, the zip intact (its CRCs recomputed): reaches the pickle machine."""
    with zipfile.ZipFile(FIXTURE) as z:
        prefix = z.namelist()[0].split("/")[0]
        records = {n[len(prefix) + 6:]: z.read(n) for n in z.namelist()
                   if n.startswith(f"{prefix}/data/")}
        pkl = z.read(f"{prefix}/data.pkl")
    path = write_torch_zip(folder / "p.pt", _mutate(pkl, edits, cut), records, name=prefix)
    _outcome(path)


#: pieces of torch pickles: opcodes with their arguments
PIECES = [b"(", b"}", b"]", b")", b"t", b"\x85", b"\x86", b"\x87", b"l", b"e", b"a", b"s",
          b"u", b"R", b"b", b"\x81", b"Q", b"0", b"2", b"1", b"N", b"\x88", b"\x89", b"K\x00",
          b"K\x02", b"K\x04", b"J\xff\xff\xff\xff", b"G?\xf0\x00\x00\x00\x00\x00\x00",
          b"X\x01\x00\x00\x00a", b"X\x01\x00\x00\x000", b"X\x07\x00\x00\x00storage",
          b"X\x03\x00\x00\x00cpu", b"q\x00", b"h\x00", b"q\x01", b"h\x01", b"\x94",
          b"ccollections\nOrderedDict\n", b"ctorch._utils\n_rebuild_tensor_v2\n",
          b"ctorch._utils\n_rebuild_parameter\n", b"ctorch\nFloatStorage\n",
          b"ctorch\nBFloat16Storage\n", b"ctorch\nSize\n", b"\x8c\x05torch\x8c\x04Size\x93"]


@given(st.lists(st.sampled_from(PIECES), max_size=60))
def test_generated_opcode_streams(folder, pieces):
    pkl = b"\x80\x02" + b"".join(pieces) + b"."
    path = write_torch_zip(folder / "g.pt", pkl, {"0": bytes(16)})
    _outcome(path)


def test_a_generated_stream_can_build_a_tensor(folder):
    """The pieces above suffice to rebuild a tensor (the generator reaches real work)."""
    pieces = [b"}", b"(", b"X\x01\x00\x00\x00a", b"ctorch._utils\n_rebuild_tensor_v2\n", b"(",
              b"(", b"X\x07\x00\x00\x00storage", b"ctorch\nFloatStorage\n",
              b"X\x01\x00\x00\x000", b"X\x03\x00\x00\x00cpu", b"K\x04", b"t", b"Q", b"K\x00",
              b"K\x04", b"\x85", b"K\x00", b"\x85", b"\x89", b"}", b"t", b"R", b"u"]
    path = write_torch_zip(folder / "t.pt", b"\x80\x02" + b"".join(pieces) + b".",
                           {"0": np.arange(4, dtype="<f4").tobytes()})
    assert read_checkpoint(path).tensors["a"].tolist() == [0.0, 0.0, 0.0, 0.0]


@given(edits=EDITS, cut=CUT)
def test_mutated_safetensors(folder, edits, cut):
    src = folder / "src.safetensors"
    if not src.exists():
        save_safetensors(src, {"w": ("F32", np.arange(6, dtype=np.float32).reshape(2, 3)),
                               "b": ("BF16", np.array([16256, 49152], np.uint16)),
                               "d": ("F64", np.ones(2))}, {"note": "x"})
    path = folder / "m.safetensors"
    path.write_bytes(_mutate(src.read_bytes(), edits, cut))
    _outcome(path)
