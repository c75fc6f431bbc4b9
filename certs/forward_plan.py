"""Which forward pass a checkpoint's state dict defines: the reference classes around its
kernel modules, read from the tensor names and shapes (the README's "Certified outputs").

=================  =====================================================================
class              what the state dict holds (prefix ``p``)
=================  =====================================================================
``FFTConv``        ``p.kernel.*`` and ``p.D``: the convolution, ``+ D u``, the activation
                   (bidirectional when the kernel has twice D's channels: the second
                   half anticausal, ``y_t += sum_d k1[d-1] u[t+d]`` as the reference pads)
``S4Block``        an FFTConv at ``q.layer`` and ``q.output_linear.0.{weight,bias}``: the
                   FFTConv (its input and output not transposed) and the output linear
                   layer with its activation (GLU when it doubles the features)
``S4D``            the minimal S4D: ``kernel.{log_dt,C,log_A_real,A_imag}``, ``D`` (H,) and
                   ``output_linear.0`` a 1x1 Conv1d to 2H features and a GLU
``SequenceModel``  S4Blocks at ``layers.i.layer`` with a LayerNorm at ``layers.i.norm.norm``
                   (before the layer with prenorm, after the residual otherwise), the
                   residual ``x + y``, and a final LayerNorm ``norm.norm`` (prenorm)
=================  =====================================================================

Every tensor of the file must belong to one of these parts: any other (a gate, a
bottleneck, a reverse layer, ...) is refused with one line naming it.  Settings the file
does not hold (the FFTConv activation, ``transposed``, ``prenorm``, the residual, the
output linear layer's activation when it does not double the features) come from the
checkpoint's hyper_parameters when they record them, else from the caller, else from the
reference classes' defaults, and are listed in ``assumed``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .checkpoint.certify import module_channels, module_heads
from .checkpoint.layouts import KernelModule
from .forward_layers import ACTIVATIONS

#: the classes' defaults of ``transposed``
TRANSPOSED = {"FFTConv": True, "S4Block": True, "S4D": True, "SequenceModel": False}
_LAYERS = re.compile(r"^(?P<pre>(?:.*\.)?)layers\.(?P<i>\d+)\.layer$")


@dataclass
class Block:
    """One kernel module and the layers around it, in the order they apply."""

    prefix: str                        # the kernel module's prefix
    D: np.ndarray                      # (channels, H)
    activation: str                    # the FFTConv's activation
    out_linear: tuple | None = None    # (W (out, in), b (out,), activation)
    norm: tuple | None = None          # (weight, bias) of the block's LayerNorm
    prenorm: bool = True
    residual: bool = False
    #: a bidirectional FFTConv: the kernel's first half of channels causal, the second anticausal
    bidirectional: bool = False


@dataclass
class Plan:
    """The forward pass of a checkpoint: its blocks, the final norm, the input layout."""

    cls: str
    blocks: list[Block]
    final_norm: tuple | None
    transposed: bool
    d_model: int
    assumed: dict = field(default_factory=dict)


def _join(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


def recorded_values(hyper: Any, key: str, depth: int = 0) -> list:
    """Every value of ``key`` anywhere in a checkpoint's hyper_parameters (plain containers)."""
    if depth > 32:
        return []
    out = []
    if isinstance(hyper, dict):
        for k, v in hyper.items():
            if k == key:
                out.append(v)
            out += recorded_values(v, key, depth + 1)
    elif isinstance(hyper, (list, tuple)):
        for v in hyper:
            out += recorded_values(v, key, depth + 1)
    return out


def _setting(hyper: Any, key: str, option: Any, default: Any, assumed: dict, kinds: tuple) -> Any:
    """A setting from the hyper_parameters, else ``option``, else ``default`` (assumed)."""
    found = {repr(v): v for v in recorded_values(hyper, key) if isinstance(v, kinds) or v is None}
    if len(found) > 1:
        raise ValueError(f"the checkpoint's hyper_parameters record {key} as {sorted(found)}; the forward "
                         f"pass cannot be decided")
    if found:
        value = next(iter(found.values()))
        if option is not None and option != value:
            raise ValueError(f"{key} = {option!r} contradicts the checkpoint, which records {key} = {value!r}")
        return value
    if option is not None:
        return option
    assumed[key] = default
    return default


