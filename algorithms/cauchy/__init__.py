"""Cauchy sums on the root grid: product tree, direct sums, hierarchical arcs."""
