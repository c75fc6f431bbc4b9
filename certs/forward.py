"""Certified outputs of a checkpoint's forward pass on a given input (``certify_forward``),
in convolution mode or as the recurrent model's steps, and the certified error of another
implementation's outputs (the README's "Certified outputs"; proofs/outputs.md).

Convolution mode: every kernel module's kernel at ``l_kernel = min(T, l_max)`` (T when
``l_max`` is None), certified by ``certify_model`` (a diagonal module's in the tight form,
whose radii per entry are some 50 times smaller: proofs/outputs.md, section 8); the causal
convolution with the input the module receives plus ``D v`` (``forward_conv``); then the
module's layers (``forward_plan``, ``forward_layers``).  Steps mode: what ``step()`` computes from the zero
state over the whole input, which is the same pass with the kernel at length T (the
recurrence's impulse response, C from C~ as the step set-up defines it; proofs/outputs.md,
section 4).

The radii are brought below eps (default ``1e-13 max|y|`` per output array) by certifying
the kernels tighter when they are the cause (a few rounds); an eps that float64 disks cannot
hold runs the pass in balls (``forward_balls``), whose lossless enclosures the report keeps.
"""
from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from .checkpoint.compare import kernel_max_interval, max_error_interval, relative_interval
from .checkpoint.layouts import find_kernel_modules, resolve_settings
from .compare import read_other
from .checkpoint.model import certify_model
from .checkpoint.reader import read_checkpoint
from .checkpoint.runner import npz_bytes
from .errors import CertificationError
from .forward_conv import Disks, causal_conv
from . import forward_fft
from .forward_input import read_input
from ..arith.midrad import U, up
from .forward_layers import activation, layer_norm, linear
from .forward_plan import Block, Plan, recorded_values, model_plan
from .io.atomic import atomic_write
from .io.numbers import json_value

REPORT_FORMAT = "s4cert.forward-report/1"
DEFAULT_REL_EPS = 1e-13
#: rounds of tighter kernels before a radius above eps is reported
ROUNDS = 4
#: float64 disks hold no array tighter than this times its largest |midpoint| (the rounding
#: of the midpoints themselves, 2u, with a margin)
_FLOOR = 4 * U
PARTS = ("model", "ssm", "both")
ASSUMPTIONS = [
    "IEEE binary64 round to nearest, checked at run time (arith.fpenv)",
    "numpy's element-wise operations round each result once (no fused multiply-add contraction)",
    "BLAS matrix products form every entry as a sum of the entries' products in some order, "
    "fused or not (no Strassen-like method)",
    "dropout off (eval mode)",
]


@dataclass
class ForwardReport:
    """What :func:`certify_forward` certified: the disks of every output array."""

    path: str
    plan: Plan
    mode: str
    part: str
    outputs: dict[str, Disks]
    eps: dict[str, float]
    kernels: list
    options: dict = field(default_factory=dict)
    compare: dict | None = None
    #: per array certified in balls: its lossless midpoint and radius strings and largest radius
    exact: dict = field(default_factory=dict)
    #: per causal convolution of the last round: the route that ran (FFT or direct sums) and why
    convolution: list = field(default_factory=list)

    def max_rad(self, name: str) -> float:
        """The largest radius of an array (of its lossless enclosures when it has them)."""
        return self.exact[name][2] if name in self.exact else self.outputs[name].max_rad()

    def arrays(self) -> dict[str, np.ndarray]:
        """``NAME.mid`` and ``NAME.rad`` for every output array."""
        out = {}
        for name, d in self.outputs.items():
            out[f"{name}.mid"], out[f"{name}.rad"] = d.mid, d.rad
            if name in self.exact:
                out[f"{name}.mid_exact"], out[f"{name}.rad_exact"] = self.exact[name][:2]
        return out

    def document(self) -> dict:
        return {"format": REPORT_FORMAT, "file": os.path.basename(self.path), "class": self.plan.cls,
                "mode": self.mode, "part": self.part, "transposed": self.plan.transposed,
                "options": {k: v for k, v in self.options.items() if v is not None},
                "assumed": dict(self.plan.assumed), "assumptions": ASSUMPTIONS,
                "kernels": [{"prefix": k.prefix, "layout": k.layout, "settings": k.settings, "assumed": k.assumed,
                             "L": k.L, "max_rad": k.max_rad, "eps": k.eps} for k in self.kernels],
                "outputs": {n: {"shape": list(d.shape), "max_rad": self.max_rad(n), "eps": self.eps[n],
                                "arithmetic": "ball" if n in self.exact else "float64"}
                            for n, d in self.outputs.items()},
                "convolution": self.convolution,
                **({"compare": self.compare} if self.compare is not None else {})}

    def save(self, outputs: str | None = None, report: str | None = None) -> None:
        items = []
        if outputs:
            items.append((outputs, npz_bytes(self.arrays())))
        if report:
            doc = json_value(self.document(), "report")
            items.append((report, (json.dumps(doc, indent=1, allow_nan=False) + "\n").encode()))
        if items:
            atomic_write(items)


