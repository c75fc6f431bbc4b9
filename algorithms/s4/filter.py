"""The S4 convolution filter (proofs/spec.md §S25–§S28).

With M the least power of two >= L, ``a = 2/step`` and roots ``z_k = w^k``, the kernel
is the first L entries of the inverse DFT of

* ``H(-1) = (step/2) C~* B``;
* for ``z != -1``: ``W(z) = I_r + ((1+z)/2) S_QP(z)`` and
  ``H(z) = S_CB(z) - ((1+z)/2) S_CP(z) W(z)^-1 S_QB(z)``,

where ``S_uv(z) = (step/2) sum_{lambda_j = -a} conj(u_j) v_j
- 2 sum_{lambda_j != -a} conj(u_j) v_j / ((a + lambda_j)(z - mu_j))``,
``mu_j = (a - lambda_j)/(a + lambda_j)``: (r+1)^2 Cauchy sums on the root grid.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..cauchy.direct import cauchy_direct_many
from ..cauchy.tree import cauchy_on_roots_many
from ..cauchy.arcs.api import cauchy_fast_many
from ..dft import idft, next_power_of_two
from .c_tilde import c_tilde as form_c_tilde
from .dplr import DPLR, check_length, in_field, read_step
from ..linalg import dot
from ..result import Result, Status, undecided, zero_partition
from . import bilinear_map, correction

CAUCHY_ROUTES = ("tree", "direct", "fast")
#: the version of the sequence of field operations ``filter_kernel`` performs on each
#: Cauchy route.  Operation counts and a-priori circuits recorded in kernel files follow
#: it, and an audit measures or re-traces them again only when a file's version is this
#: one; raise it whenever that sequence changes (tests/certs/test_filter_version.py
#: holds the counts that pin it).
FILTER_VERSION = 2


def _cauchy_sums(F, route: str, poles: list, weights: dict, M: int, eps) -> Result:
    """Every weight set's Cauchy sum on the grid, by one route; value keyed like weights.
    The fast route shares its plan across the sets and reports its truncation bounds."""
    keys = list(weights)
    if route == "fast":
        res = cauchy_fast_many(F, poles, [weights[k] for k in keys], M, eps)
        if not res.ok:
            return res
        return Result(Status.OK, dict(zip(keys, res.value)), {"fast": {k: v for k, v in res.info.items()
                                                                 if k in ("p", "p0", "theta", "rho0", "leaf")},
                                                        "bound": dict(zip(keys, res.info["bound"]))})
    if route == "tree":
        res = cauchy_on_roots_many(F, poles, [weights[k] for k in keys], M)
        return Result(Status.OK, dict(zip(keys, res.value))) if res.ok else res
    res = cauchy_direct_many(F, poles, [weights[k] for k in keys], M)
    return Result(Status.OK, dict(zip(keys, res.value))) if res.ok else res


@dataclass
class FilterSetup:
    """What every route of the filter starts from: the partition, the poles mu_j, the
    weights of the (r+1)^2 Cauchy sums (keyed ("C", "B"), ("C", i), (i, "B"), (i, k)) and,
    by the same keys, the constants (step/2) sum_{lambda_j = -a} conj(u_j) v_j each sum
    gains from the exceptional indices (empty without them)."""

    M: int
    half_delta: Any
    Ct: list
    m: Any
    exceptional: list[int]
    regular: list[int]
    poles: list
    weights: dict
    offsets: dict
    gains: list


def setup(F, model: DPLR, step, M: int, c_tilde: list | None = None,
          exceptional: list[int] | None = None) -> Result:
    """The filter's set-up in F (see ``filter_kernel`` for the arguments): a FilterSetup,
    or the status that stopped it (C~ not formed, the partition undecided)."""
    delta = read_step(F, step)
    m = in_field(F, model)
    if c_tilde is None:
        ct = form_c_tilde(F, model, step, M)
        if not ct.ok:
            return ct
        Ct = ct.value
    else:
        Ct = [F.from_number(x) for x in c_tilde]
        if len(Ct) != model.N:
            raise ValueError(f"c_tilde: expected {model.N} entries, got {len(Ct)}")
    r = model.r
    a = bilinear_map.rate(F, delta)
    half_delta = bilinear_map.half_step(F, delta)

    # the partition lambda_j = -a, exactly (or undecided)
    shifted = [bilinear_map.shift(F, a, l) for l in m.lam]
    if exceptional is None:
        exceptional, regular, unknown = zero_partition(F, shifted)
        if unknown:
            return undecided("whether some lambda_j = -2/step")
    else:
        exceptional = sorted(set(exceptional))
        if any(not 0 <= j < model.N for j in exceptional):
            raise ValueError(f"exceptional: indices must lie in 0..{model.N - 1}")
        regular = [j for j in range(model.N) if j not in set(exceptional)]
    poles = [bilinear_map.pole(F, a, m.lam[j], shifted[j]) for j in regular]
    gains = [bilinear_map.gain(F, shifted[j]) for j in regular]

    Pc = [[row[i] for row in m.P] for i in range(r)]
    Qc = [[row[i] for row in m.Q] for i in range(r)]
    pairs = {("C", "B"): (Ct, m.B)}
    for i in range(r):
        pairs[("C", i)] = (Ct, Pc[i])
        pairs[(i, "B")] = (Qc[i], m.B)
        for k in range(r):
            pairs[(i, k)] = (Qc[i], Pc[k])
    conj_u = {key: [F.conj(x) for x in u] for key, (u, _) in pairs.items()}
    weights = {key: [F.mul(g, F.mul(conj_u[key][j], v[j])) for g, j in zip(gains, regular)]
               for key, (_, v) in pairs.items()}
    offsets = {key: F.mul(half_delta, dot(F, [conj_u[key][j] for j in exceptional], [v[j] for j in exceptional]))
               for key, (_, v) in pairs.items()} if exceptional else {}
    return Result(Status.OK, FilterSetup(M, half_delta, Ct, m, exceptional, regular, poles, weights, offsets,
                                               gains))


def correction_at(F, model: DPLR, step, z, exceptional: list[int] | None = None) -> Result:
    """W(z) = I_r + ((1+z)/2) S_QP(z) of the model at one point z != -1, its Cauchy sums
    evaluated directly (``correction.blocks_at_point``): in an exact field, W(z_k) at a
    single root decides exactly whether the correction is singular there
    (``correction.is_singular``).  ``exceptional`` as in ``filter_kernel``.  Status
    ``undecided`` (``info["reason"]``) when the partition cannot be decided; a pole at z
    raises the field's division error."""
    su = setup(F, model, step, 1, [F.zero()] * model.N, exceptional)
    if not su.ok:
        return su
    st = su.value
    T = {key: w for key, w in st.weights.items() if key[0] != "C" and key[1] != "B"}
    blocks = correction.blocks_at_point(F, st.poles, T, st.offsets, z)
    return Result(Status.OK, correction.matrix(F, blocks, correction.beta(F, z), model.r))


