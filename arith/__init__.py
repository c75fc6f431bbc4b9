"""Scalar fields (one per arithmetic model) and the instruments that run on them.

>>> from s4cert.arith import ExactField, BallField
>>> F = ExactField(8)
>>> F.is_zero(F.add(F.root_of_unity(8, 4), F.one()))
<Truth.TRUE: 'true'>
"""
from .array_field import DDArrayField, DiskArrayField, MRArrayField, TDArrayField
from .ball import BallField
from .base import Field, Unsupported, check_power_of_two, is_power_of_two
from .convert import exact_parts
from .counting import Counting
from .exact import ExactField
from .float64 import Float64Field
from .rounded import RoundedField
from .tracing import Circuit, Tracing, trace
from .truth import Truth

__all__ = [
    "BallField", "Circuit", "Counting", "DDArrayField", "DiskArrayField", "ExactField", "Field", "Float64Field",
    "MRArrayField", "RoundedField", "TDArrayField",
    "Tracing", "Truth", "Unsupported", "check_power_of_two", "exact_parts", "is_power_of_two", "trace",
]
