"""Certifying a checkpoint's kernels on a Dask cluster, in a process pool, and resuming.

The cluster is a LocalCluster of two single-threaded worker processes (what CI has)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

from s4cert.certs.checkpoint.model import certify_model, save_report
from s4cert.certs.checkpoint.runner import GROUP_ENTRIES, GROUPS, head_groups

distributed = pytest.importorskip("distributed", reason="the cluster tests need the dask extra")

DATA = Path(__file__).resolve().parents[2] / "data" / "s4-checkpoints"


def layer(path: Path, H: int = 8, n: int = 4, seed: int = 0) -> Path:
    """A V4 diagonal kernel module with H heads (float32 parameters), as an npz state dict."""
    rng = np.random.default_rng(seed)
    f32 = lambda a: np.asarray(a, dtype=np.float32)
    np.savez(path, **{
        "enc.layer.kernel.inv_dt": f32(rng.uniform(np.log(1e-3), np.log(1e-1), (H, 1))),
        "enc.layer.kernel.A_real": f32(np.log(0.5) + 0.05 * rng.standard_normal((1, n))),
        "enc.layer.kernel.A_imag": f32(np.pi * np.arange(n)[None] + 0.05 * rng.standard_normal((1, n))),
        "enc.layer.kernel.B": f32(rng.standard_normal((1, 1, n, 2))),
        "enc.layer.kernel.C": f32(rng.standard_normal((1, H, n, 2))),
    })
    return path


OPTS = dict(L=64, eps=1e-30, arithmetic="ball")


def files_of(report, tmp: Path, name: str) -> tuple[bytes, bytes]:
    out, ker = tmp / f"{name}.json", tmp / f"{name}.npz"
    save_report(report, str(out), str(ker))
    return out.read_bytes(), ker.read_bytes()


@pytest.fixture(scope="module")
def cluster():
    from distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                      silence_logs=50) as c:
        yield c


def test_groups_do_not_depend_on_the_workers():
    assert head_groups(5) == [[0], [1], [2], [3], [4]]
    groups = head_groups(100)
    assert len(groups) <= GROUPS and sum(groups, []) == list(range(100))


def test_diagonal_groups_hold_enough_entries_for_one_pass():
    assert head_groups(256, 16384) == [list(range(256))]            # 2^22 entries: one pass
    assert len(head_groups(256, 1 << 20)) == GROUPS
    groups = head_groups(256, 1 << 16)
    assert len(groups) == 4 and sum(groups, []) == list(range(256))
    assert all(len(g) * (1 << 16) >= GROUP_ENTRIES for g in groups)
    assert head_groups(3, 10) == [[0, 1, 2]]


def test_the_cluster_gives_the_serial_result_byte_for_byte(tmp_path, cluster):
    path = layer(tmp_path / "m.npz")
    serial = files_of(certify_model(path, **OPTS), tmp_path, "serial")
    on_cluster = files_of(certify_model(path, scheduler=cluster.scheduler_address, **OPTS), tmp_path, "cluster")
    again = files_of(certify_model(path, scheduler=cluster.scheduler_address, **OPTS), tmp_path, "again")
    pool = files_of(certify_model(path, workers=2, **OPTS), tmp_path, "local")
    assert serial == on_cluster == again == pool


def test_a_worker_killed_mid_run_still_gives_the_complete_identical_result(tmp_path, cluster):
    from distributed import Client

    path = layer(tmp_path / "m.npz", H=16)
    serial = files_of(certify_model(path, **OPTS), tmp_path, "serial")
    with Client(cluster.scheduler_address, set_as_default=False) as client:
        pids = sorted(client.run(os.getpid).values())
    killed = []

    def kill_one(done, total, seconds):
        if done and not killed:
            os.kill(pids[0], signal.SIGKILL)
            killed.append(pids[0])
    report = certify_model(path, scheduler=cluster.scheduler_address, progress=kill_one, **OPTS)
    assert killed and report.ok
    assert files_of(report, tmp_path, "after-kill") == serial


def test_an_interrupted_run_resumes_and_recomputes_only_what_was_missing(tmp_path):
    path = layer(tmp_path / "m.npz", H=8)
    serial = files_of(certify_model(path, **OPTS), tmp_path, "serial")
    out_dir = tmp_path / "work"

    def interrupt(done, total, seconds):
        if done >= 3:
            raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        certify_model(path, out_dir=out_dir, progress=interrupt, **OPTS)
    kept = sorted(p.name for p in out_dir.iterdir())
    assert len(kept) == 2 * 3 and not any(p.endswith(".tmp") for p in kept)   # three whole groups
    resumed = certify_model(path, out_dir=out_dir, **OPTS)
    assert resumed.tasks == {"computed": 5, "reused": 3}
    assert files_of(resumed, tmp_path, "resumed") == serial
    again = certify_model(path, out_dir=out_dir, **OPTS)
    assert again.tasks == {"computed": 0, "reused": 8}


def test_a_damaged_or_stale_group_is_recomputed(tmp_path):
    path = layer(tmp_path / "m.npz", H=4)
    out_dir = tmp_path / "work"
    first = certify_model(path, out_dir=out_dir, **OPTS)
    npz = sorted(out_dir.glob("*.npz"))
    npz[0].write_bytes(npz[0].read_bytes()[:-7] + b"garbage")
    assert certify_model(path, out_dir=out_dir, **OPTS).tasks == {"computed": 1, "reused": 3}
    # another step size: every group's inputs changed
    layer(path, H=4, seed=1)
    assert certify_model(path, out_dir=out_dir, **OPTS).tasks == {"computed": 4, "reused": 0}
    assert first.ok


def test_a_kernel_that_cannot_be_certified_is_reported_and_the_others_finish(tmp_path):
    # one head's C scaled up so that only its kernel misses an absolute eps at 128 bits
    path = layer(tmp_path / "m.npz", H=4)
    with np.load(path) as z:
        sd = {k: z[k] for k in z.files}
    sd["enc.layer.kernel.C"][0, 2] *= np.float32(2.0 ** 120)
    np.savez(path, **sd)
    [k] = certify_model(path, L=32, eps=1e-30, max_prec=256, arithmetic="ball").kernels
    assert k.status == "refused" and "head 2" in k.reason and "precision limit" in k.reason
    assert [(r["channel"], r["head"]) for r in k.info["refused"]] == [(0, 2)]
    from fractions import Fraction
    assert np.all(np.isinf(k.rad[0, 2]))
    assert all(Fraction(r) <= Fraction(1e-30) for r in k.rad_exact[0, [0, 1, 3]].reshape(-1))


def test_scheduler_without_dask_exits_2_naming_the_extra(tmp_path):
    shim = tmp_path / "shim"
    (shim / "distributed").mkdir(parents=True)
    (shim / "distributed" / "__init__.py").write_text("raise ImportError('no dask here')\n")
    env = dict(os.environ, PYTHONPATH=str(shim))
    p = subprocess.run([sys.executable, "-m", "s4cert", "model", str(DATA / "a05_s4d_minimal.pt"), "-L", "8",
                        "--scheduler", "tcp://127.0.0.1:1"], capture_output=True, text=True, env=env,
                       cwd=tempfile.gettempdir(), timeout=120)
    assert p.returncode == 2
    assert 's4cert[dask]' in p.stderr and len(p.stderr.strip().splitlines()) == 1


def test_below_float64_the_ball_route_keeps_exact_enclosures(tmp_path):
    from fractions import Fraction

    import mpmath

    path = layer(tmp_path / "m.npz", H=2, n=2)
    [k] = certify_model(path, **OPTS).kernels
    assert k.status == "ok" and k.max_rad <= 1e-30
    assert k.mid_exact.shape == k.mid.shape == k.rad_exact.shape
    assert max(Fraction(r) for r in k.rad_exact.reshape(-1)) <= Fraction(1e-30)
    # an independent value: head 0, tap 5, from the stored float32 numbers in mpmath
    with np.load(path) as z:
        g = {key.rsplit(".", 1)[1]: z[key].astype(np.float64) for key in z.files}
    with mpmath.workprec(300):
        dt = mpmath.exp(mpmath.mpf(g["inv_dt"][0, 0]))
        K5 = 0
        for n in range(2):
            lam = -mpmath.exp(mpmath.mpf(g["A_real"][0, n])) - 1j * mpmath.mpf(g["A_imag"][0, n])
            B = mpmath.mpc(*map(mpmath.mpf, g["B"][0, 0, n]))
            C = mpmath.mpc(*map(mpmath.mpf, g["C"][0, 0, n]))
            K5 += 2 * mpmath.re(C * B * (mpmath.exp(dt * lam) - 1) / lam * mpmath.exp(5 * dt * lam))
        mid = Fraction(k.mid_exact[0, 0, 5])
        assert abs(mpmath.mpf(mid.numerator) / mid.denominator - K5) <= mpmath.mpf(1e-30)
