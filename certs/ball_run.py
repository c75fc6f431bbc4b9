"""Ball mode's run: the filter in ball arithmetic, the precision raised until the
radii reach eps, and C~ formed in ball arithmetic for it."""
from __future__ import annotations

from typing import Any

from flint import acb_mat, ctx

from ..algorithms.s4.dplr import DPLR
from ..arith import BallField


# -- C~ ---------------------------------------------------------------------------

def c_tilde_balls(model: DPLR, step: Any, M: int, prec: int) -> list:
    """C~ = (I - Abar^M)* C in ball arithmetic: Abar by a ball solve with G, then
    log2 M squarings (FLINT acb_mat)."""
    F = BallField(prec)
    N = model.N
    with ctx.workprec(prec):
        delta = F.from_number(step)
        alpha = delta / 2
        P = acb_mat([[F.from_number(x) for x in row] for row in model.P])
        Q = acb_mat([[F.from_number(x) for x in row] for row in model.Q])
        A = -(P * Q.conjugate().transpose())
        for i in range(N):
            A[i, i] += F.from_number(model.Lambda[i])
        I = acb_mat(N, N)
        for i in range(N):
            I[i, i] = 1
        Abar = (I - alpha * A).solve(I + alpha * A)
        AM = Abar ** M
        C = acb_mat([[F.from_number(c)] for c in model.C])
        out = C - AM.conjugate().transpose() * C
        return [out[i, 0] for i in range(N)]
