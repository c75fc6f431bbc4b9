"""Reading checkpoint files without torch: the fixtures written by PyTorch, files written
here in torch's format, and hostile or damaged files (refused with one line, nothing
executed)."""
from __future__ import annotations

import json
import pickle
import struct
import zipfile
from pathlib import Path

import numpy as np
import pytest

from s4cert.certs.checkpoint import CheckpointError, ReadLimits, read_checkpoint
from tests.certs.checkpoint.torch_files import (G, Call, Pid, dumps, save_state_dict,
                                                 tensor, write_torch_zip)

DATA = Path(__file__).resolve().parents[2] / "data" / "s4-checkpoints"
PT_FILES = sorted(DATA.glob("*.pt"))
LIGHTNING = DATA / "a07_seqmodel_nplr_lightning"


def refused(path: Path, *words: str, limits: ReadLimits | None = None) -> str:
    """Read ``path`` expecting a refusal: one line naming the file (and ``words``)."""
    with pytest.raises(ValueError) as info:
        read_checkpoint(path, **({"limits": limits} if limits else {}))
    msg = str(info.value)
    assert isinstance(info.value, CheckpointError)
    assert "\n" not in msg and msg.startswith(f"{path}: "), msg
    for w in words:
        assert w in msg, msg
    return msg


# -- the fixtures -------------------------------------------------------------------------

def test_the_fixtures_are_all_here():
    assert len(PT_FILES) == 10
    assert (DATA / "README.md").is_file()


@pytest.mark.parametrize("path", PT_FILES, ids=lambda p: p.stem)
def test_fixture_keys_shapes_and_dtypes_match_its_json(path):
    meta = json.loads(path.with_suffix(".json").read_text())
    ck = read_checkpoint(path)
    assert ck.format == "pt" and ck.hyper_parameters is None and ck.extra == {}
    expected = [(e["key"], tuple(e["shape"]), e["dtype"]) for e in meta["state_dict"]]
    assert [(k, a.shape, a.dtype.name) for k, a in ck.tensors.items()] == expected
    for a in ck.tensors.values():
        assert a.flags.c_contiguous and a.dtype.isnative


def test_lightning_checkpoint_holds_the_pt_tensors_under_model():
    pt = read_checkpoint(LIGHTNING.with_suffix(".pt"))
    ck = read_checkpoint(LIGHTNING.with_suffix(".ckpt"))
    assert ck.format == "ckpt"
    assert list(ck.tensors) == ["model." + k for k in pt.tensors]
    for k, a in pt.tensors.items():
        b = ck.tensors["model." + k]
        assert b.dtype == a.dtype and b.shape == a.shape and a.tobytes() == b.tobytes()
    assert isinstance(ck.hyper_parameters, dict)
    assert ck.hyper_parameters["model"]["layer"]["dt_transform"] == "softplus"
    assert ck.extra == {"epoch": 3, "global_step": 120}
    json.dumps(ck.hyper_parameters)  # plain data


def test_omegaconf_hyper_parameters_are_read_as_plain_data():
    """``omegaconf_hparams.ckpt``: the pickle that ``pickle.dumps(..., protocol=2)`` wrote
    (omegaconf 2.4.0) for a Lightning dict whose hyper_parameters is a DictConfig, as in
    a Hydra-configured run; expected: ``OmegaConf.to_container(cfg, resolve=False)``."""
    ck = read_checkpoint(Path(__file__).with_name("omegaconf_hparams.ckpt"))
    assert ck.format == "ckpt" and ck.tensors == {}
    assert ck.hyper_parameters == {
        "model": {"_name_": "model", "d_model": 4, "prenorm": True,
                  "layer": {"_name_": "s4", "d_state": 64, "dt_transform": "softplus",
                            "lr": {"dt": 0.001, "A": 0.001}, "disc": "zoh", "l_max": None,
                            "init": "legs", "dt_min": 0.001}},
        "dataset": {"l_max": 1024, "sizes": [1, 2.5, None, True, "x"]},
        "train": {"seed": 2222, "interval": "${model.d_model}", "missing": "???"}}
    assert ck.extra == {"hparams_type": "omegaconf.dictconfig.DictConfig", "epoch": 2,
                        "global_step": 40, "pytorch-lightning_version": "2.1.0"}


