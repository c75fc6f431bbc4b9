"""The exceptions of the user-facing layer.

Bad input raises ``ValueError``; a certification that cannot be completed raises
:class:`CertificationError` with the reason (the command exits 1 with it).
"""
from __future__ import annotations


class CertificationError(Exception):
    """A certification that cannot be completed (a status other than ok, a precision
    limit): carries the reason; the CLI exits 1 with it.  ``status``, when known, is the
    run's status (``"precision-limit"``, ``"input-precision"``, ...), so a caller can
    tell a limit it can lift (say, by giving the inputs more precisely) from a refusal;
    ``reason`` is the message without the ``"<status>: "`` prefix.

    >>> e = CertificationError("precision-limit: eps = 1e-300 needs 1062 bits", status="precision-limit")
    >>> e.status, e.reason
    ('precision-limit', 'eps = 1e-300 needs 1062 bits')
    """

    def __init__(self, reason: str, status: str | None = None):
        super().__init__(reason)
        self.status = status
        prefix = f"{status}: " if status else None
        self.reason = reason[len(prefix):] if prefix and reason.startswith(prefix) else reason


__all__ = ["CertificationError"]
