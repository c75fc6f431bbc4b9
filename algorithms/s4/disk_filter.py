"""The S4 filter at every root at once on arrays of any disk class, written once.

The stages of ``s4.filter.filter_kernel`` on disk arrays (``proofs/disk_filter.md``):

1. set-up (partition, poles mu_j, weights) in ball arithmetic (``disk_setup``), rounded to
   disks of the class element by element;
2. the (r+1)^2 Cauchy sums sum_j a_j / (z_k - mu_j) on the root grid;
3. per root, W = I + beta T inverted by Gauss-Jordan on disks, then H
   (``transfer_disks``); H(-1) = (step/2) C~* B from the set-up;
4. the inverse DFT of H, with a rigorous bound;
5. the bounds b and w of the filter constants (``constants.constant_bounds``).

A disk class is used only through its proved operations (exact, add, sub, neg, mul, scale,
inv, abs_upper, abs_lower, mid_complex, mid_abs1, set_point, indexing, ``rad``) and through
*primitives*, looked up per class in one registry (``primitive``): ``of_balls`` (acb balls to
disks), ``roots`` (the disks of z_k = exp(-2 pi i k / M)), ``concat``, and optionally
``poles_of_balls`` and ``weights_of_balls`` (the Cauchy sums' inputs, when the class's sums
read them more precisely than its disks hold them), faster ``cauchy`` and ``idft`` routines,
a ``transfer`` (stages 2 and 3 in another form where it applies) and ``to_float64`` (the
kernel's disks as float64 midpoints and radii).  The float64 disks ``MR`` register
``midrad.cauchy_midrad``, ``midrad.transfer_midrad`` (the quotient form of
``midrad_quotient``) and ``midrad.idft_mr``; double-double disks ``cauchy_dd.cauchy_sums_dd`` and
``midrad_dd.idft_dd``.  Without them the generic ones here run, written with the class's own
operations: the Cauchy sums as inv() of the differences, mul by the weights and a pairwise
tree of add over the poles, blocked over the roots; the transform as radix-2 butterflies on
disks with the class's roots as twiddles; the sums followed by ``transfer_disks``.
"""
from __future__ import annotations

import importlib
import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from flint import ctx

from ...arith import BallField
from ...arith.midrad import MR, RangeError, sum_upper, up

from ..dft import next_power_of_two
from ..linalg import dot
from ..result import OK, Result, Status, undecided
from . import bilinear_map, correction
from .dplr import DPLR, check_length
from .filter import setup
from .constants import constant_bounds
from .midrad_idft import bit_reverse

#: (root, pole) pairs per block of the generic Cauchy sums: the block's disks stay a few MB
BLOCK_PAIRS = 1 << 16
#: the primitives' names; those after "concat" have generic fallbacks
NAMES = ("arithmetic", "of_balls", "roots", "concat", "poles_of_balls", "weights_of_balls", "cauchy",
         "transfer", "idft", "to_float64")