def filter_kernel(F, model: DPLR, step, L: int, c_tilde: list | None = None,
                  cauchy: str = "tree", exceptional: list[int] | None = None,
                  keep_blocks: bool = False, cauchy_eps: float | None = None) -> Result:
    """The length-L kernel K_j = C* Abar^j Bbar by the filter of proofs/spec.md §S27.

    ``c_tilde`` is the supplied C~ (S4 learns it); without it C~ = (I - Abar^M)* C is
    formed from ``model.C`` first (and counted with the filter).  ``cauchy`` picks the
    Cauchy route: ``"tree"`` (product tree, proofs/spec.md §S23), ``"direct"``, or ``"fast"``
    (hierarchical arcs, relative accuracy ``cauchy_eps`` per sum; in ball fields the
    truncation bounds are in the radii, in float64 they are in ``info["cauchy"]``).
    ``exceptional`` supplies the exact index partition (the j with lambda_j = -2/step),
    decided elsewhere, in place of zero tests in F.  With ``keep_blocks`` the result's
    info also holds the scaled blocks on the grid (``"blocks"``: the (r+1)^2 sums S_uv
    by key), the poles, the per-sum weights and W(z_k)^-1, for the filter constants.

    Result: ``value`` the L kernel entries.  ``info``: ``"M"`` (grid size),
    ``"exceptional"`` (the j with lambda_j = -2/step), ``"cauchy"`` (``"route"`` and
    the route's own keys: for ``"fast"`` its orders ``p``, ``p0``, ``theta``, ``rho0``,
    ``leaf`` under ``"fast"`` and the truncation bounds per sum under ``"bound"``); with
    ``keep_blocks`` also ``"blocks"``, ``"poles"``, ``"weights"``, ``"c_tilde"`` and
    ``"inverse"`` (W^-1 as r x r rows of vectors over the roots; its entries at the root
    -1, where W is not formed, mean nothing).
    Statuses: ``resonant-diagonal`` (a pole mu_j on the grid; the Cauchy route's info),
    ``resonant-correction`` (W(z_k) singular; ``info["root"] = k``), ``undecided``
    (``info["reason"]``, ``info["stage"]`` in {"cauchy", "correction"}, and ``"root"``
    for the correction), and those of forming C~ (``c_tilde``).

    >>> from s4cert.arith import ExactField
    >>> F = ExactField(4)
    >>> m = DPLR([-1], [0], B=[1], C=[1])
    >>> r = filter_kernel(F, m, 1, 3)
    >>> [F.to_complex(k) for k in r.value]   # Abar = 1/3, Bbar = 2/3
    [(0.6666666666666666+0j), (0.2222222222222222+0j), (0.07407407407407407+0j)]
    """
    L = check_length(L)
    if cauchy not in CAUCHY_ROUTES:
        raise ValueError(f"cauchy must be one of {sorted(CAUCHY_ROUTES)}, got {cauchy!r}")
    if cauchy == "fast" and not (cauchy_eps is not None and 0 < cauchy_eps < 1):
        raise ValueError(f"the fast Cauchy route needs 0 < cauchy_eps < 1, got {cauchy_eps!r}")
    M = next_power_of_two(L)
    su = setup(F, model, step, M, c_tilde, exceptional)
    if not su.ok:
        return su
    st = su.value
    r, half_delta, Ct, m = model.r, st.half_delta, st.Ct, st.m
    exceptional, poles, weights = st.exceptional, st.poles, st.weights
    sums = _cauchy_sums(F, cauchy, poles, weights, M, cauchy_eps)
    if not sums.ok:
        if sums.status == Status.COLLISION:
            return Result(Status.RESONANT_DIAGONAL, info=sums.info)
        sums.info["stage"] = "cauchy"
        return sums
    for key, const in st.offsets.items():  # S_uv += (step/2) sum_{lambda_j = -a} conj(u_j) v_j
        sums.value[key] = F.vec_shift(const, sums.value[key])
    vals = sums.value
    h = correction.transfer_all(F, vals, M, r, correction.value_at_minus_one(F, half_delta, Ct, m.B))
    if not h.ok:
        return h
    info = {"M": M, "exceptional": exceptional, "cauchy": {"route": cauchy, **sums.info}}
    if keep_blocks:
        info.update(blocks=vals, poles=poles, weights=weights, c_tilde=Ct, inverse=h.info["inverse"])
    del vals
    return Result(Status.OK, idft(F, h.value)[:L], info)


def convolve(F, K: list, u: list) -> list:
    """The causal convolution y_t = sum_{j <= t} K_j u_{t-j}, directly."""
    return [dot(F, K[: t + 1], u[t::-1]) for t in range(len(u))]
