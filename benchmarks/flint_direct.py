"""Plain python-flint direct sums: the baseline a certified ball route must beat.

The S4 filter written the obvious way with python-flint at a given precision: the M x N
Cauchy matrix 1/(z_k - mu_j) as an ``acb_mat``, one ``acb_mat`` product with the
N x (r+1)^2 weights, the Woodbury correction at every root (scalar for r = 1, an
``acb_mat`` solve otherwise), the value at -1, and ``acb.dft`` inverse.  It certifies
nothing by itself (no radius target, no decisions): it is what the same numbers cost in
FLINT balls without any of the ball route's structure.
"""
from __future__ import annotations

import numpy as np
from flint import acb, acb_mat, arb, ctx


def flint_direct_kernel(lam, P, Q, B, Ct, step: float, L: int, prec: int) -> list:
    """The length-L kernel as balls at ``prec`` bits (arrays as in ``float64_kernel``)."""
    M = 1 << max(0, (L - 1).bit_length())
    N, r = len(lam), P.shape[1]
    with ctx.workprec(prec):
        a = arb(2) / arb(step)
        lam_b = [acb(complex(x).real, complex(x).imag) for x in lam]
        mu = [(a - x) / (a + x) for x in lam_b]
        gain = [-2 / (a + x) for x in lam_b]
        z = acb.dft([acb(0), acb(1)] + [acb(0)] * (M - 2)) if M >= 2 else [acb(1)]  # z_k = w^k
        cauchy = acb_mat(M, N, [1 / (zk - m) for zk in z for m in mu])
        U = np.concatenate([Ct[:, None], Q], axis=1)
        V = np.concatenate([B[:, None], P], axis=1)
        U = [[acb(complex(x).real, -complex(x).imag) for x in row] for row in U]  # conjugated
        V = [[acb(complex(x).real, complex(x).imag) for x in row] for row in V]
        weights = acb_mat([[gain[j] * U[j][i] * V[j][c] for i in range(r + 1) for c in range(r + 1)]
                           for j in range(N)])
        S = (cauchy * weights).tolist()  # M rows of (r+1)^2 sums
        H = []
        for k in range(M):
            row, beta = S[k], (1 + z[k]) / 2
            x, u = row[0], row[1:r + 1]
            v = [row[(i + 1) * (r + 1)] for i in range(r)]
            T = [[row[(i + 1) * (r + 1) + c + 1] for c in range(r)] for i in range(r)]
            if r == 1:
                H.append(x - beta * u[0] * v[0] / (1 + beta * T[0][0]))
            else:
                W = acb_mat([[(1 if i == c else 0) + beta * T[i][c] for c in range(r)] for i in range(r)])
                X = W.solve(acb_mat([[e] for e in v]))
                H.append(x - beta * sum(u[i] * X[i, 0] for i in range(r)))
        if M >= 2:
            H[M // 2] = arb(step) / 2 * sum(acb(complex(c).real, -complex(c).imag) * acb(complex(b).real, complex(b).imag)
                                           for c, b in zip(Ct, B))
        return acb.dft(H, inverse=True)[:L]
