"""OmegaConf configurations inside a pickle, read as plain data.

A Lightning checkpoint of a Hydra-configured run (state-spaces/s4's training script is
one) stores its ``hyper_parameters`` as an OmegaConf ``DictConfig`` and names the class
under ``hparams_type``.  Pickled, a ``DictConfig`` is ``NEWOBJ`` of the class, then
``BUILD`` with a state dict: ``_content`` (key -> node or nested container), ``_metadata``
(``ContainerMetadata``: types such as ``typing.Any``, ``builtins.dict`` and a
``collections.defaultdict``), ``_parent`` (a back reference) and ``_flags_cache``.  A
``ListConfig`` holds a list in ``_content``; a value node (``AnyNode``, ``StringNode``,
...) holds its value in ``_val``.

Here every such class is an inert :class:`~.read_pickle.Instance` (its name and state);
:func:`omega_content` gives the content that :func:`~.reader.plain` continues with.
Interpolations such as ``"${model.d_model}"`` and the missing value ``"???"`` stay the
strings they are stored as; an enum node's value names its enum class and is refused.
"""
from __future__ import annotations

from typing import Any

from .read_pickle import Callable, ClassName, Instance, PickleRefused, Record

_CONTAINERS = ("omegaconf.dictconfig.DictConfig", "omegaconf.listconfig.ListConfig")
_NODES = ("AnyNode", "StringNode", "IntegerNode", "FloatNode", "BooleanNode", "BytesNode",
          "PathNode")
_METADATA = ("omegaconf.base.ContainerMetadata", "omegaconf.base.Metadata")
_TYPES = ("dict", "list", "tuple", "int", "long", "float", "str", "bool", "bytes")


def _instance(name: str) -> Callable:
    def new(*args: Any) -> Instance:
        if args:
            raise PickleRefused(f"{name} built with arguments")
        return Instance(name)
    return Callable(name, new)


def _defaultdict(factory: Any = None) -> Record:
    if factory is not None and not isinstance(factory, ClassName):
        raise PickleRefused("collections.defaultdict of something other than a type")
    return Record()


def omegaconf_globals() -> dict[tuple[str, str], Any]:
    """The names an OmegaConf container's pickle uses, each mapped to an inert stand-in."""
    table: dict[tuple[str, str], Any] = {}
    for full in (*_CONTAINERS, *_METADATA, *(f"omegaconf.nodes.{n}" for n in _NODES)):
        module, _, name = full.rpartition(".")
        table[(module, name)] = _instance(full)
    for t in _TYPES:
        for module in ("builtins", "__builtin__"):
            table[(module, t)] = ClassName(f"builtins.{t}")
    table[("typing", "Any")] = ClassName("typing.Any")
    table[("collections", "defaultdict")] = Callable("collections.defaultdict", _defaultdict)
    return table


def omega_content(inst: Instance) -> Any:
    """What an OmegaConf object stands for: a container's ``_content`` (a dict or list
    of nodes, or None, or an interpolation string), a value node's ``_val``.  Raises
    ``ValueError`` for any other object."""
    state = inst.state if isinstance(inst.state, dict) else {}
    if inst.cls_name in _CONTAINERS:
        field = "_content"
    elif inst.cls_name.startswith("omegaconf.nodes."):
        field = "_val"
    else:
        raise ValueError(f"unexpected {inst.cls_name} object")
    if field not in state:
        raise ValueError(f"{inst.cls_name} without {field}")
    return state[field]


__all__ = ["omega_content", "omegaconf_globals"]
