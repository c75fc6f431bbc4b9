"""The floating-point environment probe: the verdict on altered results, and a real
change of rounding mode (fesetround from libm, in a subprocess)."""
from __future__ import annotations

import ctypes.util
import os
import platform
import subprocess
import sys

import pytest

from s4cert.arith import fpenv

#: what the probes give under flush-to-zero / denormals-are-zero / upward rounding
ALTERED = {"subnormal_product": 0.0, "subnormal_input": 0.0,
           "tie_down": 1.0 + 2.0 ** -52, "tie_up": 1.0 + 2.0 ** -52, "directed_pair": 2.0 ** -54,
           "blas_rounding": 256.0, "blas_subnormal_product": 65536.0, "blas_subnormal_input": 65536.0}


def test_default_environment_passes():
    env = fpenv.probe()
    assert env.ok and env.failures == () and env.reason == ""
    assert fpenv.measure() == fpenv.EXPECTED


@pytest.mark.parametrize("key", sorted(ALTERED))
def test_each_altered_result_fails(key):
    env = fpenv.judge({**fpenv.EXPECTED, key: ALTERED[key]})
    assert not env.ok and env.failures == (key,) and env.reason == fpenv.WHY[key]


def test_flush_to_zero_results_fail():
    env = fpenv.judge({**fpenv.EXPECTED, "subnormal_product": 0.0, "subnormal_input": 0.0})
    assert not env.ok and "flush-to-zero" in env.reason and "denormals-are-zero" in env.reason


LIBM = ctypes.util.find_library("m")
SCRIPT = """
import ctypes, sys
from s4cert.arith import fpenv
assert ctypes.CDLL(sys.argv[1]).fesetround(int(sys.argv[2])) == 0
print(",".join(fpenv.probe().failures))
"""


@pytest.mark.skipif(sys.platform != "linux" or platform.machine() != "x86_64" or LIBM is None,
                    reason="fesetround through glibc's libm, x86-64 values of FE_*")
@pytest.mark.parametrize("mode, code, expect", [("nearest", 0, ""),
                                                ("upward", 0x800, "tie_down,directed_pair,blas_rounding"),
                                                ("downward", 0x400, "tie_up,directed_pair,blas_rounding"),
                                                ("toward zero", 0xC00, "tie_up,blas_rounding")])
def test_rounding_modes_in_a_subprocess(mode, code, expect):
    out = subprocess.run([sys.executable, "-c", SCRIPT, LIBM, str(code)], capture_output=True, text=True,
                         timeout=60, check=True).stdout.strip()
    assert out == expect, mode


WORKERS = """
import ctypes, sys
libm = ctypes.CDLL(sys.argv[1])
assert libm.fesetround(0x800) == 0          # upward, before BLAS starts its worker threads
import numpy as np
from s4cert.arith import fpenv
assert libm.fesetround(0) == 0              # the caller back to nearest; the workers keep theirs
env = fpenv.probe()
a = np.ones((2048, 64)); a[:, 1:] = 2.0 ** -60
wrong = int(np.count_nonzero(a @ np.ones((64, 256)) != 1.0))
print(int(env.ok), wrong, ",".join(env.failures))
"""


@pytest.mark.skipif(sys.platform != "linux" or platform.machine() != "x86_64" or LIBM is None,
                    reason="fesetround through glibc's libm, x86-64 values of FE_*")
def test_blas_workers_started_in_another_rounding_mode_are_caught():
    """BLAS worker threads started under upward rounding keep it when the caller returns to
    nearest: the probe must then refuse, unless the products are in fact right (a BLAS that
    syncs its workers' state with the caller's)."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS="4", OMP_NUM_THREADS="4")
    out = subprocess.run([sys.executable, "-c", WORKERS, LIBM], capture_output=True, text=True,
                         timeout=60, check=True, env=env).stdout.split()
    ok, wrong = int(out[0]), int(out[1])
    assert not (ok and wrong), "the probe passed while a BLAS product rounded upward"
    if not ok:
        assert "blas_rounding" in out[2].split(",")