def _floats(a: Any, what: str) -> np.ndarray:
    a = np.asarray(a)
    if a.dtype.kind not in "fiu":
        raise ValueError(f"{what}: expected real numbers, got dtype {a.dtype}")
    a = a.astype(np.float64)
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{what}: holds a non-finite number")
    return a


def _refuse_hyper(hyper: Any) -> None:
    """Refuse recorded options whose forward pass is not the one implemented here."""
    # a bidirectional FFTConv shows in its kernel's channels; a SequenceModel's reverse layer in its tensors
    checks = (("gate", lambda v: v is not None),
              ("bottleneck", lambda v: v is not None), ("mult_act", lambda v: v not in (None, "id")),
              ("swap_channels", lambda v: v not in (None, False)), ("weight_norm", lambda v: v not in (None, False)),
              ("n_repeat", lambda v: v not in (None, 1)))
    for key, bad in checks:
        for v in recorded_values(hyper, key):
            if bad(v):
                raise ValueError(f"{key} = {v!r} is not supported by s4cert forward")
    for v in recorded_values(hyper, "residual"):
        name = v.get("_name_") if isinstance(v, dict) else v
        if name not in (None, "R"):
            raise ValueError(f"residual {name!r} is not supported by s4cert forward (supported: R, none)")
    for v in recorded_values(hyper, "pool"):
        if isinstance(v, dict) and (v.get("stride", 1) != 1 or v.get("expand") is not None):
            raise ValueError("pooling (stride or expand) is not supported by s4cert forward")
    for v in recorded_values(hyper, "norm"):
        name = v.get("_name_") if isinstance(v, dict) else v
        if name not in (None, "layer"):
            raise ValueError(f"norm {name!r} is not supported by s4cert forward (supported: layer)")


def model_plan(tensors: dict[str, Any], mods: list[KernelModule], hyper: Any = None, *,
               activation: str | None = None, transposed: bool | None = None) -> Plan:
    """The forward pass that ``tensors`` (a flat state dict) defines around ``mods``."""
    if activation is not None and activation not in ACTIVATIONS:
        raise ValueError(f"--activation must be one of {', '.join(ACTIVATIONS)}; got {activation!r}")
    _refuse_hyper(hyper)
    used: set[str] = set()
    assumed: dict = {}

    def take(key: str, what: str | None = None) -> np.ndarray:
        used.add(key)
        return _floats(tensors[key], what or key)
    act = _setting(hyper, "activation", activation, "gelu", assumed, (str,))
    if act not in ACTIVATIONS:
        raise ValueError(f"activation {act!r} is not supported (supported: {', '.join(ACTIVATIONS)})")
    blocks, classes, finals = [], set(), set()
    for mod in mods:
        used |= {_join(mod.prefix, n) for n in mod.tensors}
        block = _block(mod, tensors, take, act, hyper, assumed, classes, finals)
        block.bidirectional = module_channels(mod) == 2 * block.D.shape[0]
        blocks.append(block)
    if len(classes) != 1:
        raise ValueError(f"the kernel modules sit in different classes ({', '.join(sorted(classes))})")
    cls = classes.pop()
    final = None
    if len(finals) > 1:
        raise ValueError("the layers' final norms are not one")
    if finals:
        key = finals.pop()
        if _join(key, "weight") in tensors:
            final = (take(_join(key, "weight")), take(_join(key, "bias")))
    rest = [k for k in tensors if k not in used]
    if rest:
        raise ValueError(f"unsupported module or parameter in the checkpoint: {rest[0]}"
                         + (f" (and {len(rest) - 1} more)" if len(rest) > 1 else ""))
    tr = _setting(hyper, "transposed", transposed, TRANSPOSED[cls], assumed, (bool,)) if cls != "SequenceModel" \
        else _model_transposed(hyper, transposed, assumed)
    return Plan(cls, blocks, final, bool(tr), module_heads(mods[0]), assumed)


def _model_transposed(hyper: Any, option: bool | None, assumed: dict) -> bool:
    model = hyper.get("model", hyper) if isinstance(hyper, dict) else None
    if isinstance(model, dict) and isinstance(model.get("transposed"), bool):
        if option is not None and option != model["transposed"]:
            raise ValueError(f"transposed = {option} contradicts the checkpoint, which records "
                             f"transposed = {model['transposed']}")
        return model["transposed"]
    if option is not None:
        return option
    assumed["transposed"] = False
    return False


