"""A restricted pickle machine: rebuilds plain data and nothing else.

Python's own unpickler calls whatever the stream names, and builds nested containers
without a depth bound (a two-megabyte stream of nested tuples used as a dict key crashes
the interpreter).  This machine interprets the opcodes that :func:`pickletools.genops`
decodes, itself:

* a global (``GLOBAL``, ``STACK_GLOBAL``) is looked up in the caller's table of
  stand-ins; any other name is refused as soon as it is read;
* ``REDUCE``, ``NEWOBJ`` and ``BUILD`` apply only to stand-ins (:class:`Callable`,
  :class:`Record`, :class:`Instance`); persistent ids go to the caller's function;
* each container records its nesting depth when built or grown; past the bound it is
  refused, so no later recursion (hashing a tuple, comparing, walking) is deep;
* dict keys and set items are strings, bytes, bools, None or integers below 2**61 in
  magnitude (distinct or randomised hashes: no stream makes insertion quadratic).

Anything malformed raises :class:`PickleRefused` (a ``ValueError``) with one line.
"""
from __future__ import annotations

import io
import pickletools
from collections.abc import Callable as _Fn
from dataclasses import dataclass, field
from typing import Any

#: integer keys must hash without collisions (hash(n) = n for |n| < 2**61 - 1, n != -1)
_KEY_INT_BOUND = 2 ** 61 - 2


class PickleRefused(ValueError):
    """The stream asks for something this machine does not do, or is malformed."""


@dataclass(frozen=True)
class Callable:
    """A stand-in for a global that the stream may call (``REDUCE``) or instantiate
    (``NEWOBJ``): ``fn`` gets the positional arguments, all plain data."""

    name: str
    fn: _Fn[..., Any]


@dataclass(frozen=True)
class ClassName:
    """A class that the stream may name as a value (``typing.Any``, ``builtins.dict``),
    kept as its dotted name; it cannot be called."""

    name: str


