"""The error tree drawn in ``shiyi.errors``' docstring is the tree the classes form, every
user-facing error sits in a group, and the worker's signals stay outside that tree."""

from __future__ import annotations

import inspect
import re

import pytest

import shiyi.errors as errors
from shiyi.errors import (
    ClientError,
    JobDeferred,
    ModelNotReady,
    ShiyiError,
    WorkerSignal,
)

GROUPS = {
    "ConfigError",
    "ModelError",
    "ToolError",
    "StorageError",
    "MemoryOperationError",
    "RequestError",
    "ClientError",
}
_NODE = re.compile(r"^(?P<indent>[ │├└─]*?)(?:[├└]── )?(?P<name>[A-Z]\w+)\b")


def drawn_parents() -> dict[str, str | None]:
    """Each class named in the docstring's trees, with the class drawn above it."""
    parents: dict[str, str | None] = {}
    stack: list[tuple[int, str]] = []
    for line in (errors.__doc__ or "").splitlines():
        if not line.startswith("    ") or not (match := _NODE.match(line[4:])):
            continue
        text = line[4:]
        depth = text.index(match["name"])
        while stack and stack[-1][0] >= depth:
            stack.pop()
        parents[match["name"]] = stack[-1][1] if stack else None
        stack.append((depth, match["name"]))
    return parents


def defined_classes() -> dict[str, type[BaseException]]:
    return {
        name: cls
        for name, cls in vars(errors).items()
        if inspect.isclass(cls)
        and issubclass(cls, BaseException)
        and cls.__module__ == errors.__name__
    }


def test_the_drawn_trees_are_the_class_tree() -> None:
    drawn = drawn_parents()
    classes = defined_classes()
    assert set(drawn) == set(classes), "draw every class of errors.py, and only those"
    for name, parent in drawn.items():
        own = classes[name]
        bases = [b.__name__ for b in own.__bases__ if b.__module__ == errors.__name__]
        if parent is None:
            assert not bases, f"{name} is drawn as a root but derives from {bases}"
        else:
            assert bases[:1] == [parent], f"{name} is drawn under {parent}, derives from {bases}"


def test_every_user_facing_error_sits_in_a_group() -> None:
    direct = {
        name
        for name, cls in defined_classes().items()
        if cls.__bases__[0] is ShiyiError or ShiyiError in cls.__bases__
    }
    assert direct == GROUPS


@pytest.mark.parametrize("signal", [JobDeferred("later"), ModelNotReady("not yet")])
def test_the_workers_signals_are_not_errors_a_user_meets(signal: WorkerSignal) -> None:
    assert not isinstance(signal, ShiyiError)
    with pytest.raises(WorkerSignal):
        _handled_as_users_handle(signal)


def _handled_as_users_handle(error: BaseException) -> None:
    try:
        raise error
    except ShiyiError:  # what a CLI or route catches must not swallow control flow
        pytest.fail("a ShiyiError handler caught a worker signal")


def test_one_name_per_wire_concept() -> None:
    """No client twin of a server class: a class name says its concept once."""
    names = set(defined_classes())
    twins = {n for n in names if n.endswith("Error") and n.removesuffix("Error") in names}
    assert twins == set()
    assert all(cls.code for cls in ClientError.__subclasses__())
