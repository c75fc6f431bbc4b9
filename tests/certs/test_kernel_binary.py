"""The binary kernel file (``s4cert.kernel.npz/1``): a lossless, bitwise round trip on every
route, the exact disks containing the exact kernel, the digest, hostile archives refused
with one line, no number per entry converted on the disk routes, and audit, compare and
plot on the binary format through the command line."""
from __future__ import annotations

import importlib.util
import io
import tracemalloc
import zipfile
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, strategies as st

from s4cert.algorithms.s4.dplr import DPLR
from s4cert.algorithms.s4.kernels import kernel_by_powers
from s4cert.arith import ExactField
from s4cert.certs.io.kernel_disks import disks_of, float_string, sum_string
from s4cert.certs.io.kernel_file import kernel_entries, load_kernel, save_kernel
from s4cert.certs.io.kernel_npz import MEMBERS, NPZ_FORMAT, npz_digest
from s4cert.certs.io.numbers import rational_string
from s4cert.certs.kernel import certify_kernel
from tests.certs.cli_run import one_line_error, s4cert

STEP = 0.5
MODEL = DPLR([-1.0, -2.0 + 1j, -0.5 - 3j], [0.5, 0.25j, 1], [1, 2, 1j], [1, -1, 3])
L = 16
#: (route, certify_kernel keywords, the layer the exact disks are stored in)
ROUTES = {
    "float64": (dict(eps=1e-10, arithmetic="float64"), None),
    "double-double": (dict(eps=1e-25, arithmetic="double-double"), "parts"),
    "triple-double": (dict(eps=Fraction(1, 10 ** 40), arithmetic="triple-double"), "parts"),
    "ball": (dict(eps=Fraction(1, 10 ** 30), arithmetic="ball"), "text"),
    "exact": (dict(eps=1e-10, mode="exact"), "text"),
    "a-priori": (dict(eps=1e-10, mode="a-priori"), "text"),
}


@pytest.fixture(scope="module")
def kernels():
    out = {}
    for name, (kw, _) in ROUTES.items():
        kw = dict(kw)
        eps = kw.pop("eps")
        out[name] = certify_kernel(MODEL, STEP, L, eps, counts=False, **kw)
    return out


@pytest.fixture(scope="module")
def exact_kernel():
    E = ExactField(4)
    return [E.to_fractions(k) for k in kernel_by_powers(E, MODEL, STEP, L).value]


def _save(tmp_path, ck, name="k.npz"):
    path = tmp_path / name
    header = save_kernel(path, ck, MODEL, STEP)
    return path, header


# -- round trip ---------------------------------------------------------------------------------

@pytest.mark.parametrize("route", list(ROUTES))
def test_round_trip_is_bitwise_and_lossless(tmp_path, kernels, route):
    ck = kernels[route]
    path, header = _save(tmp_path, ck)
    assert header["format"] == NPZ_FORMAT and path.read_bytes()[:4] == b"PK\x03\x04"
    kf = load_kernel(path)
    assert kf.digest_ok and kf.file_format == NPZ_FORMAT and kf.status == "ok" and kf.L == L
    want = disks_of(ck)
    got = kf.disks
    for name in ("mid", "rad", "parts_index", "parts", "parts_rad", "text_index"):
        a, b = getattr(want, name), getattr(got, name)
        assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes(), name
    assert (got.text_re, got.text_im, got.text_rad) == (want.text_re, want.text_im, want.text_rad)
    layer = ROUTES[route][1]
    n_parts, n_text = got.parts_index.size, got.text_index.size
    assert (n_parts, n_text) == {None: (0, 0), "parts": (L, 0), "text": (0, L)}[layer]
    assert got.parts.shape[1] == {"double-double": 2, "triple-double": 3}.get(route, 2)
    # the exact disks read back are the ones written, and those of the JSON file of the kernel
    re, im, rad, source = kernel_entries(ck)
    assert kf.mid == list(zip(re, im)) and kf.rad == rad and kf.source == source
    save_kernel(tmp_path / "k.json", ck, MODEL, STEP)
    kj = load_kernel(tmp_path / "k.json")
    assert kj.mid == kf.mid and kj.rad == kf.rad and kj.certificate == kf.certificate
    # numpy reads the archive without pickles; the float64 disks are the --npz arrays
    with np.load(path, allow_pickle=False) as z:
        assert np.array_equal(z["mid"], ck.mid) and np.array_equal(z["rad"], ck.rad)
    # one kernel, one archive
    save_kernel(tmp_path / "again.npz", ck, MODEL, STEP)
    assert (tmp_path / "again.npz").read_bytes() == path.read_bytes()


