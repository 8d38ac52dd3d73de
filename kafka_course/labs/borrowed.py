"""Does a learner's function compute the answer itself, or call a library that already does?

Lab 02 asks for Kafka's partitioner written by hand. Notebook 02 imported the course's
own ``kafka_course.partitioner`` minutes earlier, and every Kafka client ships one
(kafka-python's ``murmur2``, ``confluent_kafka.murmur2``, aiokafka's), so an answer that
simply calls one of them would pass any comparison of results. ``borrowed(fn)`` looks
at the function instead: its module, the global names and imports its code reaches
(``__code__.co_names``, nested functions included), its closure, and, one level at a
time, the learner's own helpers it calls. It returns what was borrowed, with the line
of source that does it when the source is available.
"""

from __future__ import annotations

import dis
import functools
import inspect
import types
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..i18n import _

# Packages that already implement Kafka's partitioner (or a MurmurHash2).
LIBRARIES = ("kafka_course", "minikafka", "kafka", "confluent_kafka", "aiokafka", "mmh3", "murmurhash", "pykafka")


@dataclass(frozen=True)
class Borrowed:
    function: str  # the learner's function that reaches out
    target: str  # what it reaches: a module or a function of a library
    line: str | None  # the line of source that does it, when the source is available
    itself: bool = False  # the function handed in is the library's own

    def __str__(self) -> str:
        if self.itself:
            return _("your {function} is {target}, imported rather than written").format(
                function=self.function, target=self.target)
        where = f" (`{self.line}`)" if self.line else ""
        return _("your {function}() calls {target}{where}").format(function=self.function, target=self.target,
                                                                   where=where)


def library_of(name: str | None) -> str | None:
    """The library a dotted module name belongs to, if it is one of ``LIBRARIES``."""
    top = (name or "").split(".")[0]
    return top if top in LIBRARIES else None


def borrowed(fn: Any, *, depth: int = 3) -> Borrowed | None:
    """What ``fn`` (or a helper of the learner's it calls) takes from a partitioner library."""
    return _search(fn, depth, set(), _name(fn))


def _search(fn: Any, depth: int, seen: set[int], caller: str) -> Borrowed | None:
    fn = _unwrap(fn)
    if id(fn) in seen:
        return None
    seen.add(id(fn))
    if library_of(getattr(fn, "__module__", None)):
        return Borrowed(caller, f"{fn.__module__}.{getattr(fn, '__qualname__', _name(fn))}", None,
                        itself=caller == _name(fn))
    code = getattr(fn, "__code__", None)
    if not isinstance(code, types.CodeType):
        return None
    for name, target in _reached(fn, code):
        found = _judge(name, target, fn, depth, seen)
        if found:
            return found
    return None


def _judge(name: str, target: Any, fn: Any, depth: int, seen: set[int]) -> Borrowed | None:
    """Is ``target`` (reached from ``fn`` as ``name``) a library, or a helper that uses one?"""
    if isinstance(target, str):  # an import written inside the function
        return Borrowed(_name(fn), target, _line(fn, name.split(".")[0])) if library_of(target) else None
    if isinstance(target, types.ModuleType):
        return Borrowed(_name(fn), target.__name__, _line(fn, name)) if library_of(target.__name__) else None
    if callable(target) and library_of(getattr(_unwrap(target), "__module__", None)):
        inner = _unwrap(target)
        return Borrowed(_name(fn), f"{inner.__module__}.{getattr(inner, '__qualname__', name)}", _line(fn, name))
    if depth > 0 and isinstance(_unwrap(target), types.FunctionType):  # the learner's own helper
        return _search(target, depth - 1, seen, _name(target))
    return None


def _reached(fn: Any, code: types.CodeType) -> Iterator[tuple[str, Any]]:
    """(name, object) for every global, closure variable and import the code can reach."""
    scope = getattr(fn, "__globals__", {})
    for c in _codes(code):
        instructions = list(dis.get_instructions(c))
        for i, ins in enumerate(instructions):
            if ins.opname == "IMPORT_NAME":  # ``import kafka.partitioner``, ``from kafka import ...``
                yield ins.argval, ins.argval
            elif ins.opname in ("LOAD_GLOBAL", "LOAD_NAME") and ins.argval in scope:
                target = scope[ins.argval]
                if isinstance(target, types.ModuleType) and library_of(target.__name__):
                    target = ".".join([target.__name__, *_attributes(instructions[i + 1:])])
                yield ins.argval, target
            elif ins.opname == "LOAD_CONST" and isinstance(ins.argval, str) and _module_like(ins.argval):
                yield ins.argval, ins.argval  # importlib.import_module("kafka.partitioner")
    for name, cell in zip(code.co_freevars, getattr(fn, "__closure__", None) or ()):
        try:
            yield name, cell.cell_contents
        except ValueError:  # an empty cell
            continue


def _attributes(following: list[dis.Instruction]) -> Iterator[str]:
    """The attribute names read right after a global: ``aiokafka.partitioner.murmur2``."""
    for ins in following:
        if ins.opname not in ("LOAD_ATTR", "LOAD_METHOD"):
            return
        yield ins.argval


def _module_like(text: str) -> bool:
    return bool(library_of(text)) and all(part.isidentifier() for part in text.split("."))


def _codes(code: types.CodeType) -> Iterator[types.CodeType]:
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _codes(const)


def _unwrap(fn: Any) -> Any:
    while isinstance(fn, functools.partial):
        fn = fn.func
    if isinstance(fn, types.MethodType):
        fn = fn.__func__
    return inspect.unwrap(fn) if callable(fn) else fn


def _name(fn: Any) -> str:
    return getattr(_unwrap(fn), "__name__", type(fn).__name__)


def _line(fn: Any, name: str) -> str | None:
    """The first line of ``fn``'s source that mentions ``name`` (None without source)."""
    try:
        lines = inspect.getsource(_unwrap(fn)).splitlines()
    except (OSError, TypeError):
        return None
    return next((line.strip() for line in lines if name in line and not line.lstrip().startswith("#")), None)