def _input(u: Any, key: str | None, plan: Plan, time_last: bool) -> Disks:
    """The input as disks of shape (B, T, H) (features last), exactly."""
    a = read_input(u, key) if not isinstance(u, np.ndarray) else np.asarray(u)
    if a.dtype not in (np.float32, np.float64) or a.ndim != 3:
        raise ValueError(f"input: expected a float32 or float64 array of 3 axes, got {a.dtype} {a.shape}")
    a = a.astype(np.float64)
    if not np.all(np.isfinite(a)):
        raise ValueError("input: holds a non-finite number")
    H = plan.d_model
    channels_first = time_last or plan.transposed
    if a.shape[1 if channels_first else 2] != H:
        layout = "(batch, H, T)" if channels_first else "(batch, T, H)"
        raise ValueError(f"input: expected shape {layout} with H = {H}, got {a.shape}")
    if a.shape[0] < 1 or a.shape[1] < 1 or a.shape[2] < 1:
        raise ValueError(f"input: an empty axis in shape {a.shape}")
    return Disks.exact(np.swapaxes(a, 1, 2) if channels_first else a)


def _add(a: Disks, b: Disks) -> Disks:
    """a + b: |fl(x) - x| <= u |fl(x)| for a rounded sum (proofs/outputs.md, Lemma 3)."""
    mid = a.mid + b.mid
    return Disks(mid, up(up(a.rad + b.rad) + up(U * np.abs(mid))))


def _swap(d: Disks) -> Disks:
    return Disks(np.swapaxes(d.mid, -1, -2), np.swapaxes(d.rad, -1, -2))


class Float64Ops:
    """The forward pass's operations on float64 disks (features last)."""

    causal = staticmethod(causal_conv)
    layer_norm = staticmethod(layer_norm)
    activation = staticmethod(activation)
    linear = staticmethod(linear)

    @staticmethod
    def channels(K: Disks, C: int) -> tuple[Disks, Disks]:
        pad = lambda a: np.concatenate([np.zeros(a[C:].shape[:2] + (1,)), a[C:]], axis=2)
        return Disks(K.mid[:C], K.rad[:C]), Disks(pad(K.mid), pad(K.rad))

    @staticmethod
    def reverse(v: Disks) -> Disks:
        return Disks(v.mid[..., ::-1], v.rad[..., ::-1])

    @staticmethod
    def flat(y: Disks) -> Disks:
        B, C, H, T = y.shape
        return Disks(y.mid.reshape(B, C * H, T), y.rad.reshape(B, C * H, T))

    swap = staticmethod(lambda d: _swap(d))
    add = staticmethod(lambda a, b: _add(a, b))


CONVOLUTIONS = ("auto", "fft", "direct")


def _float64_ops(eps: float | None, convolution: str) -> type:
    """``Float64Ops`` with the convolution chosen by ``forward_fft.convolve``: the cheaper of
    the FFT and the direct sums, the FFT kept where its radius meets ``eps`` (absolute) or
    the default ``DEFAULT_REL_EPS`` of the SSM part's largest |midpoint|."""
    def causal(K, D, v, progress=None):
        return forward_fft.convolve(K, D, v, progress, rel=DEFAULT_REL_EPS, eps=eps, route=convolution)

    return type("Float64OpsChosen", (Float64Ops,), {"causal": staticmethod(causal)})


def _convolution(K, block: Block, v, progress: Callable[[str], None] | None, ops=Float64Ops):
    """The block's SSM part (B, C, H, T).  Bidirectional: the reference pads the first C
    channels' kernel k0 after and the flipped k1 before, so its FFT convolution is
    ``sum_j k0[j] v[t-j] + sum_{d>=1} k1[d-1] v[t+d]``: the causal sum of k0 plus the time
    reversal of the causal sum of ``(0, k1)`` with the reversed input."""
    if not block.bidirectional:
        return ops.causal(K, block.D, v, progress)
    k0, k1 = ops.channels(K, block.D.shape[0])
    back = ops.causal(k1, np.zeros_like(block.D), ops.reverse(v), progress)
    return ops.add(ops.causal(k0, block.D, v, progress), ops.reverse(back))


