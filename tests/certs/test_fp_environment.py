"""The float64 route checks the floating-point environment before it runs: when the
probe fails the kernel comes from the ball run, and the certificate says why."""
from __future__ import annotations

import ctypes.util
import json
import platform
import subprocess
import sys

import pytest

from s4cert.algorithms.s4.dplr import DPLR
from s4cert.arith import fpenv
from s4cert.certs import kernel as kernel_module
from s4cert.certs.errors import CertificationError
from s4cert.certs.kernel import certify_kernel

MODEL = DPLR([-1.0, -2.0], [0.5, 0.25], [1, 1], [1, -1])
FTZ = fpenv.judge({**fpenv.EXPECTED, "subnormal_product": 0.0, "subnormal_input": 0.0})


def test_default_environment_takes_the_float64_route():
    ck = certify_kernel(MODEL, 0.5, 64, 1e-12)
    assert ck.certificate.get("arithmetic") == "float64 midpoint-radius" and "float64_route" not in ck.certificate


def test_flush_to_zero_falls_back_to_balls(monkeypatch):
    monkeypatch.setattr(kernel_module.fpenv, "probe", lambda: FTZ)
    ck = certify_kernel(MODEL, 0.5, 64, 1e-12)
    assert ck.status == "ok" and "arithmetic" not in ck.certificate and ck.rad.max() <= 1e-12
    assert "flush-to-zero" in ck.certificate["float64_route"]
    with pytest.raises(CertificationError, match="flush-to-zero"):
        certify_kernel(MODEL, 0.5, 64, 1e-12, arithmetic="float64")


LIBM = ctypes.util.find_library("m")
SCRIPT = """
import ctypes, json, sys
from s4cert.algorithms.s4.dplr import DPLR
from s4cert.certs.kernel import certify_kernel
assert ctypes.CDLL(sys.argv[1]).fesetround(0x800) == 0  # FE_UPWARD
ck = certify_kernel(DPLR([-1.0, -2.0], [0.5, 0.25], [1, 1], [1, -1]), 0.5, 64, 1e-12)
print(json.dumps([ck.status, ck.certificate.get("arithmetic"), ck.certificate.get("float64_route"), float(ck.rad.max())]))
"""


@pytest.mark.skipif(sys.platform != "linux" or platform.machine() != "x86_64" or LIBM is None,
                    reason="fesetround through glibc's libm, x86-64 value of FE_UPWARD")
def test_upward_rounding_falls_back_to_balls():
    """Under upward rounding the float64 route is not used (it raised ValueError before)."""
    out = subprocess.run([sys.executable, "-c", SCRIPT, LIBM], capture_output=True, text=True, timeout=120,
                         check=True).stdout
    status, arithmetic, why, rad = json.loads(out)
    assert status == "ok" and arithmetic is None and "rounding mode" in why and rad <= 1e-12