#: modules that register the primitives of a disk class when imported
_PROVIDERS = ("s4cert.algorithms.s4.midrad", "s4cert.algorithms.s4.midrad_dd", "s4cert.algorithms.s4.midrad_td")
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
    ``poles_of_balls`` and ``weights_of_balls`` the class's ``of_balls`` and for ``cauchy``,
    ``transfer``, ``idft`` and ``to_float64`` the generic routine of this module.
    ValueError for a class without the required primitives."""
    if name not in NAMES:
        raise ValueError(f"unknown primitive {name!r}")
    if disks not in _REGISTRY:
        _load_providers()
    fns = _REGISTRY.get(disks, {})
    if name in fns:
        return fns[name]
    if name in ("poles_of_balls", "weights_of_balls"):
        return primitive(disks, "of_balls")
    generic = {"cauchy": cauchy_generic, "transfer": transfer_generic, "idft": idft_generic,
               "to_float64": rounded_midpoints}
    if name in generic:
        return generic[name]
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


# -- set-up and correction ------------------------------------------------------------

class DiskArrays:
    """The field operations ``s4.correction`` calls, on disk arrays over the M roots
    (``arith.midrad.MR``, or any class with ``exact``, ``add``, ``sub``, ``mul``): one
    element is a whole array of disks, one per root."""

    def __init__(self, M: int, disks: Any = MR):
        self._one, self._zero = disks.exact(np.ones(M)), disks.exact(np.zeros(M))

    def one(self) -> MR:
        return self._one

    def zero(self) -> MR:
        return self._zero

    def add(self, a: MR, b: MR) -> MR:
        return b if a is self._zero else a.add(b)  # adding the exact zero is exact

    def sub(self, a: MR, b: MR) -> MR:
        return a.sub(b)

    def mul(self, a: MR, b: MR) -> MR:
        return a.mul(b)


def gauss_jordan_inverse(W: list[list[Any]], disks: Any = MR) -> list[list[Any]]:
    """The inverse of an r x r matrix of disk arrays (of the class ``disks``), without
    pivoting (RangeError when a pivot is not certainly nonzero at some root)."""
    r = len(W)
    A = [row[:] for row in W]
    n = len(A[0][0])
    one, zero = disks.exact(np.ones(n)), disks.exact(np.zeros(n))
    inv = [[one if i == c else zero for c in range(r)] for i in range(r)]
    for p in range(r):
        ip = A[p][p].inv()
        A[p] = [None] * (p + 1) + [x.mul(ip) for x in A[p][p + 1:]]   # columns <= p are never read again
        inv[p] = [ip if x is one else zero if x is zero else x.mul(ip) for x in inv[p]]   # exact 1 and 0
        for i in range(r):
            if i == p:
                continue
            f = A[i][p]
            A[i] = [None] * (p + 1) + [x.sub(f.mul(y)) for x, y in zip(A[i][p + 1:], A[p][p + 1:])]
            inv[i] = [x if y is zero else (f.mul(y).neg() if x is zero else x.sub(f.mul(y)))
                      for x, y in zip(inv[i], inv[p])]
    return inv


def disk_setup(model: DPLR, step: Any, L: int, c_tilde, exceptional, prec: int) -> Result:
    """What the disk routes (float64, double-double, triple-double) share before their arithmetic:
    the checked length L, the filter's M, the ball field of the enclosures and the
    filter's set-up (``filter.setup``); ``value = (L, M, F, setup)`` or the set-up's
    status."""
    L = check_length(L)
    M = next_power_of_two(L)
    F = BallField(prec)
    with ctx.workprec(prec):  # the field's operations then skip their precision switches
        su = setup(F, model, step, M, c_tilde, exceptional)
    return Result(OK, (L, M, F, su.value)) if su.ok else su


def betas_of(Z: Any, disks: Any = MR) -> Any:
    """The disks of beta_k = (1 + z_k)/2 from the roots' disks Z of the class ``disks`` (the
    halving exact)."""
    return bilinear_map.beta_disks(Z, disks)


def transfer_disks(blocks: dict, Z: Any, r: int, skip, disks: Any = MR) -> tuple[Any, list]:
    """H = x - beta u W^-1 v at every position of the disk arrays ``blocks`` (keyed as
    ``correction``), beta = (1 + z)/2 from the roots' disks Z and W = I + beta T inverted by
    Gauss-Jordan: (H, W^-1), on arrays of the disk class ``disks`` (``MR``, ``DD``,
    ``TD``).  At the positions ``skip`` (z = -1, an index or an index array,
    or None) W is the identity, so its pivots are harmless there; the caller sets H at
    those positions."""
    D = DiskArrays(len(Z), disks)
    beta = betas_of(Z, disks)
    W = correction.matrix(D, blocks, beta, r)
    if skip is not None:
        for i in range(r):
            for c in range(r):
                W[i][c].set_point(skip, 1.0 if i == c else 0.0)
    Winv = gauss_jordan_inverse(W, disks)
    v = correction.rhs(blocks, r)
    return correction.transfer(D, blocks, beta, [dot(D, Winv[i], v) for i in range(r)], r), Winv


# -- the filter -----------------------------------------------------------------------

@dataclass
class SumsInput:
    """What stages 2 and 3 (the Cauchy sums and the transfer value H) start from."""

    disks: type
    #: the set-up's ball field and its ``filter.FilterSetup``
    F: Any
    st: Any
    r: int
    #: the roots' disks (``roots``), the poles' (``poles_of_balls``) and each weight set's
    #: (``weights_of_balls``, in the order of ``st.weights``)
    Z: Any
    poles: Any
    weights: list
    #: the index of z = -1 (None for M = 1)
    skip: int | None
    #: the Cauchy primitive of the run
    cauchy: Callable


def _repeat(x: Any, M: int) -> Any:
    """The one disk x as an array of M equal disks (indexing, no arithmetic)."""
    return x[np.zeros(M, dtype=np.int64)]


def _set_at(H: Any, idx: int, h: Any, concat: Callable) -> Any:
    """H with the disk at ``idx`` replaced by the one disk h."""
    return concat([H[:idx], h, H[idx + 1:]])


def transfer_generic(job: SumsInput) -> tuple[dict, Any, list, float, dict]:
    """Stages 2 and 3 as written: the Cauchy sums of every weight set, the exceptional
    indices' constants added, then ``transfer_disks``: (blocks, H, W^-1, sep, {})."""
    M = len(job.Z)
    sums, sep = job.cauchy(job.Z, job.poles, job.weights)
    blocks = dict(zip(job.st.weights, sums))
    of_balls = primitive(job.disks, "of_balls")
    for key, const in job.st.offsets.items():  # the exceptional indices' constant
        blocks[key] = blocks[key].add(_repeat(of_balls([job.F.enclose(const)]), M))
    H, Winv = transfer_disks(blocks, job.Z, job.r, job.skip, job.disks)
    return blocks, H, Winv, sep, {}