def run_plan(plan: Plan, kernels: dict, x, through: bool = True,
             progress: Callable[[str], None] | None = None, ops=Float64Ops) -> dict:
    """Every block on x (B, T, H): ``<prefix>.ssm`` (B, channels H, T) per kernel module and,
    when ``through``, ``output`` (B, T, features); ``ops``: the arithmetic (float64 disks,
    or ``forward_balls.BallOps``)."""
    out = {}
    for block in plan.blocks:
        z = ops.layer_norm(x, *block.norm) if block.norm is not None and block.prenorm else x
        ssm = ops.flat(_convolution(kernels[block.prefix], block, ops.swap(z), progress, ops))
        out[f"{block.prefix}.ssm"] = ssm
        if not through and block is plan.blocks[-1]:
            return out
        x = block_tail(block, ssm, x, ops)
    if plan.final_norm is not None:
        x = ops.layer_norm(x, *plan.final_norm)
    out["output"] = x
    return out


def block_tail(block: Block, ssm, x, ops=Float64Ops):
    """What a block makes of its SSM part ``ssm`` (B, channels H, T) and its input ``x``
    (B, T, H): the activation, the output linear layer and its activation, the residual,
    a post-norm; features last."""
    y = ops.activation(ops.swap(ssm), block.activation)
    if block.out_linear is not None:
        W, b, act = block.out_linear
        y = ops.activation(ops.linear(y, W, b), act)
    if block.residual:
        y = ops.add(x, y)
    if block.norm is not None and not block.prenorm:
        y = ops.layer_norm(y, *block.norm)
    return y


def _targets(outputs: dict[str, Disks], eps: float | None, names: list[str]) -> dict[str, float]:
    t = {}
    for n in names:
        scale = float(np.max(np.abs(outputs[n].mid), initial=0.0))
        t[n] = eps if eps is not None else max(DEFAULT_REL_EPS * scale, 2.0 ** -1000)
    return t


def _steps_refusal(mods, plan: Plan) -> str | None:
    if any(b.bidirectional for b in plan.blocks):
        return "--steps: a bidirectional FFTConv has no step mode in the reference"
    for m in mods:
        if m.layout == "s4d-minimal":
            return f"--steps: the minimal S4D ({m.prefix!r}) has no step mode in the reference"
        if m.kind == "diag" and m.settings.get("disc") == "dss":
            return f"--steps: the reference has no step mode for DSS ({m.prefix!r})"
    return None