def test_omegaconf_stand_ins_cannot_be_misused(tmp_path):
    node = Call(G("omegaconf.nodes", "AnyNode"), (1,))   # NEWOBJ-only classes called with args
    refused(write_torch_zip(tmp_path / "n.ckpt", dumps({"hyper_parameters": node}), {}),
            "built with arguments")
    enum = Call(G("omegaconf.nodes", "EnumNode"), ())
    refused(write_torch_zip(tmp_path / "e.ckpt", dumps({"hyper_parameters": enum}), {}),
            "'omegaconf.nodes.EnumNode'")
    any_type = Call(G("typing", "Any"), ())                # names as values, never called
    refused(write_torch_zip(tmp_path / "a.ckpt", dumps({"x": any_type}), {}), "REDUCE on a")
    meta = {"state_dict": {}, "hyper_parameters": Call(G("omegaconf.base", "Metadata"), ())}
    refused(write_torch_zip(tmp_path / "m.ckpt", dumps(meta), {}), "omegaconf.base.Metadata object")


def test_a_buffer_of_shape_zero_dimensions_stays_a_scalar():
    ck = read_checkpoint(DATA / "a09_fftconv_nplr_lkernel0.pt")
    lk = ck.tensors["kernel.l_kernel"]
    assert lk.shape == () and lk.dtype == np.int64 and int(lk) == 0


# -- files written here in torch's format ---------------------------------------------------

def test_round_trip_of_every_dtype(tmp_path):
    rng = np.random.default_rng(1)
    arrays = {"f64": rng.standard_normal((3, 4)), "f32": rng.standard_normal(5).astype(np.float32),
              "f16": rng.standard_normal((2, 2)).astype(np.float16),
              "i64": np.array([-(2 ** 62), 5, 2 ** 62]), "i8": np.array([-128, 127], np.int8),
              "u8": np.array([0, 255], np.uint8), "b": np.array([True, False, True]),
              "c64": (rng.standard_normal(3) + 1j * rng.standard_normal(3)).astype(np.complex64),
              "empty": np.zeros((0, 3), np.float32), "scalar": np.array(2.5)}
    ck = read_checkpoint(save_state_dict(tmp_path / "m.pt", arrays))
    assert list(ck.tensors) == list(arrays)
    for k, a in arrays.items():
        assert ck.tensors[k].dtype == a.dtype and ck.tensors[k].shape == a.shape
        assert np.array_equal(ck.tensors[k], a)


def test_bfloat16_becomes_float32_exactly(tmp_path):
    x = np.array([1.0, -2.5, 3.140625, 2.0 ** -130, -np.inf, -0.0], dtype=np.float32)
    bits = (x.view(np.uint32) >> 16).astype("<u2")
    pkl = dumps({"w": tensor("0", "bfloat16", 6, (2, 3), (3, 1))})
    ck = read_checkpoint(write_torch_zip(tmp_path / "b.pt", pkl, {"0": bits.tobytes()}))
    assert ck.tensors["w"].dtype == np.float32
    assert np.array_equal(ck.tensors["w"], x.reshape(2, 3))
    assert ck.extra["bfloat16"] == ["w"]


def test_views_offsets_shared_storages_and_big_endian(tmp_path):
    base = np.arange(12, dtype=np.float64)
    pkl = dumps({"t": tensor("s", "float64", 12, (3, 4), (1, 3)),       # a transpose
                 "o": tensor("s", "float64", 12, (2, 2), (4, 1), offset=5),
                 "e": tensor("s", "float64", 12, (2, 3), (0, 2), offset=1),  # expanded
                 "p": Call(G("torch._utils", "_rebuild_parameter"),
                           (tensor("s", "float64", 12, (2,), (1,)), True, {}))})
    for order, raw in ((b"little", base.astype("<f8")), (b"big", base.astype(">f8"))):
        path = write_torch_zip(tmp_path / f"v_{order.decode()}.pt", pkl, {"s": raw.tobytes()},
                               byteorder=order)
        t = read_checkpoint(path).tensors
        assert np.array_equal(t["t"], base.reshape(4, 3).T)
        assert np.array_equal(t["o"], [[5, 6], [9, 10]])
        assert np.array_equal(t["e"], [[1, 3, 5], [1, 3, 5]])
        assert np.array_equal(t["p"], [0, 1])
        assert all(a.flags.c_contiguous and a.dtype.isnative for a in t.values())


