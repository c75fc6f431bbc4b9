"""The floating-point environment probe: the verdict on altered results, and a real
change of rounding mode (fesetround from libm, in a subprocess)."""
from __future__ import annotations

import ctypes.util
import platform
import subprocess
import sys

import pytest

from s4cert.arith import fpenv

#: what the probes give under flush-to-zero / denormals-are-zero / upward rounding
ALTERED = {"subnormal_product": 0.0, "subnormal_input": 0.0,
           "tie_down": 1.0 + 2.0 ** -52, "tie_up": 1.0 + 2.0 ** -52, "directed_pair": 2.0 ** -54}


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
@pytest.mark.parametrize("mode, code, expect", [("nearest", 0, ""), ("upward", 0x800, "tie_down,directed_pair"),
                                                ("downward", 0x400, "tie_up,directed_pair"),
                                                ("toward zero", 0xC00, "tie_up")])
def test_rounding_modes_in_a_subprocess(mode, code, expect):
    out = subprocess.run([sys.executable, "-c", SCRIPT, LIBM, str(code)], capture_output=True, text=True,
                         timeout=60, check=True).stdout.strip()
    assert out == expect, mode
