"""The exceptions of the user-facing layer.

Bad input raises ``ValueError``; a certification that cannot be completed raises
:class:`CertificationError` with the reason (the command exits 1 with it).
"""
from __future__ import annotations


class CertificationError(Exception):
    """A certification that cannot be completed (a status other than ok, a precision
    limit): carries the reason; the CLI exits 1 with it."""


__all__ = ["CertificationError"]