def test_untyped_storage_with_a_dtype_and_torch_size(tmp_path):
    raw = np.array([7, -3], dtype="<i4").tobytes()
    storage = Pid(("storage", G("torch", "UntypedStorage"), "0", "cpu", len(raw)))
    size = Call(G("torch", "Size"), ((2,),))
    pkl = dumps({"x": Call(G("torch._utils", "_rebuild_tensor_v3"),
                           (storage, 0, size, (1,), False, {}, G("torch", "int32")))}, proto=4)
    ck = read_checkpoint(write_torch_zip(tmp_path / "u.pt", pkl, {"0": raw}))
    assert ck.tensors["x"].dtype == np.int32 and ck.tensors["x"].tolist() == [7, -3]


def test_nested_dicts_flatten_with_dots_and_scalars_go_to_extra(tmp_path):
    a = np.ones(2, np.float32)
    path = save_state_dict(tmp_path / "n.pt", {"w": a},
                           wrap=lambda sd: {"model": sd, "epoch": 4, "name": "run", "ids": [1, 2]})
    ck = read_checkpoint(path)
    assert list(ck.tensors) == ["model.w"] and ck.format == "pt"
    assert ck.extra == {"epoch": 4, "name": "run", "ids.0": 1, "ids.1": 2}


def test_lightning_entries_holding_tensors_are_only_named(tmp_path):
    a = np.ones(2, np.float32)
    path = save_state_dict(tmp_path / "l.ckpt", {"w": a, "opt": a},
                           wrap=lambda sd: {"state_dict": {"w": sd["w"]}, "epoch": 1,
                                            "optimizer_states": [{"m": sd["opt"]}],
                                            "hyper_parameters": {"lr": 0.1, "dims": (1, 2)}})
    ck = read_checkpoint(path)
    assert list(ck.tensors) == ["w"] and ck.format == "ckpt"
    assert ck.hyper_parameters == {"lr": 0.1, "dims": [1, 2]}
    assert ck.extra == {"epoch": 1, "skipped": ["optimizer_states"]}


def test_keys_that_collide_after_flattening_are_refused(tmp_path):
    a = np.ones(1, np.float32)
    path = save_state_dict(tmp_path / "c.pt", {"x": a, "y": a},
                           wrap=lambda sd: {"a.b": sd["x"], "a": {"b": sd["y"]}})
    refused(path, "two entries flatten to the key 'a.b'")


@pytest.mark.parametrize("proto", range(6))
def test_plain_data_of_every_pickle_protocol(tmp_path, proto):
    """What the standard pickler writes for plain data comes back equal (text opcodes of
    protocol 0, sets by REDUCE in 0 to 3 and by opcodes in 4 and 5, frames, memoize)."""
    from collections import OrderedDict
    data = OrderedDict(a=1, b=[1.5, "x\u00e9\n", None, True, (1, 2), b"by\x00"],
                       c={"big": -2 ** 70, "neg": -5, 7: 0.1}, s={1, 2}, f=frozenset({"q"}))
    data["again"] = data["b"][4]
    path = write_torch_zip(tmp_path / f"p{proto}.pt", pickle.dumps(data, protocol=proto), {})
    ck = read_checkpoint(path)
    assert ck.tensors == {}
    assert ck.extra == {"a": 1, "b.0": 1.5, "b.1": "x\u00e9\n", "b.2": None, "b.3": True,
                        "b.4.0": 1, "b.4.1": 2, "b.5": b"by\x00", "c.big": -2 ** 70, "c.neg": -5,
                        "c.7": 0.1, "s": [1, 2], "f": ["q"], "again.0": 1, "again.1": 2}


# -- hostile pickles: refused, nothing executed -----------------------------------------------

def _payload(tmp_path: Path, module: str, name: str, proto: int = 2) -> tuple[bytes, Path]:
    """A pickle calling ``module.name`` with an argument that would create a file."""
    marker = tmp_path / f"ran_{module}_{name}"
    arg = f"touch {marker}" if name == "system" else f"open({str(marker)!r}, 'w').close()"
    return dumps({"w": Call(G(module, name), (arg,))}, proto), marker


def test_the_payload_runs_under_the_standard_unpickler(tmp_path):
    """The hostile pickle of the next test is live: pickle.loads runs it."""
    pkl, marker = _payload(tmp_path, "builtins", "exec")
    pickle.loads(pkl)
    assert marker.exists()


