"""Cauchy sums on the root grid to relative accuracy eps by hierarchical arcs:
geometry (arcs, zones, admissibility), plan (which mechanism handles each pair),
bounds (truncation bounds, float64 allowance), constants and phases (the expansions
on field operations), api (:func:`cauchy_fast`, :func:`cauchy_fast_many`)."""
