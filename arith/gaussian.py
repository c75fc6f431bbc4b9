"""Exact Gaussian-rational matrices and Krylov sequences on flint integer matrices.

A complex N x N matrix ``X + iY`` is held as the real 2N x 2N matrix
``[[X, -Y], [Y, X]]`` (an fmpq_mat), a complex vector ``x + iy`` as the column
``[x; y]``: products, sums and solves of the complex objects are exactly those of
their real forms (the map is an injective ring homomorphism), and the conjugate
transpose becomes the transpose.  ``krylov_values`` forms ``w* X^j b`` for
``0 <= j < L`` by the recurrence of X's characteristic polynomial on integers with one
common denominator per term (proofs/exact_route.md).
"""
from __future__ import annotations

from fractions import Fraction

from flint import fmpq, fmpq_mat, fmpz, fmpz_mat

Parts = tuple[Fraction, Fraction]


def fraction_of(q: fmpq) -> Fraction:
    """``q`` as a Fraction without a second gcd (flint's fmpq is already in lowest
    terms with a positive denominator, the invariant Fraction keeps)."""
    f = object.__new__(Fraction)
    f._numerator = int(q.p)
    f._denominator = int(q.q)
    return f


def _q(x: Fraction) -> fmpq:
    return fmpq(x.numerator, x.denominator)


def real_matrix(rows: list[list[Parts]]) -> fmpq_mat:
    """The real 2N x 2N form of a complex matrix given by exact (re, im) parts."""
    n = len(rows)
    R = fmpq_mat(2 * n, 2 * n)
    for i, row in enumerate(rows):
        for j, (re, im) in enumerate(row):
            a, b = _q(re), _q(im)
            R[i, j] = a
            R[i + n, j + n] = a
            R[i, j + n] = -b
            R[i + n, j] = b
    return R


def real_column(v: list[Parts]) -> fmpq_mat:
    """The real column [x; y] of a complex vector x + iy."""
    n = len(v)
    c = fmpq_mat(2 * n, 1)
    for i, (re, im) in enumerate(v):
        c[i, 0] = _q(re)
        c[i + n, 0] = _q(im)
    return c