@pytest.mark.parametrize("module,name", [("os", "system"), ("posix", "system"),
                                         ("builtins", "eval"), ("builtins", "exec"),
                                         ("__builtin__", "exec"), ("subprocess", "Popen"),
                                         ("numpy.core.multiarray", "_reconstruct"),
                                         ("torch", "load"), ("torch._utils", "_rebuild_qtensor")])
@pytest.mark.parametrize("proto", [2, 4])
def test_a_pickle_naming_any_other_global_is_refused(tmp_path, module, name, proto):
    pkl, marker = _payload(tmp_path, module, name, proto)
    for suffix in (".pt", ".ckpt"):
        path = write_torch_zip(tmp_path / f"evil{suffix}", pkl, {})
        refused(path, f"refuses to load global '{module}.{name}'")
    assert not marker.exists()


def test_a_forbidden_global_after_valid_tensors_is_refused(tmp_path):
    marker = tmp_path / "ran"
    good = tensor("0", "float32", 1, (1,), (1,))
    pkl = dumps({"a": good, "b": Call(G("os", "system"), (f"touch {marker}",))})
    path = write_torch_zip(tmp_path / "late.pt", pkl, {"0": b"\0\0\0\0"})
    refused(path, "'os.system'")
    assert not marker.exists()


@pytest.mark.parametrize("ops,word", [
    (b"\x80\x02(ccollections\nOrderedDict\no.", "OBJ"),   # class instantiation opcodes
    (b"\x80\x02(icollections\nOrderedDict\n.", "INST"),
    (b"\x80\x02\x82\x01.", "EXT1"),                                # the extension registry
    (b"\x80\x02)" + b"\x85" * 100000 + b"}q\x00.", "nested deeper"),  # crashes pickle.loads
    (b"\x80\x02}()\x85K\x01u.", "dict key"),                           # a tuple as key
    (b"\x80\x02h\x05.", "memo"), (b"\x80\x02s.", "stack"), (b"\x80\x02K\x01", "STOP"),
    (b"\x80\x02NN.", "left on the stack"), (b"\x80\x02K\x01)R.", "REDUCE on a int"),
    (b"\x80\x02}\x94]b.", "BUILD on a dict"),
])
def test_malformed_or_unsupported_pickles_are_refused(tmp_path, ops, word):
    refused(write_torch_zip(tmp_path / "bad.pt", ops, {}), word)


def test_cycles_and_exponential_sharing_are_refused(tmp_path):
    cycle = b"\x80\x02]q\x00h\x00a0}(X\x01\x00\x00\x00xh\x00u."   # l = [l]; {"x": l}
    refused(write_torch_zip(tmp_path / "cycle.pt", cycle, {}), "nested deeper")
    hyper = cycle.replace(b"X\x01\x00\x00\x00x", b"X\x10\x00\x00\x00hyper_parameters")
    hyper = hyper[:-2] + b"X\x0a\x00\x00\x00state_dict}u."      # the cycle outside the tensors
    refused(write_torch_zip(tmp_path / "cycle.ckpt", hyper, {}), "nested deeper")
    ops = [b"\x80\x02K\x01\x85q\x000"]   # x_{i+1} = [x_i, x_i] (memo 0), 2**40 paths
    ops += [b"(h\x00h\x00lq\x000"] * 40
    dag = b"".join(ops) + b"}(X\x01\x00\x00\x00xh\x00u."
    refused(write_torch_zip(tmp_path / "dag.pt", dag, {}), "more entries than the limit",
            limits=ReadLimits(max_items=1 << 12))
    hp = (b"".join(ops) + b"}(X\x10\x00\x00\x00hyper_parameters}(X\x01\x00\x00\x00xh\x00u"
          b"X\x0a\x00\x00\x00state_dict}u.")          # the DAG outside the tensors
    ck = read_checkpoint(write_torch_zip(tmp_path / "dag.ckpt", hp, {}))
    assert ck.format == "ckpt" and ck.tensors == {}
    x = ck.hyper_parameters["x"]
    assert x[0] is x[1] and x[0][0] is x[0][1]   # shared, converted once


# -- tensors that do not fit their storage -------------------------------------------------------