def certify_forward(path: Any, u: Any, *, key: str | None = None, steps: bool = False, part: str = "both",
                    eps: float | None = None, l_max: int | None | str = "auto", time_last: bool = False,
                    activation: str | None = None, transposed: bool | None = None,
                    disc: str | None = None, dt_transform: str | None = None, real_transform: str | None = None,
                    imag_transform: str | None = None, compare: Any = None, compare_key: str | None = None,
                    against: str = "output", tighten: bool = True,
                    progress: Callable[[str], None] | None = None, convolution: str = "auto") -> ForwardReport:
    """Certify what the checkpoint at ``path`` computes on the input ``u`` (an array, or an
    .npz/.npy file with ``key``): disks of the model's output (``part`` "model" or "both")
    and of every kernel module's SSM part (``<prefix>.ssm``; "ssm" or "both").

    The input is in the module's layout ((B, H, T) when transposed, else (B, T, H)), or
    (B, H, T) with ``time_last``.  ``steps`` gives the recurrent outputs from the zero state
    (time last).  ``l_max``: the FFTConv's l_max ("auto": the recorded one, else None).
    ``eps``: an absolute bound on every radius (default ``1e-13 max|y|`` per array).
    ``compare`` (array or file, ``compare_key``) adds certified intervals for
    ``max|other - y|``, ``max|y|`` and their ratio, for ``against`` "output" or "ssm"; with
    ``tighten`` the radius is brought within 1/100 of the error first.  ``convolution``:
    "auto" (the FFT or the direct sums by cost, the direct sums where the FFT's radius misses
    eps: ``forward_fft.convolve``), "fft" or "direct"; the report's ``convolution`` records
    which ran.  ValueError for bad
    input or an unsupported module; CertificationError when a radius cannot meet eps (after
    the pass in balls, for an eps below what float64 disks hold).
    """
    if part not in PARTS:
        raise ValueError(f"part must be one of {', '.join(PARTS)}; got {part!r}")
    if against not in ("output", "ssm"):
        raise ValueError(f"against must be output or ssm; got {against!r}")
    if convolution not in CONVOLUTIONS:
        raise ValueError(f"convolution must be one of {', '.join(CONVOLUTIONS)}; got {convolution!r}")
    if eps is not None and not (float(eps) > 0 and math.isfinite(float(eps))):
        raise ValueError(f"eps must be a positive finite number, got {eps!r}")
    ck = read_checkpoint(path)
    mods = find_kernel_modules(ck.tensors)
    plan = model_plan(ck.tensors, mods, ck.hyper_parameters, activation=activation, transposed=transposed)
    x = _input(u, key, plan, time_last)
    T = x.shape[1]
    settings = dict(disc=disc, dt_transform=dt_transform, real_transform=real_transform, imag_transform=imag_transform)
    lk = T if steps else _kernel_length(T, l_max, ck.hyper_parameters, plan)
    names = ([f"{b.prefix}.ssm" for b in plan.blocks] if part != "model" else []) + \
        (["output"] if part != "ssm" else [])
    through = part != "ssm" or len(plan.blocks) > 1
    other = _other(compare, compare_key, against, plan, part) if compare is not None else None
    if steps:
        options = dict(settings)
        for m in mods:
            resolve_settings(m, options if m.kind == "diag" else {**options, "disc": None}, ck.hyper_parameters)
        why = _steps_refusal(mods, plan)
        if why:
            raise ValueError(why)
    eps_k, outputs, kernels, targets = None, None, None, None
    for _ in range(ROUNDS):
        # diagonal kernels in the tight form: radii per entry, some 50 times smaller than
        # s4cert model's (the convolution adds them up over the lags; proofs/outputs.md, §8)
        rep = certify_model(path, L=lk, eps=eps_k, arithmetic="tight", **settings)
        bad = [k for k in rep.kernels if k.status != "ok"]
        if bad:
            raise CertificationError(f"kernel module {bad[0].prefix!r}: {bad[0].reason}")
        kernels = rep.kernels
        if progress:
            progress(f"kernels certified (L = {lk}); convolution")
        forward_fft.ROUTES.clear()
        found = run_plan(plan, {k.prefix: Disks(k.mid, k.rad) for k in kernels}, x, through, progress,
                         _float64_ops(None if eps is None else float(eps), convolution))
        routes = list(forward_fft.ROUTES)
        outputs = {n: _layout(found[n], n, plan, steps) for n in names}
        targets = _targets(outputs, None if eps is None else float(eps), names)
        wanted = dict(targets)
        if other is not None and tighten:
            _tighten_target(wanted, outputs, other, against, plan)
        ratio = max(outputs[n].max_rad() / wanted[n] for n in wanted)
        if ratio <= 1 or any(targets[n] < _FLOOR * float(np.max(np.abs(outputs[n].mid), initial=0.0))
                             for n in targets if outputs[n].max_rad() > targets[n]):
            break       # met, or an eps below what float64 disks can hold (their midpoints' rounding)
        kmax = min(k.max_rad for k in kernels)
        if not kmax > 4 * U * max(float(np.max(np.abs(k.mid), initial=0)) for k in kernels):
            break       # the kernels are as tight as float64 disks hold them
        eps_k = kmax / (4 * ratio)
    report = ForwardReport(str(path), plan, "steps" if steps else "convolution", part, outputs, targets, kernels,
                           {"key": key, "l_kernel": lk, "eps": None if eps is None else float(eps),
                            **settings, "activation": activation}, convolution=routes)
    below = [n for n in targets if not outputs[n].max_rad() <= targets[n]
             and targets[n] < _FLOOR * float(np.max(np.abs(outputs[n].mid), initial=0.0))]
    if below:
        report.outputs, report.exact, report.kernels = _ball_route(path, plan, x, lk, settings, names, targets,
                                                                   steps, through, progress)
    if other is not None:
        report.compare = _compare(report, other, compare_key, against)
    worst = [n for n in targets if not report.max_rad(n) <= targets[n]]
    if worst:
        n = worst[0]
        raise CertificationError(f"{n}: radius {report.max_rad(n):.3e} above eps {targets[n]:.3e} "
                                 f"(the float64 disks cannot hold it)")
    return report


