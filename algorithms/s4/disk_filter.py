"""The S4 filter at every root at once on arrays of any disk class, written once.

The stages of ``s4.filter.filter_kernel`` on disk arrays (``proofs/disk_filter.md``):

1. set-up (partition, poles mu_j, weights) in ball arithmetic (``midrad.disk_setup``),
   rounded to disks of the class element by element;
2. the (r+1)^2 Cauchy sums sum_j a_j / (z_k - mu_j) on the root grid;
3. per root, W = I + beta T inverted by Gauss-Jordan on disks, then H
   (``midrad.transfer_disks``); H(-1) = (step/2) C~* B from the set-up;
4. the inverse DFT of H, with a rigorous bound;
5. the bounds b and w of the filter constants (``midrad_bounds.constant_bounds``).

A disk class is used only through its proved operations (exact, add, sub, neg, mul, scale,
inv, abs_upper, abs_lower, mid_complex, mid_abs1, set_point, indexing, ``rad``) and through
*primitives*, looked up per class in one registry (``primitive``): ``of_balls`` (acb balls to
disks), ``roots`` (the disks of z_k = exp(-2 pi i k / M)), ``concat``, and optionally faster
``cauchy`` and ``idft`` routines (for double-double disks ``cauchy_pairs`` and
``midrad_dd.idft_dd``).  Without a registered ``cauchy`` or ``idft`` the generic ones here
run, written with the class's own operations: the Cauchy sums as inv() of the differences,
mul by the weights and a pairwise tree of add over the poles, blocked over the roots; the
transform as radix-2 butterflies on disks with the class's roots as twiddles.
"""
from __future__ import annotations

import importlib
import math
from typing import Any, Callable

import numpy as np

from ...arith.midrad import RangeError, sum_upper, up

from ..result import Result, Status, undecided
from . import correction
from .dplr import DPLR
from .midrad import bit_reverse, disk_setup, transfer_disks
from .midrad_bounds import constant_bounds

#: (root, pole) pairs per block of the generic Cauchy sums: the block's disks stay a few MB
BLOCK_PAIRS = 1 << 16
#: the primitives' names; "cauchy" and "idft" have generic fallbacks
NAMES = ("arithmetic", "of_balls", "roots", "concat", "cauchy", "idft")
#: modules that register the primitives of a disk class when imported
_PROVIDERS = ("s4cert.algorithms.s4.midrad_dd", "s4cert.algorithms.s4.midrad_td")
_REGISTRY: dict[type, dict[str, Any]] = {}


def register(disks: type, **fns: Any) -> None:
    """Record the primitives ``fns`` (names from ``NAMES``) of the disk class ``disks``."""
    unknown = set(fns) - set(NAMES)
    if unknown:
        raise ValueError(f"unknown primitive names: {sorted(unknown)}")
    _REGISTRY.setdefault(disks, {}).update(fns)


def _load_providers() -> None:
    for name in _PROVIDERS:
        importlib.import_module(name)


def primitive(disks: type, name: str) -> Any:
    """The primitive ``name`` of the disk class ``disks``: the registered one, else for
    ``cauchy`` and ``idft`` the generic routine of this module.  ValueError for a class
    without the required primitives."""
    if name not in NAMES:
        raise ValueError(f"unknown primitive {name!r}")
    if disks not in _REGISTRY:
        _load_providers()
    fns = _REGISTRY.get(disks, {})
    if name in fns:
        return fns[name]
    if name == "cauchy":
        return cauchy_generic
    if name == "idft":
        return idft_generic
    raise ValueError(f"the disk class {getattr(disks, '__name__', disks)!r} has no registered {name!r}")


# -- the generic primitives ----------------------------------------------------------

def _tree_sum(x: Any, parts: int, width: int, concat: Callable) -> Any:
    """The sums of ``parts`` consecutive runs of ``width`` disks of x (x of length
    parts * width, run p at [p width, (p + 1) width)), as a pairwise tree of add."""
    while parts > 1:
        h = parts // 2
        s = x[:h * width].add(x[h * width:2 * h * width])
        x = concat([s, x[2 * h * width:parts * width]]) if parts % 2 else s
        parts = h + parts % 2
    return x[:width]


