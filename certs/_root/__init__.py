"""s4cert: certified-precision numerics for recurrent and structured state-space models.

The public API.  The layers are importable as ``s4cert.arith`` (fields),
``s4cert.algorithms`` (procedures, generic over the field) and ``s4cert.certs``
(certified kernels, files, audit, the ``s4cert`` command).  Model constructors:
``s4cert.examples`` (a random stable DPLR model) and ``s4cert.hippo`` (HiPPO models).

(This file is the ``s4cert`` package itself; ``pyproject.toml`` maps it here so
that the three layer folders stay at the top of the repository.)

>>> from s4cert import certify_kernel, DPLR
>>> model = DPLR(Lambda=[-0.5 + 1j, -1.0], P=[0.5, 0.25], B=[1.0, 2.0], C=[1.0, -1.0])
>>> ck = certify_kernel(model, step=0.1, L=8, eps=1e-12)
>>> bool((ck.rad <= 1e-12).all())
True
"""
from __future__ import annotations

from .algorithms.s4.dplr import DPLR
from .certs.audit.report import audit_kernel_file
from .certs.checkpoint.certify import certify_module
from .certs.checkpoint.model import ModelReport, certify_model
from .certs.checkpoint.reader import read_checkpoint
from .certs.compare import compare_with
from .certs.errors import CertificationError
from .certs.forward import certify_forward
from .certs.io.kernel_file import load_kernel, save_kernel
from .certs.io.params import load_params
from .certs.kernel import CertifiedKernel, certify_kernel
from .certs.lmu_checkpoint import audit_lmu_checkpoint
from . import examples, hippo  # modules, as s4cert.examples and s4cert.hippo (not names in __all__)

__version__ = "0.1.0"

__all__ = [
    "CertificationError", "CertifiedKernel", "DPLR", "ModelReport", "__version__", "audit_kernel_file",
    "audit_lmu_checkpoint",
    "certify_forward", "certify_kernel", "certify_model", "certify_module", "compare_with", "load_kernel", "load_params",
    "read_checkpoint", "save_kernel",
]