def _ball_route(path: Any, plan: Plan, x: Disks, lk: int, settings: dict, names: list, targets: dict,
                steps: bool, through: bool, progress) -> tuple[dict, dict, list]:
    """The pass in balls (``forward_balls``) for an eps below what float64 disks hold: the
    kernels certified to an absolute eps the input's sums leave room for, the precision from
    the eps, both tightened while an array misses its eps (ROUNDS rounds)."""
    from flint import ctx

    from .forward_balls import BallOps, ball_disks, exact_balls, kernel_balls
    need = min(targets.values())
    # |K - mid| <= eps_k gives an error of at most eps_k sum_t |v_t| in an SSM part
    vsum = max(float(np.max(np.sum(np.abs(x.mid), axis=1), initial=0.0)), 1.0)
    eps_k = need / (8 * vsum)
    prec = max(128, 64 + math.ceil(-math.log2(need)))
    for _ in range(ROUNDS):
        rep = certify_model(path, L=lk, eps=eps_k, **settings)
        bad = [k for k in rep.kernels if k.status != "ok"]
        if bad:
            raise CertificationError(f"kernel module {bad[0].prefix!r}: {bad[0].reason}")
        if progress:
            progress(f"kernels certified to {eps_k:.1e}; the pass in balls at {prec} bits")
        with ctx.workprec(prec):
            found = run_plan(plan, {k.prefix: kernel_balls(k) for k in rep.kernels}, exact_balls(x.mid), through,
                             progress, BallOps)
            arrays = {n: np.swapaxes(found[n], -1, -2) if n == "output" and (steps or plan.transposed) else found[n]
                      for n in names}
            done = {n: ball_disks(a) for n, a in arrays.items()}
        ratio = max(done[n][3] / targets[n] for n in names)
        if ratio <= 1:
            break
        eps_k /= 4 * ratio
        prec += 32 + math.ceil(math.log2(ratio))
    return {n: d[0] for n, d in done.items()}, {n: d[1:] for n, d in done.items()}, rep.kernels


def _kernel_length(T: int, l_max: Any, hyper: Any, plan: Plan) -> int:
    if l_max == "auto":
        found = {v for v in recorded_values(hyper, "l_max") if v is None or (isinstance(v, int) and not isinstance(v, bool))}
        if len(found) > 1:
            raise ValueError(f"the checkpoint's hyper_parameters record l_max as {sorted(map(str, found))}")
        if found:
            l_max = found.pop()
        else:
            plan.assumed["l_max"] = None
            l_max = None
    if l_max is None:
        return T
    if not isinstance(l_max, int) or isinstance(l_max, bool) or l_max < 1:
        raise ValueError(f"l_max must be a positive integer or None, got {l_max!r}")
    return min(T, l_max)


def _layout(d: Disks, name: str, plan: Plan, steps: bool) -> Disks:
    """``output`` in the forward pass's layout (time last in steps mode); SSM parts time last."""
    if name != "output":
        return d
    return _swap(d) if steps or plan.transposed else d


def _other(compare: Any, key: str | None, against: str, plan: Plan, part: str) -> np.ndarray:
    if part != "both" and part != ("model" if against == "output" else "ssm"):
        raise ValueError(f"--against {against} compares an array that --part {part} does not certify")
    a = np.asarray(read_other(compare, key))
    if a.dtype.kind != "f":
        raise ValueError(f"compare: expected float numbers, got dtype {a.dtype}")
    if against == "ssm" and len(plan.blocks) != 1:
        raise ValueError("--against ssm takes a checkpoint with one kernel module")
    return a.astype(np.float64)


def _fit(other: np.ndarray, d: Disks, what: str) -> np.ndarray:
    if other.shape == d.shape:
        return other
    if other.ndim == 3 and other.shape == (d.shape[0], d.shape[2], d.shape[1]) and d.shape[1] != d.shape[2]:
        return np.swapaxes(other, 1, 2)
    raise ValueError(f"compare: shape {other.shape} does not match the {what}'s {d.shape}")


def _compared(against: str, plan: Plan) -> str:
    return "output" if against == "output" else f"{plan.blocks[0].prefix}.ssm"


def _tighten_target(targets: dict, outputs: dict, other: np.ndarray, against: str, plan: Plan) -> None:
    """Ask the compared array's radius to be within 1/100 of the other's error, as far as
    the float64 disks go (a float64 implementation's error is near the default eps)."""
    name = _compared(against, plan)
    d = outputs[name]
    gap = float(np.max(np.abs(_fit(other, d, name) - d.mid), initial=0.0))
    if gap > 0:
        targets[name] = min(targets[name], gap / 100)


def _compare(report: ForwardReport, other: np.ndarray, key: str | None, against: str) -> dict:
    name = _compared(against, report.plan)
    d = report.outputs[name]
    o = _fit(other, d, name)
    if not np.all(np.isfinite(o)):
        raise ValueError("compare: the other array holds a non-finite number")
    err = max_error_interval(o, d.mid, d.rad)
    mx = kernel_max_interval(d.mid, d.rad)
    return {"key": key, "against": against, "array": name, "max_error": list(err), "max_abs": list(mx),
            "relative": list(relative_interval(err, mx))}