def integer_form(X: fmpq_mat) -> tuple[fmpz_mat, fmpz]:
    """(Z, d) with X = Z/d, d > 0 the lcm of the entries' denominators."""
    d = fmpz(1)
    for i in range(X.nrows()):
        for j in range(X.ncols()):
            q = X[i, j].q
            d = d * q // d.gcd(q)
    Z = fmpz_mat(X.nrows(), X.ncols())
    for i in range(X.nrows()):
        for j in range(X.ncols()):
            q = X[i, j]
            Z[i, j] = q.p * (d // q.q)
    return Z, d


def _functionals(w: fmpq_mat) -> tuple[fmpq_mat, fmpq_mat]:
    """Rows (wr, wi) and (-wi, wr): for a real column [x; y] of x + iy they give the real
    and imaginary parts of conj(w) . (x + iy) = (wr.x + wi.y) + i (wr.y - wi.x)."""
    n = w.nrows() // 2
    re, im = fmpq_mat(1, 2 * n), fmpq_mat(1, 2 * n)
    for i in range(n):
        re[0, i], re[0, i + n] = w[i, 0], w[i + n, 0]
        im[0, i], im[0, i + n] = -w[i + n, 0], w[i, 0]
    return re, im


def krylov_values(X: fmpq_mat, b: fmpq_mat, w: fmpq_mat, L: int) -> list[Parts]:
    """``w* X^j b`` for ``0 <= j < L`` as exact (re, im) Fraction pairs, for the real forms
    ``X`` (2N x 2N), ``b``, ``w`` (2N x 1) of complex data.

    The first 2N terms by products; then Cayley-Hamilton: with ``chi(x) = x^(2N) +
    sum c_i x^i`` the characteristic polynomial of X, every sequence ``s_j = f X^j b``
    (f a fixed row) satisfies ``s_(j+2N) = -sum c_i s_(j+i)``.  With ``D`` the common
    denominator of the c_i (``a_i = D c_i``) and ``s_j = t_j / (D^j e)``, the integers
    ``t_j`` follow ``t_(j+2N) = -sum a_i D^(2N-1-i) t_(j+i)`` (evaluated by Horner's rule):
    4N integer products per part and term, no gcd until the final fractions."""
    m = X.nrows()
    head = min(L, m)
    rows = _functionals(w)
    seqs = [[], []]
    v = b
    for j in range(head):
        for s, f in zip(seqs, rows):
            s.append((f * v)[0, 0])
        if j + 1 < head:
            v = X * v
    if L > head:
        c = _charpoly(X)
        D = fmpz(1)
        for q in c:
            D = D * q.q // D.gcd(q.q)
        a = [q.p * (D // q.q) for q in c]
        seqs = [_extend(s, a, D, L) for s in seqs]
    else:
        seqs = [[fraction_of(q) for q in s] for s in seqs]
    return list(zip(*seqs))


def _charpoly(X: fmpq_mat) -> list[fmpq]:
    """c_0 .. c_(m-1) of the monic characteristic polynomial of X, from the integer
    matrix Z = dX: chi_X(x) = d^-m chi_Z(dx), so c_i = z_i / d^(m-i)."""
    Z, d = integer_form(X)
    z = Z.charpoly().coeffs()
    m = X.nrows()
    return [fmpq(z[i], d ** (m - i)) for i in range(m)]


def _extend(s: list[fmpq], a: list[fmpz], D: fmpz, L: int) -> list[Fraction]:
    """The recurrence of ``krylov_values`` continued to L terms."""
    m = len(a)
    e = fmpz(1)
    for q in s:
        e = e * q.q // e.gcd(q.q)
    t = [q.p * (e // q.q) * D ** j for j, q in enumerate(s)]  # s_j = t_j / (D^j e)
    for j in range(L - m):
        acc = a[0] * t[j]
        for i in range(1, m):
            acc = acc * D + a[i] * t[j + i]
        t.append(-acc)
    out = [fraction_of(q) for q in s]
    base = e * D
    den = e * D ** m
    for j in range(m, L):
        out.append(_fraction(t[j], den, base))
        den = den * D
    return out


def _fraction(t: fmpz, den: fmpz, base: fmpz) -> Fraction:
    """t/den in lowest terms, for den > 0 whose primes all divide ``base``.  A prime
    dividing t and den divides c = gcd(gcd(t mod base, base), gcd(den mod base, base)), a
    gcd of numbers of base's size; so c = 1 means t/den is reduced, and otherwise c is a
    common factor, whose largest power dividing both is divided out exactly.  This avoids the gcd of the full numbers, the
    costly step at these sizes (taken after 64 rounds)."""
    for _ in range(64):
        c = (t % base).gcd(base).gcd((den % base).gcd(base))
        if c == 1:
            f = object.__new__(Fraction)
            f._numerator, f._denominator = int(t), int(den)
            return f
        t, den = _strip(t, den, c)
    return fraction_of(fmpq(t, den))


def _strip(t: fmpz, den: fmpz, c: fmpz) -> tuple[fmpz, fmpz]:
    """t and den divided by the largest power of c (> 1, a common divisor) dividing both:
    powers c^(2^i) while they divide both, then greedily from the largest."""
    powers = [c]
    while True:
        q = powers[-1] * powers[-1]
        if q.bit_length() > den.bit_length() or t % q != 0 or den % q != 0:
            break
        powers.append(q)
    for q in reversed(powers):
        if t % q == 0 and den % q == 0:
            t, den = t // q, den // q
    return t, den


def power_times(X, M: int, v):
    """X^M v (M >= 0) for a square integer (or rational) matrix X and a column v: the
    squares X^(2^i) up to i = j with M = q 2^j + r, q in [8, 16), then X^r v by the bits of
    r and q products by X^(2^j).  The products with the column cost n^2 entry products
    against n^3 for a squaring, so stopping the squarings early is several times faster
    than forming X^M (entries grow linearly with the exponent either way).

    >>> from flint import fmpz_mat
    >>> X = fmpz_mat(2, 2, [1, 1, 0, 1])
    >>> power_times(X, 37, fmpz_mat(2, 1, [0, 1])).entries()
    [37, 1]
    """
    if M < 0:
        raise ValueError("power_times: M >= 0")
    j = max(0, M.bit_length() - 4)
    squares = [X]
    for _ in range(j):
        squares.append(squares[-1] * squares[-1])
    q, r = divmod(M, 1 << j)
    for i in range(j):
        if r >> i & 1:
            v = squares[i] * v
    for _ in range(q):
        v = squares[j] * v
    return v


def matrix_power(X, M: int):
    """X^M (M >= 1) by repeated squaring."""
    P, S = None, X
    while True:
        if M & 1:
            P = S if P is None else P * S
        M >>= 1
        if not M:
            return P
        S = S * S
