"""Kernel modules in a state dict: which layout, which keys, which settings.

A checkpoint holds any number of S4-family kernel modules, each under a prefix
(``layer.kernel``, ``model.layers.0.layer.layer.kernel``, ...).  They are found by the
names of their tensors, at any prefix:

=================  ==========================================================  ======
layout             tensors under the prefix                                    kind
=================  ==========================================================  ======
``s4-v4-dplr``     ``inv_dt A_real A_imag B C P l_kernel``                     dplr
``s4-v4-diag``     ``inv_dt A_real A_imag B C``                                diag
``s4d-minimal``    ``log_dt log_A_real A_imag C`` (no B)                       diag
``s4-v3-dplr``     ``log_dt inv_w_real w_imag B C P`` (and ``L``)              dplr
``s4-v3-diag``     ``log_dt inv_A_real A_imag B C``                            diag
``annotated-s4``   ``Lambda_re Lambda_im P B C log_step`` (and ``D``)          dplr
=================  ==========================================================  ======

Names may be separated by ``.`` (PyTorch) or ``/`` (flattened Flax parameters).  An
``annotated-s4`` module is the Annotated S4's DPLR layer (one SSM per feature, the full
state, no conjugate halving, the learned C used as C~ for the kernel length); S5's
parameters have the same names but a matrix B (a MIMO kernel), which is refused.

A V3 diagonal module has ``A = -exp(inv_A_real) + i A_imag`` and the bilinear step by
default.  A V3 DPLR module is read as its V4 form (``log_dt`` is the step through ``exp``,
``inv_w_real`` is ``A_real``, ``-w_imag`` is ``A_imag``, ``L`` is ``l_kernel``).

Settings that a state dict does not record (the step transform, the transforms of
A's real and imaginary parts, the discretization of a diagonal kernel) come from the
checkpoint's ``hyper_parameters`` when it records them, else from the caller's
options, else from the reference classes' defaults.  Every setting not read from the
file is listed in ``assumed``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

TRANSFORMS = ("none", "exp", "relu", "sigmoid", "softplus")
DISCRETIZATIONS = ("zoh", "bilinear", "dss")

#: layout -> (required local names, optional local names, kind)
LAYOUTS: dict[str, tuple[frozenset, frozenset, str]] = {
    "s4-v4-dplr": (frozenset({"inv_dt", "A_real", "A_imag", "B", "C", "P"}), frozenset({"l_kernel"}), "dplr"),
    "s4-v4-diag": (frozenset({"inv_dt", "A_real", "A_imag", "B", "C"}), frozenset(), "diag"),
    "s4d-minimal": (frozenset({"log_dt", "log_A_real", "A_imag", "C"}), frozenset(), "diag"),
    "s4-v3-dplr": (frozenset({"log_dt", "inv_w_real", "w_imag", "B", "C", "P"}), frozenset({"L"}), "dplr"),
    "s4-v3-diag": (frozenset({"log_dt", "inv_A_real", "A_imag", "B", "C"}), frozenset({"A"}), "diag"),
    "annotated-s4": (frozenset({"Lambda_re", "Lambda_im", "P", "B", "C", "log_step"}), frozenset({"D"}), "dplr"),
}

#: the reference classes' defaults for settings a state dict does not record
DEFAULTS = {
    "s4-v4-dplr": {"dt_transform": "exp", "real_transform": "exp", "imag_transform": "none", "disc": "bilinear"},
    "s4-v4-diag": {"dt_transform": "exp", "real_transform": "exp", "imag_transform": "none", "disc": "zoh"},
    "s4d-minimal": {"dt_transform": "exp", "real_transform": "exp", "imag_transform": "none", "disc": "zoh"},
    "s4-v3-dplr": {"dt_transform": "exp", "real_transform": "exp", "imag_transform": "none", "disc": "bilinear"},
    "s4-v3-diag": {"dt_transform": "exp", "real_transform": "exp", "imag_transform": "none", "disc": "bilinear"},
    "annotated-s4": {"dt_transform": "exp", "real_transform": "none", "imag_transform": "none", "disc": "bilinear"},
}
#: settings fixed by the layout's formula (not choices the file could have made)
FIXED = {
    "s4-v4-dplr": {"disc"},
    "s4d-minimal": {"dt_transform", "real_transform", "imag_transform", "disc"},
    "s4-v3-dplr": {"dt_transform", "real_transform", "imag_transform", "disc"},
    "s4-v3-diag": {"dt_transform", "real_transform", "imag_transform"},
    "annotated-s4": {"dt_transform", "real_transform", "imag_transform", "disc"},
}
#: the option that sets each setting (named in refusals)
OPTIONS = {"dt_transform": "--dt-transform", "real_transform": "--real-transform",
           "imag_transform": "--imag-transform", "disc": "--disc"}


@dataclass
class KernelModule:
    """One kernel module of a checkpoint: its prefix, layout and tensors (local names)."""

    prefix: str
    layout: str
    tensors: dict[str, np.ndarray]
    settings: dict[str, str] = field(default_factory=dict)
    assumed: dict[str, str] = field(default_factory=dict)

    @property
    def kind(self) -> str:
        return LAYOUTS[self.layout][2]


def _split(key: str) -> tuple[str, str]:
    cut = max(key.rfind("."), key.rfind("/"))
    return (key[:cut], key[cut + 1:]) if cut >= 0 else ("", key)


def find_kernel_modules(tensors: dict[str, Any]) -> list[KernelModule]:
    """Every kernel module in a flat state dict, in key order.

    A prefix whose names fit two layouts is refused (ValueError), as is a state dict
    with no kernel module at all.
    """
    groups: dict[str, dict[str, Any]] = {}
    for key, value in tensors.items():
        prefix, name = _split(key)
        groups.setdefault(prefix, {})[name] = value
    found = []
    for prefix, local in groups.items():
        names = set(local)
        fits = [lay for lay, (req, opt, _) in LAYOUTS.items() if req <= names]
        # a DPLR module also holds every name of the diagonal layout: take the larger
        fits = [lay for lay in fits if not any(LAYOUTS[lay][0] < LAYOUTS[o][0] for o in fits)]
        if len(fits) > 1:
            raise ValueError(f"kernel module {prefix or '(top level)'!r}: its tensors fit the layouts "
                             f"{', '.join(fits)}; the layout cannot be decided")
        if fits == ["annotated-s4"] and np.asarray(local["Lambda_re"]).ndim == 1 \
                and np.asarray(local["B"]).ndim == 3:
            raise ValueError(f"kernel module {prefix or '(top level)'!r}: an S5-style layer (B of shape "
                             f"{np.asarray(local['B']).shape}) has a MIMO kernel; s4cert certifies SISO kernels")
        if fits:
            req, opt, _ = LAYOUTS[fits[0]]
            keep = {n: np.asarray(local[n]) for n in names & (req | opt)}
            found.append(KernelModule(prefix, fits[0], keep))
    if not found:
        raise ValueError("no S4-family kernel module found (looked for the tensor names of "
                         + ", ".join(LAYOUTS) + ")")
    return found


def _recorded(hyper: Any, key: str, depth: int = 0) -> set:
    """Values of ``key`` anywhere in a checkpoint's hyper_parameters (plain containers)."""
    if depth > 32:
        return set()
    out = set()
    if isinstance(hyper, dict):
        for k, v in hyper.items():
            if k == key and isinstance(v, str):
                out.add(v)
            out |= _recorded(v, key, depth + 1)
    elif isinstance(hyper, (list, tuple)):
        for v in hyper:
            out |= _recorded(v, key, depth + 1)
    return out