def _block(mod: KernelModule, tensors: dict, take, act: str, hyper: Any, assumed: dict, classes: set,
           finals: set) -> Block:
    p = mod.prefix
    if not (p == "kernel" or p.endswith(".kernel")):
        raise ValueError(f"kernel module {p!r} is not inside an FFTConv layer (expected a prefix ending in 'kernel')")
    base = p[:-len("kernel")].rstrip(".")
    dkey = _join(base, "D")
    if dkey not in tensors:
        raise ValueError(f"kernel module {p!r}: no skip term {dkey!r} in the checkpoint")
    D = take(dkey)
    C, H = module_channels(mod), module_heads(mod)
    if mod.layout == "s4d-minimal":
        if D.shape != (H,):
            raise ValueError(f"{dkey}: expected shape ({H},), got {D.shape}")
        W, b = _linear(tensors, take, base, 2 * H, H)
        if W is None:
            raise ValueError(f"the minimal S4D at {p!r} has no output_linear.0")
        classes.add("S4D")
        return Block(p, D[None], "gelu", (W, b, "glu"))
    if D.ndim != 2 or D.shape[1] != H:
        raise ValueError(f"{dkey}: expected shape (channels, {H}), got {D.shape}")
    bidirectional = D.shape[0] * 2 == C
    if D.shape[0] != C and not bidirectional:
        raise ValueError(f"{dkey}: {D.shape[0]} channels against the kernel's {C}")
    parent = base[:-len("layer")].rstrip(".") if base == "layer" or base.endswith(".layer") else None
    W = b = None
    if parent is not None:
        W, b = _linear(tensors, take, parent, None, D.shape[0] * H)
    if W is None:
        classes.add("FFTConv")
        return Block(p, D, act)
    final_act = _final_act(W, H, hyper, assumed)
    m = _LAYERS.match(parent)
    if m is None:
        classes.add("S4Block")
        return Block(p, D, act, (W, b, final_act))
    classes.add("SequenceModel")
    bp = f"{m['pre']}layers.{m['i']}"
    norm = None
    if _join(bp, "norm.norm.weight") in tensors:
        norm = (take(_join(bp, "norm.norm.weight")), take(_join(bp, "norm.norm.bias")))
    prenorm = _setting(hyper, "prenorm", None, True, assumed, (bool,))
    residual = _setting(hyper, "residual", None, "R", assumed, (str, dict))
    if prenorm:
        finals.add(f"{m['pre']}norm.norm")
    return Block(p, D, act, (W, b, final_act), norm, bool(prenorm), residual is not None)


def _linear(tensors: dict, take, prefix: str, out: int | None, inp: int) -> tuple:
    """The output linear layer under ``prefix`` (``output_linear.0`` or ``output_linear``)."""
    for name in ("output_linear.0", "output_linear"):
        wkey = _join(prefix, f"{name}.weight")
        if wkey in tensors:
            W = take(wkey)
            if W.ndim == 3 and W.shape[2] == 1:      # a 1x1 Conv1d
                W = W[:, :, 0]
            if W.ndim != 2 or W.shape[1] != inp or (out is not None and W.shape[0] != out):
                raise ValueError(f"{wkey}: expected shape ({out or 'out'}, {inp}), got {W.shape}")
            bkey = _join(prefix, f"{name}.bias")
            b = take(bkey) if bkey in tensors else None
            if b is not None and b.shape != (W.shape[0],):
                raise ValueError(f"{bkey}: expected shape ({W.shape[0]},), got {b.shape}")
            return W, b
    return None, None


def _final_act(W: np.ndarray, H: int, hyper: Any, assumed: dict) -> str:
    recorded = [v for v in recorded_values(hyper, "final_act") if isinstance(v, str) or v is None]
    doubled = W.shape[0] == 2 * H
    if recorded:
        if len(set(map(repr, recorded))) > 1:
            raise ValueError(f"the checkpoint's hyper_parameters record final_act as {recorded}")
        name = recorded[0] or "id"
        if name not in ACTIVATIONS:
            raise ValueError(f"final_act {name!r} is not supported (supported: {', '.join(ACTIVATIONS)})")
        if (name == "glu") != doubled:
            raise ValueError(f"final_act {name!r} does not fit the output linear layer's shape {W.shape}")
        return name
    if doubled:
        return "glu"
    if W.shape[0] != H:
        raise ValueError(f"the output linear layer's shape {W.shape} fits no supported activation")
    assumed["final_act"] = "id"
    return "id"