@pytest.mark.parametrize("route", list(ROUTES))
def test_every_stated_disk_contains_the_exact_kernel(tmp_path, kernels, exact_kernel, route):
    kf = load_kernel(_save(tmp_path, kernels[route])[0])
    stated = list(kf.stated_disks())
    # the exact disk of every entry, and the float64 disk of every entry stored more tightly
    assert len(stated) == L + (0 if ROUTES[route][1] is None else L)
    for j, (ma, mb), r in stated:
        a, b = exact_kernel[j]
        assert (a - ma) ** 2 + (b - mb) ** 2 <= r * r, (route, j)
    if route in ("double-double", "triple-double", "ball"):  # tighter than float64 disks can say
        assert kf.max_radius() < Fraction(float(np.min(kf.disks.rad)))


def test_name_selects_the_format(tmp_path, kernels):
    ck = kernels["float64"]
    assert save_kernel(tmp_path / "k.NPZ", ck, MODEL, STEP)["format"] == NPZ_FORMAT
    assert save_kernel(tmp_path / "k.kernel", ck, MODEL, STEP)["format"] == "s4cert.kernel/1"
    assert (tmp_path / "k.kernel").read_bytes()[:1] == b"{"
    assert load_kernel(tmp_path / "k.NPZ").digest_ok and load_kernel(tmp_path / "k.kernel").digest_ok


@given(st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=1, max_size=4))
def test_exact_strings_without_fraction(xs):
    """The strings of floats and of exact sums of floats are those of the Fractions."""
    assert float_string(xs[0]) == rational_string(Fraction(xs[0]))
    assert sum_string(xs) == rational_string(sum(map(Fraction, xs), Fraction(0)))


# -- digest and hostile archives ---------------------------------------------------------------------