class Record(dict):
    """A dict-like object rebuilt from the stream (an ``OrderedDict``, a dict subclass).

    ``BUILD`` stores its state in :attr:`state`, never as attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.state: Any = None


class Instance:
    """An object of an allowed class, rebuilt as data only: the class's dotted name and
    the state that ``BUILD`` gives it (never as attributes, never through its code)."""

    def __init__(self, cls_name: str) -> None:
        self.cls_name = cls_name
        self.state: Any = None


@dataclass
class _Machine:
    globals_table: dict[tuple[str, str], Any]
    persistent_load: _Fn[[Any], Any]
    max_depth: int
    stack: list = field(default_factory=list)
    marks: list = field(default_factory=list)
    memo: dict = field(default_factory=dict)
    depth: dict = field(default_factory=dict)
    pins: list = field(default_factory=list)

    # -- depth bookkeeping -------------------------------------------------------
    def d(self, obj: Any) -> int:
        return self.depth.get(id(obj), 0)

    def made(self, obj: Any, children: Any) -> Any:
        """Record a new container of the given children and its depth."""
        k = 1 + max((self.d(c) for c in children), default=0)
        self.check_depth(k)
        self.depth[id(obj)] = k
        self.pins.append(obj)
        return obj

    def grew(self, obj: Any, child: Any) -> None:
        k = max(self.d(obj), 1 + self.d(child))
        self.check_depth(k)
        self.depth[id(obj)] = k

    def check_depth(self, k: int) -> None:
        if k > self.max_depth:
            raise PickleRefused(f"containers nested deeper than {self.max_depth}")

    # -- stack ---------------------------------------------------------------------
    def pop(self) -> Any:
        if not self.stack or (self.marks and len(self.stack) <= self.marks[-1]):
            raise PickleRefused("malformed pickle: stack underflow")
        return self.stack.pop()

    def top(self) -> Any:
        if not self.stack:
            raise PickleRefused("malformed pickle: empty stack")
        return self.stack[-1]

    def pop_mark(self) -> list:
        if not self.marks:
            raise PickleRefused("malformed pickle: no mark")
        k = self.marks.pop()
        items = self.stack[k:]
        del self.stack[k:]
        return items

    # -- opcodes -------------------------------------------------------------------
    def run(self, data: bytes) -> Any:
        try:
            for op, arg, _pos in pickletools.genops(io.BytesIO(data)):
                if op.name == "STOP":
                    result = self.pop()
                    if self.stack or self.marks:
                        raise PickleRefused("malformed pickle: items left on the stack")
                    return result
                handler = _HANDLERS.get(op.name)
                if handler is None:
                    raise PickleRefused(f"pickle opcode {op.name} is not allowed")
                handler(self, arg)
        except PickleRefused:
            raise
        except (ValueError, TypeError, KeyError, IndexError, OverflowError,
                UnicodeDecodeError, AssertionError, RecursionError) as e:
            raise PickleRefused(f"malformed pickle ({type(e).__name__}: {e})") from None
        raise PickleRefused("malformed pickle: no STOP opcode")


def plain_key(k: Any) -> Any:
    """``k`` if it may be a dict key or set item (its hash is distinct or randomised)."""
    if k is None or isinstance(k, (str, bytes, bool)):
        return k
    if isinstance(k, int) and -_KEY_INT_BOUND <= k <= _KEY_INT_BOUND:
        return k
    raise PickleRefused(f"unsupported dict key or set item of type {type(k).__name__}")


def _push(m: _Machine, v: Any) -> None:
    m.stack.append(v)


def _const(value: Any) -> _Fn[[_Machine, Any], None]:
    return lambda m, _arg: _push(m, value)


def _arg(m: _Machine, arg: Any) -> None:
    _push(m, arg)


def _bytes(m: _Machine, arg: Any) -> None:
    _push(m, bytes(arg))


def _py2_string(m: _Machine, arg: Any) -> None:
    # Python 2 str: read as ASCII text, as the standard unpickler does by default
    _push(m, arg.encode("latin-1").decode("ascii") if isinstance(arg, str) else arg.decode("ascii"))


def _new_container(kind: type) -> _Fn[[_Machine, Any], None]:
    return lambda m, _arg: _push(m, m.made(kind(), ()))


def _tuple_n(n: int) -> _Fn[[_Machine, Any], None]:
    def h(m: _Machine, _arg: Any) -> None:
        items = [m.pop() for _ in range(n)][::-1]
        t = tuple(items)
        _push(m, m.made(t, items) if n else t)
    return h


def _from_mark(kind: type) -> _Fn[[_Machine, Any], None]:
    def h(m: _Machine, _arg: Any) -> None:
        items = m.pop_mark()
        _push(m, m.made(kind(items), items))
    return h


def _dict(m: _Machine, _arg: Any) -> None:
    items = m.pop_mark()
    if len(items) % 2:
        raise PickleRefused("malformed pickle: odd number of dict items")
    d = m.made({}, ())
    _set_items(m, d, items)
    _push(m, d)


def _set_items(m: _Machine, d: Any, items: list) -> None:
    if not isinstance(d, dict):
        raise PickleRefused(f"SETITEMS on a {type(d).__name__}")
    for i in range(0, len(items), 2):
        k, v = plain_key(items[i]), items[i + 1]
        d[k] = v
        m.grew(d, k)
        m.grew(d, v)


def _setitem(m: _Machine, _arg: Any) -> None:
    v = m.pop()
    k = m.pop()
    _set_items(m, m.top(), [k, v])


def _setitems(m: _Machine, _arg: Any) -> None:
    items = m.pop_mark()
    if len(items) % 2:
        raise PickleRefused("malformed pickle: odd number of dict items")
    _set_items(m, m.top(), items)


def _append_items(m: _Machine, target: Any, items: list) -> None:
    if not isinstance(target, list):
        raise PickleRefused(f"APPENDS on a {type(target).__name__}")
    for v in items:
        target.append(v)
        m.grew(target, v)


def _append(m: _Machine, _arg: Any) -> None:
    v = m.pop()
    _append_items(m, m.top(), [v])


def _appends(m: _Machine, _arg: Any) -> None:
    items = m.pop_mark()
    _append_items(m, m.top(), items)


def _additems(m: _Machine, _arg: Any) -> None:
    items = m.pop_mark()
    s = m.top()
    if not isinstance(s, set):
        raise PickleRefused(f"ADDITEMS on a {type(s).__name__}")
    for v in items:
        s.add(plain_key(v))
        m.grew(s, v)


def _frozenset(m: _Machine, _arg: Any) -> None:
    items = [plain_key(v) for v in m.pop_mark()]
    _push(m, m.made(frozenset(items), items))


def _pop(m: _Machine, _arg: Any) -> None:
    if m.marks and len(m.stack) == m.marks[-1]:
        m.marks.pop()  # POP of a mark, as the standard unpickler allows
    else:
        m.pop()


def _dup(m: _Machine, _arg: Any) -> None:
    _push(m, m.top())


def _mark(m: _Machine, _arg: Any) -> None:
    m.marks.append(len(m.stack))


def _pop_mark(m: _Machine, _arg: Any) -> None:
    m.pop_mark()


def _get(m: _Machine, arg: Any) -> None:
    if arg not in m.memo:
        raise PickleRefused(f"malformed pickle: memo key {arg!r} not set")
    _push(m, m.memo[arg])


def _put(m: _Machine, arg: Any) -> None:
    m.memo[arg] = m.top()


def _memoize(m: _Machine, _arg: Any) -> None:
    m.memo[len(m.memo)] = m.top()


def _lookup(m: _Machine, module: Any, name: Any) -> None:
    if not isinstance(module, str) or not isinstance(name, str):
        raise PickleRefused("malformed pickle: global names must be strings")
    try:
        _push(m, m.globals_table[(module, name)])
    except KeyError:
        raise PickleRefused(f"refuses to load global '{module}.{name}'"
                            " (only tensors, storages and plain containers are rebuilt)") from None


def _global(m: _Machine, arg: Any) -> None:
    module, _, name = arg.partition(" ")
    _lookup(m, module, name)


def _stack_global(m: _Machine, _arg: Any) -> None:
    name = m.pop()
    module = m.pop()
    _lookup(m, module, name)


def _call(fn: Any, args: Any, what: str) -> Any:
    if not isinstance(fn, Callable):
        raise PickleRefused(f"malformed pickle: {what} on a {type(fn).__name__}")
    if not isinstance(args, tuple):
        raise PickleRefused(f"malformed pickle: {what} arguments are not a tuple")
    return fn.fn(*args)


def _result(m: _Machine, value: Any) -> None:
    if isinstance(value, (list, tuple, dict, set, frozenset)):
        value = m.made(value, value.values() if isinstance(value, dict) else value)
    _push(m, value)


def _reduce(m: _Machine, _arg: Any) -> None:
    args = m.pop()
    fn = m.pop()
    _result(m, _call(fn, args, "REDUCE"))


def _newobj(m: _Machine, _arg: Any) -> None:
    args = m.pop()
    cls = m.pop()
    _result(m, _call(cls, args, "NEWOBJ"))


def _newobj_ex(m: _Machine, _arg: Any) -> None:
    kwargs = m.pop()
    args = m.pop()
    cls = m.pop()
    if kwargs:
        raise PickleRefused("NEWOBJ_EX with keyword arguments is not allowed")
    _result(m, _call(cls, args, "NEWOBJ_EX"))


def _build(m: _Machine, _arg: Any) -> None:
    state = m.pop()
    inst = m.top()
    if not isinstance(inst, (Record, Instance)):
        raise PickleRefused(f"BUILD on a {type(inst).__name__} is not allowed")
    inst.state = state
    m.grew(inst, state)


def _persid(m: _Machine, arg: Any) -> None:
    _push(m, m.persistent_load(arg))


def _binpersid(m: _Machine, _arg: Any) -> None:
    _push(m, m.persistent_load(m.pop()))


_HANDLERS: dict[str, _Fn[[_Machine, Any], None]] = {
    "PROTO": lambda m, a: None, "FRAME": lambda m, a: None,
    "NONE": _const(None), "NEWTRUE": _const(True), "NEWFALSE": _const(False),
    # INT: genops gives True/False for the protocol-0 forms 00 and 01
    "INT": _arg, "BININT": _arg, "BININT1": _arg, "BININT2": _arg,
    "LONG": _arg, "LONG1": _arg, "LONG4": _arg, "FLOAT": _arg, "BINFLOAT": _arg,
    "STRING": _py2_string, "BINSTRING": _py2_string, "SHORT_BINSTRING": _py2_string,
    "BINBYTES": _bytes, "SHORT_BINBYTES": _bytes, "BINBYTES8": _bytes, "BYTEARRAY8": _bytes,
    "UNICODE": _arg, "SHORT_BINUNICODE": _arg, "BINUNICODE": _arg, "BINUNICODE8": _arg,
    "EMPTY_LIST": _new_container(list), "APPEND": _append, "APPENDS": _appends,
    "LIST": _from_mark(list),
    "EMPTY_TUPLE": _tuple_n(0), "TUPLE1": _tuple_n(1), "TUPLE2": _tuple_n(2),
    "TUPLE3": _tuple_n(3), "TUPLE": _from_mark(tuple),
    "EMPTY_DICT": _new_container(dict), "DICT": _dict, "SETITEM": _setitem,
    "SETITEMS": _setitems, "EMPTY_SET": _new_container(set), "ADDITEMS": _additems,
    "FROZENSET": _frozenset, "POP": _pop, "DUP": _dup, "MARK": _mark, "POP_MARK": _pop_mark,
    "GET": _get, "BINGET": _get, "LONG_BINGET": _get,
    "PUT": _put, "BINPUT": _put, "LONG_BINPUT": _put, "MEMOIZE": _memoize,
    "GLOBAL": _global, "STACK_GLOBAL": _stack_global, "REDUCE": _reduce, "NEWOBJ": _newobj,
    "NEWOBJ_EX": _newobj_ex, "BUILD": _build, "PERSID": _persid, "BINPERSID": _binpersid,
}


def restricted_load(data: bytes, globals_table: dict[tuple[str, str], Any],
                    persistent_load: _Fn[[Any], Any], *, max_depth: int = 64) -> Any:
    """Rebuild the object of a pickle stream.

    ``globals_table`` maps ``(module, name)`` to a :class:`Callable` or any inert value
    (a storage type, a dtype); ``persistent_load`` turns a persistent id (plain data)
    into an object.  Containers nest at most ``max_depth`` deep.  Raises
    :class:`PickleRefused` on a forbidden global or opcode and on malformed data.
    """
    return _Machine(globals_table, persistent_load, max_depth).run(data)


__all__ = ["Callable", "ClassName", "Instance", "PickleRefused", "Record", "plain_key",
           "restricted_load"]
