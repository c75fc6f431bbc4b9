"""The S4 filter on triple-double midpoint-radius disks (``arith.triple_double.TD``, about
2^-150 relative): the driver ``disk_filter.filter_kernel_disks`` on ``TD``, with TD's
conversions and roots registered as its primitives (``proofs/disk_filter.md``)."""
from __future__ import annotations

from typing import Any

from ...arith.triple_double import TD, concat, roots_of_unity_td, td_of_balls

from ..result import Result
from .cauchy_td import cauchy_sums_td
from .disk_filter import filter_kernel_disks, register
from .dplr import DPLR

#: the name of this arithmetic in results and certificates
ARITHMETIC = "triple-double midpoint-radius"
#: the set-up's ball precision: its enclosures' radii (about 2^-prec relative) stay far
#: below the disks' own 2^-150
SETUP_PREC = 256


def filter_kernel_td(model: DPLR, step: Any, L: int, c_tilde: list | None = None,
                     exceptional: list[int] | None = None, prec: int = SETUP_PREC) -> Result:
    """The length-L kernel as triple-double disks, the set-up done in ``BallField(prec)``:
    ``disk_filter.filter_kernel_disks(TD, ...)`` (its Result; ``info["disks"]`` the kernel's
    ``TD`` disks).

    >>> from s4cert.algorithms.s4.dplr import DPLR
    >>> res = filter_kernel_td(DPLR([-1.0, -2.0], [0.5, 0.25], [1, 1], [1, -1]), 0.5, 8)
    >>> res.ok, bool(res.info["disks"].rad.max() < 1e-42)
    (True, True)
    """
    return filter_kernel_disks(TD, model, step, L, c_tilde, exceptional, prec)


register(TD, arithmetic=ARITHMETIC, of_balls=td_of_balls, roots=roots_of_unity_td, concat=concat, cauchy=cauchy_sums_td)
