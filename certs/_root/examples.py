"""Built-in example models, to try the API without a file.

>>> from s4cert.examples import example_model
>>> m = example_model(4, r=1, seed=0)
>>> (m.N, m.r)
(4, 1)
"""
from __future__ import annotations

from .certs.examples import example_model

__all__ = ["example_model"]