def cauchy_generic(Z: Any, poles: Any, weights: list, disks: type | None = None) -> tuple[list, float]:
    """Disks of S_k = sum_j a_j / (z_k - mu_j) for each weight set, and a lower bound of
    min |z_k - mu_j| (inf without poles), with the disk class's operations only: per block
    of roots the differences d = z - mu as sub, 1/d as inv (RangeError where a disk of d
    may contain 0), the terms as mul, the sum over the poles as a pairwise tree of add."""
    disks = disks or type(Z)
    concat = primitive(disks, "concat")
    M, n = len(Z), len(poles)
    if n == 0:   # one array per set: later stages may write into them (set_point)
        return [disks.exact(np.zeros(M)) for _ in weights], math.inf
    B = min(M, max(1, BLOCK_PAIRS // n))
    jj_full = np.repeat(np.arange(n), B)               # pole-major: pair (j, k) at j * w + k
    full = (poles[jj_full], [a[jj_full] for a in weights])   # the same for every block of B roots
    out: list[list] = [[] for _ in weights]
    sep = math.inf
    for s in range(0, M, B):
        w = min(M, s + B) - s
        if w == B:
            mu, ws = full
        else:
            jj = np.repeat(np.arange(n), w)
            mu, ws = poles[jj], [a[jj] for a in weights]
        d = Z[np.tile(np.arange(s, s + w), n)].sub(mu)
        sep = min(sep, float(np.min(d.abs_lower())))
        q = d.inv()
        for c, a in enumerate(ws):
            out[c].append(_tree_sum(q.mul(a), n, w, concat))
    return [concat(parts) if len(parts) > 1 else parts[0] for parts in out], max(sep, 0.0)


def _stage_indices(M: int, size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For the radix-2 stage of blocks of ``size``: the positions of the even and odd halves
    (block-major) and each butterfly's twiddle index into the M-point roots."""
    half = size // 2
    starts = np.arange(0, M, size)
    j = np.arange(half)
    even = (starts[:, None] + j[None, :]).ravel()
    return even, even + half, np.tile(j * (M // size), M // size)


def idft_generic(H: Any, M: int, disks: type | None = None) -> Any:
    """Disks of (1/M) sum_k h_k conj(z_k)^j (numpy's ifft convention) for every h in the
    disks H: the radix-2 decimation-in-time transform on disks, every butterfly
    e +- w o by the class's mul, add and sub (each bounding its own rounding), the twiddles
    w = conj(z_(j M / size)) the conjugates of the class's roots of unity, the first stage's
    twiddle 1 exact; then the exact scaling by 1/M."""
    disks = disks or type(H)
    concat = primitive(disks, "concat")
    if M == 1:
        return H[np.arange(1)]
    Zc = primitive(disks, "roots")(M).conj()
    x = H[bit_reverse(M)]
    size = 2
    while size <= M:
        even, odd, tw = _stage_indices(M, size)
        e, o = x[even], x[odd]
        p = o if size == 2 else Zc[tw].mul(o)
        y = concat([e.add(p), e.sub(p)])
        back = np.empty(M, dtype=np.int64)               # y[i] belongs at even[i], y[M/2 + i] at odd[i]
        back[np.concatenate([even, odd])] = np.arange(M)
        x = y[back]
        size *= 2
    return x.scale(1.0 / M)


# -- the filter -----------------------------------------------------------------------

def _repeat(x: Any, M: int) -> Any:
    """The one disk x as an array of M equal disks (indexing, no arithmetic)."""
    return x[np.zeros(M, dtype=np.int64)]


def _set_at(H: Any, idx: int, h: Any, concat: Callable) -> Any:
    """H with the disk at ``idx`` replaced by the one disk h."""
    return concat([H[:idx], h, H[idx + 1:]])


def filter_kernel_disks(disks: type, model: DPLR, step: Any, L: int, c_tilde: list | None = None,
                        exceptional: list[int] | None = None, prec: int = 192,
                        generic: bool = False) -> Result:
    """The length-L kernel as disks of the class ``disks``, the set-up done in
    ``BallField(prec)``; ``generic``: the generic Cauchy sums and transform even where the
    class registers faster ones.

    Result: ``value`` = (midpoints, radii): complex128 midpoints (the disks' midpoints
    rounded) and float64 radii, so |K_j - mid_j| <= rad_j.  ``info``: ``"M"``,
    ``"exceptional"``, ``"poles"``, ``"cauchy"`` (``"route"``: ``"direct"``,
    ``"arithmetic"``: the class's registered name), ``"b"``, ``"w"`` (upper bounds, floats
    >= 1), ``"d"`` (a lower bound of min |z_k - mu_j|), ``"A_wt"`` (upper bounds of
    sum_j |a_j| by weight key) and ``"disks"``: the kernel's disks (|K_j - m_j| <= rad_j for
    their midpoints m_j).  Statuses: ``undecided`` (``info["reason"]``) and the set-up's.
    """
    name = primitive(disks, "arithmetic")
    of_balls, concat = primitive(disks, "of_balls"), primitive(disks, "concat")
    cauchy = cauchy_generic if generic else primitive(disks, "cauchy")
    idft = idft_generic if generic else primitive(disks, "idft")
    su = disk_setup(model, step, L, c_tilde, exceptional, prec)
    if not su.ok:
        return su
    L, M, F, st = su.value
    r = model.r
    try:
        Z = primitive(disks, "roots")(M)
        keys = list(st.weights)
        wdisks = [of_balls([F.enclose(x) for x in st.weights[k]]) for k in keys]
        sums, sep = cauchy(Z, of_balls([F.enclose(p) for p in st.poles]), wdisks)
        blocks = dict(zip(keys, sums))
        for key, const in st.offsets.items():  # the exceptional indices' constant
            blocks[key] = blocks[key].add(_repeat(of_balls([F.enclose(const)]), M))
        minus_one = correction.minus_one_index(M)
        mask = np.ones(M, dtype=bool)
        if minus_one is not None:
            mask[minus_one] = False
        H, Winv = transfer_disks(blocks, Z, r, minus_one, disks)
        if minus_one is not None:
            h = of_balls([F.enclose(correction.value_at_minus_one(F, st.half_delta, st.Ct, st.m.B))])
            H = _set_at(H, minus_one, h, concat)
        K = idft(H, M)[:L]
        bounds = constant_bounds(blocks, Winv, mask, r)
    except RangeError as e:
        return undecided(f"{name.split(' midpoint')[0]} disks: {e}")
    A_wt = {key: float(sum_upper(float(np.sum(w.abs_upper())), len(w))) if len(w) else 0.0
            for key, w in zip(keys, wdisks)}
    # the midpoints rounded to complex128: within 2u |mid| per component, added to the radius
    mid = K.mid_complex()
    rad = up(K.rad + up(2 * 2.0 ** -53 * K.mid_abs1()))
    info = {"M": M, "exceptional": list(st.exceptional), "poles": len(st.poles),
            "cauchy": {"route": "direct", "arithmetic": name},
            "b": bounds["b"], "w": bounds["w"], "d": sep, "A_wt": A_wt, "disks": K}
    return Result(Status.OK, (mid, rad), info)