@pytest.mark.parametrize("size,stride,offset,numel,word", [
    ((4,), (2,), 0, 4, "reaches beyond its storage"),
    ((2, 2), (2, 1), 1, 4, "reaches beyond its storage"),
    ((1,), (1,), 4, 4, "reaches beyond its storage"),
    ((4,), (1,), 0, 5, "declares 5 elements"),
    ((2 ** 40,), (0,), 0, 4, "tensors exceed the limit"),
    ((1,) * 40, (1,) * 40, 0, 4, "40 dimensions"),
    ((4,), (-1,), 0, 4, "non-negative"),
    ((-1,), (1,), 0, 4, "non-negative"),
])
def test_tensor_views_are_checked_against_their_storage(tmp_path, size, stride, offset, numel,
                                                        word):
    pkl = dumps({"w": tensor("0", "float32", numel, size, stride, offset)})
    refused(write_torch_zip(tmp_path / "t.pt", pkl, {"0": bytes(16)}), word)


def test_bool_storage_with_other_bytes_and_missing_records_are_refused(tmp_path):
    pkl = dumps({"w": tensor("0", "bool", 2, (2,), (1,))})
    refused(write_torch_zip(tmp_path / "b.pt", pkl, {"0": b"\x01\x02"}), "0 and 1")
    refused(write_torch_zip(tmp_path / "m.pt", pkl, {}), "no storage record")


# -- damaged archives ----------------------------------------------------------------------------

@pytest.mark.parametrize("fraction", [0.0, 0.01, 0.1, 0.5, 0.9, 0.99])
def test_truncated_archives_are_refused(tmp_path, fraction):
    raw = (DATA / "a01_s4block_nplr_legs_nssm1.pt").read_bytes()
    for cut in (int(len(raw) * fraction), len(raw) - 1 - int(21 * fraction)):
        path = tmp_path / f"cut{cut}.pt"
        path.write_bytes(raw[:cut])
        refused(path)


def test_garbage_legacy_and_unknown_files_are_refused(tmp_path):
    rng = np.random.default_rng(7)
    for suffix in (".pt", ".ckpt", ".safetensors", ".npz", ".json", ".weird"):
        path = tmp_path / f"garbage{suffix}"
        path.write_bytes(rng.integers(0, 256, 4096, dtype=np.uint8).tobytes())
        refused(path)
    legacy = tmp_path / "old.pt"
    legacy.write_bytes(b"\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19" + bytes(20))
    refused(legacy, "legacy")
    refused(tmp_path / "missing.pt", "cannot read")
    refused(tmp_path, "not a regular file")


def test_limits_are_checked_before_reading(tmp_path):
    path = DATA / "a01_s4block_nplr_legs_nssm1.pt"
    refused(path, "exceeds the limit", limits=ReadLimits(max_file_bytes=1000))
    refused(path, "data.pkl", limits=ReadLimits(max_pickle_bytes=100))
    refused(path, "entries", limits=ReadLimits(max_entries=5))
    refused(path, "uncompressed bytes", limits=ReadLimits(max_unpacked_bytes=1000))


def _set_declared_size(raw: bytes, name: bytes, size: int) -> bytes:
    """Patch the uncompressed size of entry ``name`` in the local and central headers."""
    out = bytearray(raw)
    for sig, field, name_at in ((b"PK\x03\x04", 22, 30), (b"PK\x01\x02", 24, 46)):
        at = out.find(sig)
        while at >= 0:
            if out[at + name_at:at + name_at + len(name)] == name:
                out[at + field:at + field + 4] = struct.pack("<I", size)
            at = out.find(sig, at + 1)
    return bytes(out)


def test_zip_bombs_are_refused_from_the_directory(tmp_path):
    raw = (DATA / "a01_s4block_nplr_legs_nssm1.pt").read_bytes()
    path = tmp_path / "huge.pt"
    path.write_bytes(_set_declared_size(raw, b"a01_s4block_nplr_legs_nssm1/data/2", 0xFFFFFFF0))
    refused(path)
    bomb = tmp_path / "bomb.pt"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("archive/data.pkl", dumps({}))
        z.writestr("archive/data/0", bytes(16 << 20))
    refused(bomb, "uncompressed bytes", limits=ReadLimits(max_unpacked_bytes=8 << 20))
    assert read_checkpoint(bomb).tensors == {}