def rounded_midpoints(K: Any) -> tuple[np.ndarray, np.ndarray]:
    """(mid, rad): the disks' midpoints rounded to complex128 (within 2u |mid| per
    component), the rounding added to the radius, so |K_j - mid_j| <= rad_j."""
    return K.mid_complex(), up(K.rad + up(2 * 2.0 ** -53 * K.mid_abs1()))


def filter_kernel_disks(disks: type, model: DPLR, step: Any, L: int, c_tilde: list | None = None,
                        exceptional: list[int] | None = None, prec: int = 192,
                        generic: bool = False, decide_g: bool | None = None, **options: Any) -> Result:
    """The length-L kernel as disks of the class ``disks``, the set-up done in
    ``BallField(prec)``; ``generic``: the generic conversions of the sums' inputs, Cauchy
    sums, transfer and transform even where the class registers others; ``options``: keyword
    arguments of the class's ``transfer`` primitive.

    Result: ``value`` = (midpoints, radii): complex128 midpoints and float64 radii
    (``to_float64``), so |K_j - mid_j| <= rad_j.  ``info``: ``"M"``,
    ``"exceptional"``, ``"poles"``, ``"cauchy"`` (``"route"``: ``"direct"``,
    ``"arithmetic"``: the class's registered name), ``"b"``, ``"w"`` (upper bounds, floats
    >= 1), ``"d"`` (a lower bound of min |z_k - mu_j|), ``"A_wt"`` (upper bounds of
    sum_j |a_j| by weight key), what the ``transfer`` primitive reports, with ``decide_g``
    not None ``"g_invertible"`` (True when the set-up certifies G = I - (step/2) A invertible,
    ``correction.g_certainly_invertible``, asked only when ``decide_g`` is true; False: not
    decided here), and ``"disks"``: the kernel's disks (|K_j - m_j| <= rad_j for their
    midpoints m_j).  Statuses: ``undecided`` (``info["reason"]``) and the set-up's.
    """
    name = primitive(disks, "arithmetic")
    of_balls, concat = primitive(disks, "of_balls"), primitive(disks, "concat")
    pick = lambda slot, fallback: fallback if generic else primitive(disks, slot)
    poles_of_balls, weights_of_balls = pick("poles_of_balls", of_balls), pick("weights_of_balls", of_balls)
    cauchy, transfer = pick("cauchy", cauchy_generic), pick("transfer", transfer_generic)
    idft = pick("idft", idft_generic)
    su = disk_setup(model, step, L, c_tilde, exceptional, prec)
    if not su.ok:
        return su
    L, M, F, st = su.value
    r = model.r
    checked = {} if decide_g is None else {"g_invertible": False}
    if decide_g:
        with ctx.workprec(prec):
            checked["g_invertible"] = correction.g_certainly_invertible(F, st.poles, st.weights, st.offsets, r)
    try:
        Z = primitive(disks, "roots")(M)
        weights = [weights_of_balls([F.enclose(x) for x in st.weights[k]]) for k in st.weights]
        poles = poles_of_balls([F.enclose(p) for p in st.poles])
        job = SumsInput(disks, F, st, r, Z, poles, weights, correction.minus_one_index(M), cauchy)
        blocks, H, Winv, sep, reported = transfer(job, **({} if generic else options))
        mask = np.ones(M, dtype=bool)
        if job.skip is not None:
            mask[job.skip] = False
            h = of_balls([F.enclose(correction.value_at_minus_one(F, st.half_delta, st.Ct, st.m.B))])
            H = _set_at(H, job.skip, h, concat)
        bounds = constant_bounds(blocks, Winv, mask, r)
        del blocks, Winv              # before the transform: the peak memory is the sums' and H's
        K = idft(H, M)[:L]
    except RangeError as e:
        return undecided(f"{name.split(' midpoint')[0]} disks: {e}")
    A_wt = {key: float(sum_upper(float(np.sum(w.abs_upper())), len(w))) if len(w) else 0.0
            for key, w in zip(st.weights, weights)}
    mid, rad = primitive(disks, "to_float64")(K)
    info = {"M": M, "exceptional": list(st.exceptional), "poles": len(st.poles),
            "cauchy": {"route": "direct", "arithmetic": name},
            "b": bounds["b"], "w": bounds["w"], "d": sep, "A_wt": A_wt, **reported, **checked, "disks": K}
    return Result(Status.OK, (mid, rad), info)
