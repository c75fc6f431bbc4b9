"""Independent dense references: the bilinear matrices by Gaussian elimination on G."""
from __future__ import annotations

from algorithms.linalg import cdot, matvec, solve


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
    """K_j = C* Abar^j Bbar by dense elimination and products (None if G is singular)."""
    res = dense_bilinear(F, A, B, step)
    if res is None:
        return None
    Abar, v = res
    out = []
    for _ in range(L):
        out.append(cdot(F, C, v))
        v = matvec(F, Abar, v)
    return out
