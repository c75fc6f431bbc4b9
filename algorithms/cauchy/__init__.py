"""Cauchy sums on the root grid: the grid, the product tree, direct sums, hierarchical arcs.

For users, the public procedures by name (inside the package, import from the
defining modules)."""
from .arcs.api import cauchy_fast, cauchy_fast_many
from .direct import cauchy_direct
from .grid import root_index
from .tree import cauchy_on_roots

__all__ = ["cauchy_direct", "cauchy_fast", "cauchy_fast_many", "cauchy_on_roots", "root_index"]
