"""The interfaces call memory's operations and functions; none reaches into a memory's
store, job queue or worker (those are memory's to use: its rules live beside them)."""

from __future__ import annotations

import ast
from pathlib import Path

import shiyi.interfaces

INTERFACES = Path(shiyi.interfaces.__file__).parent
INNARDS = {"store", "jobs", "worker"}


def reaches(tree: ast.AST) -> list[tuple[int, str]]:
    """``<something memory-ish>.store/.jobs/.worker``: an attribute chain through a name
    or attribute called ``memory`` (``memory.store``, ``service.memory.jobs``...)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in INNARDS:
            base = node.value
            name = base.id if isinstance(base, ast.Name) else getattr(base, "attr", "")
            chain = ast.unparse(node)
            if "settings" in chain:  # settings.memory.store: the configured backend's name
                continue
            if "memory" in name.lower() or name == "view":
                found.append((node.lineno, chain))
    return found


def test_no_interface_reaches_a_memorys_store_queue_or_worker() -> None:
    wrong = [
        f"{path.relative_to(INTERFACES)}:{line}: {code}"
        for path in sorted(INTERFACES.rglob("*.py"))
        for line, code in reaches(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert not wrong, "call memory's operations (shiyi.memory.operations) instead:\n" + "\n".join(
        wrong
    )


def test_the_check_sees_each_way_of_reaching_in() -> None:
    code = (
        "memory.store.x()\nself.memory.jobs.y()\nservice.memory.worker.wake()\n"
        "kb.store.z()\nsettings.memory.store == 'embedded'\n"
    )
    assert [line for line, _ in reaches(ast.parse(code))] == [1, 2, 3]
