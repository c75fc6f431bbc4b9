"""A certified kernel's disks as arrays, in the layers both kernel file formats store.

Entry ``j`` of a kernel is stated by its *float64 disk* ``|K_j - mid_j| <= rad_j``
(``mid`` complex128, ``rad`` float64: the arrays ``--npz`` writes) and, where an enclosure
is tighter than a float64 disk can say, by its *exact disk*, in one of two layers:

* *parts* (the double-double and triple-double routes): the centre is the exact sum of
  ``k`` complex128 parts (``parts[i, 0] + ... + parts[i, k-1]``, real and imaginary
  parts summed separately, without rounding) and the radius the float64 ``parts_rad[i]``;
  entry ``parts_index[i]``;
* *text* (the ball routes, exact mode, stored rounded circuit outputs): the centre and
  radius as exact rationals, entry ``text_index[i]``.

An entry in neither layer has its float64 disk as its exact disk (the float64 route, whose
disks are exact binary numbers as they are).  The exact disks are what a kernel file
certifies first: a JSON file stores them as strings; an ``.npz`` kernel file stores the
layers themselves.  Nothing here builds a ``Fraction`` per entry for the float64 and
parts layers: strings come from ``float.as_integer_ratio`` and integer shifts.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
from flint import acb, ctx

from ...algorithms.s4.midrad import ARITHMETIC as FLOAT64_ARITHMETIC
from ...arith.ball import float_upper
from .numbers import arb_parts, arb_point, dyadic_bits, exact_arb, parse_rational, rational_string

#: what the kernel disks are, by mode (the ``kernel.source`` field)
SOURCES = {"ball": "ball enclosure", "exact": "exact values", "a-priori": "rounded circuit outputs",
           "a-priori enclosure": "enclosure of the rounded circuit outputs"}
#: the most parts of an exact centre a file may declare
MAX_PARTS = 16

_EMPTY_I = np.zeros(0, dtype=np.int64)


@dataclass
class KernelDisks:
    """The disks of a kernel of length ``L`` (see the module docstring).  ``mid``/``rad``
    are None when only the exact disks are known (a JSON file before ``float64()``)."""

    L: int
    source: str
    mid: np.ndarray | None = None
    rad: np.ndarray | None = None
    parts_index: np.ndarray = field(default_factory=lambda: _EMPTY_I)
    parts: np.ndarray = field(default_factory=lambda: np.zeros((0, 2), dtype=np.complex128))
    parts_rad: np.ndarray = field(default_factory=lambda: np.zeros(0))
    text_index: np.ndarray = field(default_factory=lambda: _EMPTY_I)
    text_re: list = field(default_factory=list)
    text_im: list = field(default_factory=list)
    text_rad: list = field(default_factory=list)

    # -- what is stored where --------------------------------------------------------------

    def plain(self) -> np.ndarray:
        """Mask of the entries whose exact disk is their float64 disk."""
        m = np.ones(self.L, dtype=bool)
        m[self.parts_index] = False
        m[self.text_index] = False
        return m

    def max_radius(self) -> Fraction:
        """The largest radius of the exact disks, exactly."""
        best = Fraction(0)
        if self.rad is not None:
            r = self.rad[self.plain()]
            if r.size:
                best = max(best, Fraction(float(r.max())))
        if self.parts_rad.size:
            best = max(best, Fraction(float(self.parts_rad.max())))
        if self.text_rad:
            best = max(best, max(self.text_rad))
        return best

    def entry(self, j: int) -> tuple[complex, Fraction]:
        """The exact disk of entry j: its centre rounded to complex (for display) and its
        radius exactly."""
        (a, b), r = self.exact_entry(j)
        return complex(float(a), float(b)), r

    def exact_entry(self, j: int) -> tuple[tuple[Fraction, Fraction], Fraction]:
        """The exact disk of entry j: ((re, im), rad) as Fractions."""
        k = _position(self.text_index, j)
        if k is not None:
            return (self.text_re[k], self.text_im[k]), self.text_rad[k]
        k = _position(self.parts_index, j)
        if k is not None:
            return _parts_disk(self.parts[k], float(self.parts_rad[k]))
        m = self.mid[j]
        return (Fraction(float(m.real)), Fraction(float(m.imag))), Fraction(float(self.rad[j]))

    # -- the exact disks of every entry --------------------------------------------------------

    def strings(self) -> tuple[list[str], list[str], list[str]]:
        """(re, im, rad) of every exact disk as rational strings ("p/q" or "p")."""
        if self.mid is not None:
            re = list(map(float_string, self.mid.real.tolist()))
            im = list(map(float_string, self.mid.imag.tolist()))
            rad = list(map(float_string, self.rad.tolist()))
        else:
            re, im, rad = [""] * self.L, [""] * self.L, [""] * self.L
        for k, j in enumerate(self.parts_index.tolist()):
            row = self.parts[k]
            re[j], im[j] = sum_string(row.real.tolist()), sum_string(row.imag.tolist())
            rad[j] = float_string(float(self.parts_rad[k]))
        for k, j in enumerate(self.text_index.tolist()):
            re[j], im[j], rad[j] = (rational_string(x) for x in (self.text_re[k], self.text_im[k], self.text_rad[k]))
        return re, im, rad

    def exact_lists(self) -> tuple[list[Fraction], list[Fraction], list[Fraction]]:
        """(re, im, rad) of every exact disk as Fractions (one per entry: for small kernels
        and the per-entry checks of the audit)."""
        if self.mid is not None:
            re = list(map(Fraction, self.mid.real.tolist()))
            im = list(map(Fraction, self.mid.imag.tolist()))
            rad = list(map(Fraction, self.rad.tolist()))
        else:
            re, im, rad = [Fraction(0)] * self.L, [Fraction(0)] * self.L, [Fraction(0)] * self.L
        for k, j in enumerate(self.parts_index.tolist()):
            (re[j], im[j]), rad[j] = _parts_disk(self.parts[k], float(self.parts_rad[k]))
        for k, j in enumerate(self.text_index.tolist()):
            re[j], im[j], rad[j] = self.text_re[k], self.text_im[k], self.text_rad[k]
        return re, im, rad

    def float64(self) -> tuple[np.ndarray, np.ndarray]:
        """The float64 disks (``mid``, ``rad``): stored ones as they are, else rounded from
        the exact disks (rad rounded outward)."""
        if self.mid is None:
            self.mid, self.rad = float64_disks(*self.exact_lists())
        return self.mid, self.rad


def _parts_disk(row: np.ndarray, r: float) -> tuple[tuple[Fraction, Fraction], Fraction]:
    """The exact disk of one row of parts: the exact sums of its real and imaginary parts."""
    return ((sum(map(Fraction, row.real.tolist()), Fraction(0)), sum(map(Fraction, row.imag.tolist()), Fraction(0))),
            Fraction(r))


def _position(index: np.ndarray, j: int) -> int | None:
    """k with index[k] == j in a strictly increasing index, else None."""
    k = int(np.searchsorted(index, j))
    return k if k < index.size and int(index[k]) == j else None


# -- exact strings of binary numbers, without Fraction ---------------------------------------------

def float_string(x: float) -> str:
    """The exact value of a finite float as "p/q" (or "p").

    >>> float_string(-0.375), float_string(3.0)
    ('-3/8', '3')
    """
    n, d = x.as_integer_ratio()
    return str(n) if d == 1 else f"{n}/{d}"


def sum_string(xs: list[float]) -> str:
    """The exact sum of finite floats as "p/q" (or "p"): each is n / 2^e, summed over the
    largest denominator and reduced by its common factors of two.

    >>> sum_string([1.0, 2.0 ** -60])
    '1152921504606846977/1152921504606846976'
    """
    ratios = [x.as_integer_ratio() for x in xs]
    d = max(q for _, q in ratios)
    n = sum(p * (d // q) for p, q in ratios)
    if n == 0:
        return "0"
    shift = min((n & -n).bit_length() - 1, d.bit_length() - 1)
    n, d = n >> shift, d >> shift
    return str(n) if d == 1 else f"{n}/{d}"


def float64_disks(re: list, im: list, rad: list) -> tuple[np.ndarray, np.ndarray]:
    """float64 ``mid`` and ``rad`` with the disk (mid_j, rad_j) holding the exact disk
    ((re_j, im_j), rad_j): the centre rounded to nearest, the radius the exact radius
    plus the rounding, computed in balls and rounded up."""
    L = len(re)
    mid = np.array([complex(float(a), float(b)) for a, b in zip(re, im)], dtype=np.complex128).reshape(L)
    out = np.empty(L)
    prec = max([64] + [dyadic_bits(x) for x in list(re) + list(im)]) + 64
    with ctx.workprec(prec):
        for j, (a, b, r, m) in enumerate(zip(re, im, rad, mid.tolist())):
            d = acb(exact_arb(a - Fraction(m.real), prec=prec), exact_arb(b - Fraction(m.imag), prec=prec))
            out[j] = float_upper((abs(d) + exact_arb(r)).upper())
    return mid, out


# -- the disks of a certified kernel ---------------------------------------------------------

def _disk_radius(b: acb) -> Fraction:
    """An exact upper bound of sqrt(rad_re^2 + rad_im^2): the disk around the midpoint
    of the box b that contains b."""
    rr, ri = arb_point(b.real.rad()), arb_point(b.imag.rad())
    if rr == 0 or ri == 0:
        return rr + ri
    with ctx.workprec(64):
        return arb_point((exact_arb(rr) ** 2 + exact_arb(ri) ** 2).sqrt().upper())


def _expansion(balls: Any) -> tuple[np.ndarray, np.ndarray] | None:
    """(parts (L, k) complex128, radii) when the enclosures are the disks of a
    multiple-double route: the double-double route's ``DDBalls`` (hi, lo) and the
    triple-double route's ``TDBalls`` (three parts per component); None otherwise."""
    from ..float64_route import DDBalls
    if isinstance(balls, DDBalls):
        hi, lo, rad = balls._hi, balls._lo, balls._rad
        return np.stack([np.asarray(hi, np.complex128), np.asarray(lo, np.complex128)], axis=1), np.asarray(rad, float)
    disks = getattr(balls, "_disks", None)
    names = ("r0", "r1", "r2", "i0", "i1", "i2", "rad")
    if disks is not None and type(balls).__name__ == "TDBalls" and all(hasattr(disks, n) for n in names):
        re = [np.asarray(getattr(disks, n), float) for n in names[:3]]
        im = [np.asarray(getattr(disks, n), float) for n in names[3:6]]
        parts = np.stack([r + 1j * i for r, i in zip(re, im)], axis=1)
        return parts, np.asarray(disks.rad, float)
    return None


