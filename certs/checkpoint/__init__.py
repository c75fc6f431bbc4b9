"""Checkpoint files of S4-family models, read without torch.

:func:`read_checkpoint` returns a :class:`Checkpoint`: a flat dict of numpy arrays plus
a Lightning checkpoint's ``hyper_parameters``.  Pickled files are rebuilt by a
restricted machine that refuses every global other than tensor rebuilding, storages
and plain containers, so reading a file never runs code from it.
"""
from .read_limits import DEFAULT_LIMITS, CheckpointError, ReadLimits
from .reader import Checkpoint, read_checkpoint

__all__ = ["Checkpoint", "CheckpointError", "DEFAULT_LIMITS", "ReadLimits", "read_checkpoint"]
