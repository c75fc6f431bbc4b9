"""Independent dense references: the bilinear matrices by Gaussian elimination on G."""
from __future__ import annotations

from s4cert.algorithms.s4.kernels import dense_kernel as _dense_kernel
from s4cert.algorithms.linalg import solve


def dense_bilinear(F, A, B, step):
    """(Abar, Bbar) from a dense A, column by column by elimination on G = I - alpha A."""
    N = len(A)
    alpha = F.div(F.from_number(step), F.const(2))
    G = [[F.sub(F.one() if i == j else F.zero(), F.mul(alpha, A[i][j])) for j in range(N)] for i in range(N)]
    Pl = [[F.add(F.one() if i == j else F.zero(), F.mul(alpha, A[i][j])) for j in range(N)] for i in range(N)]
    cols = []
    for j in range(N):
        r = solve(F, G, [Pl[i][j] for i in range(N)])
        if not r.ok:
            return None
        cols.append(r.value)
    Bb = solve(F, G, [F.mul(F.from_number(step), b) for b in B]).value
    return [[cols[j][i] for j in range(N)] for i in range(N)], Bb


def dense_kernel(F, A, B, C, step, L):
    """K_j by dense elimination (algorithms.dplr.dense_kernel); None if G is singular."""
    res = _dense_kernel(F, A, B, C, step, L)
    return res.value if res.ok else None
