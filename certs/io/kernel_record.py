"""Reading a kernel file's record: the problem (model, step, C~, eps, mode) and the keys
every kernel file shares, checked, from the object either format holds
(``kernel_file.load_kernel``)."""
from __future__ import annotations

from typing import Any

from ...algorithms.s4.dplr import DPLR
from .kernel_disks import SOURCES
from .numbers import decode_number, dyadic_bits, json_int, parse_rational

MODES = ("ball", "a-priori", "exact")
TOP_KEYS = ("problem", "status", "kernel", "certificate", "counts", "sha256")
MODEL_KEYS = ("Lambda", "P", "Q", "B", "C")


def need(d: dict, key: str, where: str) -> Any:
    """d[key]; ValueError naming the key and where it was expected."""
    if not isinstance(d, dict) or key not in d:
        raise ValueError(f"missing key \"{key}\" in {where}")
    return d[key]


def _decode_step(v: Any) -> Any:
    """The stored step: a Fraction > 0, or a ball."""
    x = decode_number(v, "step")
    if isinstance(x, tuple):
        re, im = x
        if im != 0 or re <= 0:
            raise ValueError(f"step must be a real number > 0, got {re} + {im}i")
        return re
    return x


def _decode_model(m: dict, N: int, r: int) -> DPLR:
    """The DPLR model of ``problem.model``, its numbers exactly as stored."""
    ent = {}
    for key in MODEL_KEYS:
        v = need(m, key, "problem.model")
        if not isinstance(v, list) or len(v) != N:
            raise ValueError(f"problem.model.{key}: expected {N} entries")
        if key in ("P", "Q"):
            if any(not isinstance(row, list) or len(row) != r for row in v):
                raise ValueError(f"problem.model.{key}: expected {N} rows of {r} numbers")
            ent[key] = [[decode_number(x, f"{key}[{i}][{k}]") for k, x in enumerate(row)] for i, row in enumerate(v)]
        else:
            ent[key] = [decode_number(x, f"{key}[{i}]") for i, x in enumerate(v)]
    return DPLR(ent["Lambda"], ent["P"], ent["B"], ent["C"], Q=ent["Q"])


def kernel_prec(mid: list) -> int:
    """Bits of the kernel balls: every stored midpoint exactly (at least 64), plus 64."""
    return max([64] + [dyadic_bits(x) for pair in mid for x in pair]) + 64


def decode_record(doc: dict) -> dict:
    """The problem and the shared keys of a kernel file's object (either format), checked."""
    for key in TOP_KEYS:
        need(doc, key, "the kernel file")
    pr = doc["problem"]
    N, r, L = (json_int(need(pr, k, "problem"), f"problem.{k}") for k in ("N", "r", "L"))
    mode = need(pr, "mode", "problem")
    if mode not in MODES:
        raise ValueError(f"problem.mode: expected one of {', '.join(MODES)}, got {mode!r}")
    eps = parse_rational(need(pr, "eps", "problem"), "problem.eps")
    if eps <= 0:
        raise ValueError("problem.eps must be > 0")
    model = _decode_model(need(pr, "model", "problem"), N, r)
    step = _decode_step(need(pr, "step", "problem"))
    ct = need(pr, "c_tilde", "problem")
    if ct is not None:
        if not isinstance(ct, list) or len(ct) != N:
            raise ValueError(f"problem.c_tilde: expected null or {N} numbers")
        ct = [decode_number(x, f"c_tilde[{i}]") for i, x in enumerate(ct)]
    source = need(doc["kernel"], "source", "kernel")
    if source not in SOURCES.values():
        raise ValueError(f"kernel.source: unknown {source!r}")
    cert, counts = doc["certificate"], doc["counts"]
    if not isinstance(cert, dict) or not isinstance(counts, dict):
        raise ValueError("certificate and counts must be objects")
    return {"L": L, "mode": mode, "eps": eps, "model": model, "step": step, "c_tilde": ct, "problem": pr,
            "source": source}
