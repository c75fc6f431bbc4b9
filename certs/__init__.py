"""Certified kernels and the ``s4cert`` command (the user-facing layer)."""
from .examples import example_model

__all__ = ["example_model"]