def _members(path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as zf:
        return {name: zf.read(name) for name in zf.namelist()}


def _zip(path, members: dict[str, bytes], compress: dict | None = None) -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as zf:
        for name, data in members.items():
            zf.writestr(name, data, compress_type=(compress or {}).get(name, zipfile.ZIP_STORED))
    path.write_bytes(buf.getvalue())


def _npy(arr=None, header: dict | None = None) -> bytes:
    buf = io.BytesIO()
    if header is not None:  # a header alone, claiming what it likes
        np.lib.format.write_array_header_1_0(buf, header)
    else:
        np.lib.format.write_array(buf, arr, allow_pickle=True)
    return buf.getvalue()


def _header(path) -> dict:
    import json
    with zipfile.ZipFile(path) as zf:
        return json.loads(zf.read("header.json"))


def _load_array(data: bytes) -> np.ndarray:
    return np.load(io.BytesIO(data), allow_pickle=False)


def test_altered_array_breaks_the_digest(tmp_path, kernels):
    path, _ = _save(tmp_path, kernels["double-double"])
    m = _members(path)
    rad = _load_array(m["parts_rad.npy"]).copy()
    rad[3] *= 2
    m["parts_rad.npy"] = _npy(rad)
    bad = tmp_path / "bad.npz"
    _zip(bad, m)
    kf = load_kernel(bad)
    assert not kf.digest_ok and kf.disks.parts_rad[3] == rad[3]
    from s4cert.certs.compare import compare_with
    with pytest.raises(ValueError, match="digest"):
        compare_with(bad, kernels["double-double"].mid)
    good = load_kernel(path)
    assert good.digest_ok and good.digest == kf.digest
    arrays = {n: getattr(good.disks, n) for n in ("mid", "rad", "parts_index", "parts", "parts_rad", "text_index")}
    header = {k: v for k, v in _header(path).items()}
    assert npz_digest(header, arrays, m["text.json"]) == good.digest


def _mutations(m: dict[str, bytes]) -> dict[str, tuple[dict, dict | None, str]]:
    rad = _load_array(m["rad.npy"]).copy()
    mid = _load_array(m["mid.npy"])
    idx = _load_array(m["parts_index.npy"]).copy()
    nan_rad, neg_rad = rad.copy(), rad.copy()
    nan_rad[2], neg_rad[5] = np.nan, -1e-20
    swapped = idx.copy()
    swapped[[0, 1]] = swapped[[1, 0]]
    huge = b'{"format": "s4cert.kernel.npz/1", "kernel": {"source": "ball enclosure", "L": 1000000000000, ' \
           b'"parts": {"n": 0, "k": 2}, "text": 0}}'
    extra = dict(m, **{"payload.npy": _npy(np.zeros(3))})
    missing = {k: v for k, v in m.items() if k != "text_index.npy"}
    return {
        "nan radius": (dict(m, **{"rad.npy": _npy(nan_rad)}), None, "radius is negative, NaN or infinite"),
        "negative radius": (dict(m, **{"rad.npy": _npy(neg_rad)}), None, "radius is negative, NaN or infinite"),
        "infinite midpoint": (dict(m, **{"mid.npy": _npy(np.where(np.arange(L) == 1, np.inf, mid))}), None,
                              "NaN or infinite"),
        "short array": (dict(m, **{"mid.npy": _npy(mid[:-1])}), None, r"shape \(15,\), the header declares \(16,\)"),
        "huge declared shape": (dict(m, **{"rad.npy": _npy(header={"descr": "<f8", "fortran_order": False,
                                                                   "shape": (10 ** 15,)})}), None, "shape"),
        "huge declared L": (dict(m, **{"header.json": huge}), None, "shape"),
        "declared size beyond the data": (dict(m, **{"rad.npy": _npy(header={"descr": "<f8", "fortran_order": False,
                                                                             "shape": (L,)})}), None, "data bytes"),
        "object array": (dict(m, **{"rad.npy": _npy(np.array([None] * L, dtype=object))}), None, "dtype"),
        "big-endian": (dict(m, **{"rad.npy": _npy(rad.astype(">f8"))}), None, "dtype >f8, expected <f8"),
        "indices out of order": (dict(m, **{"parts_index.npy": _npy(swapped)}), None, "increase strictly"),
        "compressed member": (m, {"mid.npy": zipfile.ZIP_DEFLATED}, "compressed"),
        "extra member": (extra, None, "unexpected"),
        "missing member": (missing, None, "missing"),
        "not json header": (dict(m, **{"header.json": b"{not json"}), None, "not valid JSON"),
        "nested header": (dict(m, **{"header.json": b"[" * 100 + b"]" * 100}), None, "nested"),
        "wrong tag": (dict(m, **{"header.json": m["header.json"].replace(b"kernel.npz/1", b"kernel.npz/0")}), None,
                      "wrong format tag"),
    }


MUTATIONS = ["nan radius", "negative radius", "infinite midpoint", "short array", "huge declared shape",
             "huge declared L", "declared size beyond the data", "object array", "big-endian",
             "indices out of order", "compressed member", "extra member", "missing member", "not json header",
             "nested header", "wrong tag"]


@pytest.mark.parametrize("what", MUTATIONS)
def test_hostile_archives_are_refused_with_one_line(tmp_path, kernels, what):
    path, _ = _save(tmp_path, kernels["double-double"])
    members, compress, message = _mutations(_members(path))[what]
    bad = tmp_path / "bad.npz"
    _zip(bad, members, compress)
    with pytest.raises(ValueError, match=message) as e:
        load_kernel(bad)
    assert "\n" not in str(e.value) and str(bad) in str(e.value)


@pytest.mark.parametrize("cut", [0.1, 0.5, 0.9, 0.999])
def test_truncated_and_damaged_archives(tmp_path, kernels, cut):
    path, _ = _save(tmp_path, kernels["ball"])
    data = path.read_bytes()
    bad = tmp_path / "cut.npz"
    bad.write_bytes(data[:int(len(data) * cut)])
    with pytest.raises(ValueError) as e:
        load_kernel(bad)
    assert "\n" not in str(e.value)
    # a flipped data byte: the member's CRC no longer matches
    start = data.index(b"\x93NUMPY", data.index(b"rad.npy"))
    flipped = bytearray(data)
    flipped[start + 200] ^= 0xFF
    bad.write_bytes(bytes(flipped))
    with pytest.raises(ValueError, match="CRC|not a readable") as e:
        load_kernel(bad)
    assert "\n" not in str(e.value)


_ARCHIVE: dict = {}


def _valid_archive() -> bytes:
    if not _ARCHIVE:
        import tempfile
        ck = certify_kernel(MODEL, STEP, 8, 1e-25, counts=False, arithmetic="double-double")
        with tempfile.TemporaryDirectory() as d:
            path = f"{d}/k.npz"
            save_kernel(path, ck, MODEL, STEP)
            with open(path, "rb") as fh:
                _ARCHIVE["bytes"] = fh.read()
    return _ARCHIVE["bytes"]


@given(st.lists(st.tuples(st.floats(0, 1, exclude_max=True), st.integers(0, 255)), min_size=1, max_size=6),
       st.sampled_from([None, 0.5, 0.97]))
def test_altered_bytes_load_or_are_refused_with_one_line(tmp_path_factory, edits, cut):
    """Any altered byte, anywhere: the archive loads (its digest then says whether it is
    what was written) or is refused with one ValueError line; nothing else escapes."""
    data = bytearray(_valid_archive())
    for where, value in edits:
        data[int(where * len(data))] = value
    if cut is not None:
        data = data[:int(cut * len(data))]
    path = tmp_path_factory.mktemp("fuzz") / "k.npz"
    path.write_bytes(bytes(data))
    try:
        kf = load_kernel(path)
    except ValueError as e:
        assert "\n" not in str(e)
    else:
        assert isinstance(kf.digest_ok, bool) and kf.L == 8


def test_members_are_the_documented_ones(tmp_path, kernels):
    path, _ = _save(tmp_path, kernels["a-priori"])
    with zipfile.ZipFile(path) as zf:
        assert tuple(zf.namelist()) == MEMBERS
        assert all(i.compress_type == zipfile.ZIP_STORED for i in zf.infolist())


# -- the disk routes convert no number per entry, and stay small ------------------------------------

def test_disk_routes_build_no_fraction_per_entry(tmp_path, monkeypatch, capsys):
    """Writing the binary file and printing the summary on the float64 route create a number
    of Fractions that does not grow with L (the model's and the header's own)."""
    from s4cert.certs import cli
    m = DPLR([-1.0, -2.0], [0.5, 0.25], [1, 1], [1, -1])
    counts = []
    for n in (1024, 8192):
        ck = certify_kernel(m, 0.01, n, 1e-10, counts=False, arithmetic="float64")
        made = [0]
        original = Fraction.__new__

        def counting(cls, *a, **kw):
            made[0] += 1
            return original(cls, *a, **kw)
        monkeypatch.setattr(Fraction, "__new__", counting)
        disks = disks_of(ck)
        save_kernel(tmp_path / "k.npz", ck, m, 0.01, disks=disks)
        args = cli.build_parser().parse_args(["kernel", "--out", "k.npz", "--quiet"])
        cli._print_kernel(args, ck, m, 0.01, n, 1e-10, disks, 0.0)
        monkeypatch.setattr(Fraction, "__new__", original)
        counts.append(made[0])
    capsys.readouterr()
    assert counts[0] == counts[1] and counts[0] < 200, counts


def test_writing_takes_far_less_than_300_bytes_per_entry(tmp_path):
    """Peak Python allocation of disks_of + the binary file + its write, per kernel entry
    (the certification's own memory is not counted here)."""
    m = DPLR([-1.0, -2.0], [0.5, 0.25], [1, 1], [1, -1])
    n = 1 << 15
    ck = certify_kernel(m, 0.01, n, 1e-10, counts=False, arithmetic="float64")
    tracemalloc.start()
    try:
        save_kernel(tmp_path / "k.npz", ck, m, 0.01, npz=tmp_path / "a.npz")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak / n < 150, peak / n
    tracemalloc.start()
    try:
        kf = load_kernel(tmp_path / "k.npz")
        kf.max_radius()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak / n < 100, peak / n


# -- the command line on the binary format --------------------------------------------------------------

@pytest.fixture(scope="module")
def binary_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("binary")
    out, npz = d / "k.npz", d / "arrays.npz"
    p = s4cert("kernel", "-N", "4", "-L", "32", "--arithmetic", "double-double", "--eps", "1e-25",
               "--out", str(out), "--npz", str(npz), "--quiet")
    assert p.returncode == 0, p.stderr
    with np.load(npz) as z:
        np.save(d / "f32.npy", z["mid"].astype(np.complex64))
    return d, out, p.stdout


def test_cli_summary_is_the_files(binary_files):
    """The printed max radius and values are those of the exact disks stored."""
    from s4cert.certs.cli import _up
    _, out, stdout = binary_files
    kf = load_kernel(out)
    assert f"max radius {_up(kf.max_radius())} <= eps 1e-25" in stdout
    (a, b), r = kf.mid[0], kf.rad[0]
    assert f"K[0] = {float(a):.15e} {'-' if b < 0 else '+'} {abs(float(b)):.15e}i  (radius {_up(r, 2)})" in stdout


def test_cli_audit_compare_on_the_binary_format(binary_files, tmp_path):
    d, out, _ = binary_files
    p = s4cert("audit", str(out))
    assert p.returncode == 0 and "audit passed" in p.stdout, p.stdout[-2000:] + p.stderr
    assert f"all 32 stored disks (and the 32 float64 disks of the entries stored more tightly)" in p.stdout
    p = s4cert("compare", str(out), str(d / "f32.npy"), "--no-tighten")
    assert p.returncode == 0 and "max abs error" in p.stdout, p.stderr
    bad = tmp_path / "bad.npz"
    bad.write_bytes(out.read_bytes()[:-50])
    assert str(bad) in one_line_error(s4cert("audit", str(bad)))


@pytest.mark.skipif(importlib.util.find_spec("matplotlib") is None, reason="matplotlib is not installed")
def test_cli_plot_on_the_binary_format(binary_files):
    d, out, _ = binary_files
    p = s4cert("plot", str(out), "--compare", str(d / "f32.npy"), "-o", str(d / "k.png"))
    assert p.returncode == 0, p.stderr
    assert (d / "k.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_tap_errors_agree_between_formats(binary_files, tmp_path):
    """The array bounds of a binary file enclose the ball bounds of the same exact disks and
    agree with them to float rounding."""
    from s4cert.certs.plot import _exact_tap_errors, tap_errors
    d, out, _ = binary_files
    kf = load_kernel(out)
    o = np.load(d / "f32.npy")
    lo, hi = tap_errors(kf, o)
    lo2, hi2 = np.empty(kf.L), np.empty(kf.L)
    _exact_tap_errors(kf, o, list(range(kf.L)), lo2, hi2)  # every tap in ball arithmetic
    assert np.all(lo <= lo2) and np.all(hi >= hi2)
    assert np.all(lo2 - lo <= 1e-14 * hi2) and np.all(hi - hi2 <= 1e-14 * hi2)
    assert np.all(lo > 0)  # a float32 copy is certainly not the kernel at any tap