def disks_of(ck: Any) -> KernelDisks:
    """The disks of a CertifiedKernel (see the module docstring): the float64 route's
    disks as they are, the multiple-double routes' midpoints as their parts, the rest
    (ball routes, exact values, rounded circuit outputs) as exact rationals."""
    mode = ck.problem.get("mode", ck.certificate.get("mode"))
    L = ck.L
    mid, rad = np.asarray(ck.mid, dtype=np.complex128), np.asarray(ck.rad, dtype=np.float64)
    everything = np.arange(L, dtype=np.int64)
    if mode == "exact" or (mode == "a-priori" and ck.exact is not None):
        if ck.exact is None or len(ck.exact) != L:
            raise ValueError("the certified kernel lacks its exact values")
        r = Fraction(0) if mode == "exact" else parse_rational(ck.problem["eps"], "eps")
        return KernelDisks(L, SOURCES[mode], mid, rad, text_index=everything,
                           text_re=[Fraction(re) for re, _ in ck.exact], text_im=[Fraction(im) for _, im in ck.exact],
                           text_rad=[r] * L)
    if ck.certificate.get("arithmetic") == FLOAT64_ARITHMETIC and mode == "ball":
        return KernelDisks(L, SOURCES["ball"], mid, rad)
    source = SOURCES["ball" if mode == "ball" else "a-priori enclosure"]
    exp = _expansion(ck.balls) if mode == "ball" else None
    if exp is not None:
        parts, prad = exp
        if parts.shape[0] != L or prad.shape != (L,):
            raise ValueError("the certified kernel's parts do not match its length")
        same = (parts[:, 0] == mid) & np.all(parts[:, 1:] == 0, axis=1) & (prad == rad)
        keep = np.flatnonzero(~same).astype(np.int64)
        if keep.size < L:  # (else the arrays as they are: no copy)
            parts, prad = np.ascontiguousarray(parts[keep]), np.ascontiguousarray(prad[keep])
        return KernelDisks(L, source, mid, rad, parts_index=keep, parts=parts, parts_rad=prad)
    if ck.balls is None or len(ck.balls) != L:
        raise ValueError("the certified kernel lacks its enclosures (ck.balls)")
    re, im, rr = [], [], []
    for j, b in enumerate(ck.balls):
        (mr, _), (mi, _) = arb_parts(b.real, f"K[{j}]"), arb_parts(b.imag, f"K[{j}]")
        re.append(mr)
        im.append(mi)
        rr.append(_disk_radius(b))
    return KernelDisks(L, source, mid, rad, text_index=everything, text_re=re, text_im=im, text_rad=rr)