def resolve_settings(module: KernelModule, options: dict[str, str | None], hyper: Any = None) -> None:
    """Fill ``module.settings`` and ``module.assumed`` (see the module docstring).

    An option that contradicts what the checkpoint records, or a setting recorded with
    two values, is refused naming the option.
    """
    defaults = DEFAULTS[module.layout]
    fixed = FIXED.get(module.layout, set())
    for name, default in defaults.items():
        option = options.get(name)
        if option is not None:
            allowed = DISCRETIZATIONS if name == "disc" else TRANSFORMS
            if option not in allowed:
                raise ValueError(f"{OPTIONS[name]} must be one of {', '.join(allowed)}; got {option!r}")
        if name in fixed:
            if option is not None and option != default:
                raise ValueError(f"{OPTIONS[name]} {option} does not apply to the {module.layout} layout "
                                 f"(its formula uses {default})")
            module.settings[name] = default
            continue
        recorded = _recorded(hyper, name) if hyper is not None else set()
        if len(recorded) > 1:
            raise ValueError(f"the checkpoint's hyper_parameters record {name} as {sorted(recorded)}; "
                             f"choose one with {OPTIONS[name]}")
        if recorded:
            value = recorded.pop()
            if option is not None and option != value:
                raise ValueError(f"{OPTIONS[name]} {option} contradicts the checkpoint, which records "
                                 f"{name} = {value}")
            module.settings[name] = value
        elif option is not None:
            module.settings[name] = option
        else:
            module.settings[name] = default
            module.assumed[name] = default
        allowed = DISCRETIZATIONS if name == "disc" else TRANSFORMS
        if module.settings[name] not in allowed:
            raise ValueError(f"{name} = {module.settings[name]!r} is not supported; "
                             f"{OPTIONS[name]} takes {', '.join(allowed)}")
