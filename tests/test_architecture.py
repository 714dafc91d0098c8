"""The import graph keeps the layer order docs/architecture.md draws, between packages and
between the folders inside memory/.

Every ``import shiyi...`` in the source counts, including the lazy ones inside functions: a
lazy import still ties the two modules together.  Known exceptions are listed by name, so
a new one fails here and a fixed one can be crossed off.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import shiyi

SOURCE = Path(shiyi.__file__).parent

LAYERS: list[tuple[str, ...]] = [
    ("__main__",),
    ("interfaces", "compat"),
    ("app",),
    ("client",),
    ("agent",),
    ("context", "tools"),
    ("scripts",),
    ("memory", "knowledge", "repomap"),
    ("sessions",),
    ("index",),
    ("llm",),
    ("config",),
    ("api",),
    ("errors", "events", "gitignore", "textfiles"),
]
"""Top to bottom: a package imports only from the layers below its own."""

MEMORY_FOLDERS: list[tuple[str, ...]] = [
    ("operations",),
    ("transfer",),
    ("kuzu", "postgres"),
    ("lifecycle",),
    ("recall", "intake"),
    ("text",),
]
"""The folders inside memory/, top to bottom: a folder imports memory's core and the folders
below its own row, never a neighbour in its row (recall and the write path know nothing of each
other; neither backend of the other).  The operations (the one door every interface calls) sit
on top: they compose the facade.  Transfer sits below them because an import goes through the
write path and the copy to PostgreSQL opens both backends; the backends sit above the lifecycle
and the write path because their repair tool (``kuzu/doctor.py``) re-queues through them.
``text`` (what every job reads from a text without a model) sits at the bottom.  Nothing in a
folder imports a backend: stores are reached through :mod:`shiyi.memory.protocol`."""

MEMORY_CORE = frozenset({"models", "protocol", "scopes", "jobs", "lock"})
"""memory/'s root modules a folder may import: the records, the store's seams, the job queue
and the owner lock.  They import nothing else of memory."""

MEMORY_FACADE = frozenset({"service", "backends", "work", "settle"})
"""The rest of memory/'s root: the ``Memory`` facade, the backend it opens and the owning
process's background work.  They compose the folders; only the top row (the operations)
imports them, and they never import the operations."""

KNOWN_SIDEWAYS = {}
KNOWN_CYCLES: set[frozenset[str]] = set()


def module_name(path: Path) -> str:
    parts = ("shiyi", *path.relative_to(SOURCE).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> set[str]:
    """Every shiyi module or name ``path`` imports, at any depth of the file."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
    return {name for name in found if name.startswith("shiyi.")}


def module_graph() -> dict[str, set[str]]:
    files = {module_name(path): path for path in SOURCE.rglob("*.py")}
    graph: dict[str, set[str]] = defaultdict(set)
    for module, path in files.items():
        graph[module] |= {name for name in imports_of(path) if name in files} - {module}
    return graph


def package_of(module: str) -> str:
    return module.split(".")[1] if module.count(".") else "shiyi"


def layer_of(package: str) -> int:
    return next(i for i, layer in enumerate(LAYERS) if package in layer)


def test_every_package_has_a_layer() -> None:
    packages = {package_of(m) for m in module_graph()} - {"shiyi"}
    placed = {package for layer in LAYERS for package in layer}
    assert packages <= placed, f"place in LAYERS and docs/architecture.md: {packages - placed}"


def test_packages_import_only_downward() -> None:
    wrong: set[tuple[str, str, str]] = set()
    for module, targets in module_graph().items():
        source = package_of(module)
        if source == "shiyi":
            continue
        for target in targets:
            destination = package_of(target)
            if destination in (source, "shiyi") or (source, destination) in KNOWN_SIDEWAYS:
                continue
            if layer_of(destination) <= layer_of(source):
                wrong.add((module, "imports", target))
    assert not wrong, sorted(wrong)


def test_no_new_import_cycles() -> None:
    graph = module_graph()
    cycles = {frozenset(c) for c in strongly_connected(graph) if len(c) > 1}
    # A package's __init__ re-exporting its own submodules is not a cycle worth reporting.
    cycles = {c for c in cycles if not _only_package_and_children(c)}
    assert cycles <= KNOWN_CYCLES, [sorted(c) for c in cycles - KNOWN_CYCLES]


def test_the_index_toolkit_knows_nothing_of_memory_or_documents() -> None:
    for module, targets in module_graph().items():
        if package_of(module) == "index":
            above = {
                t for t in targets if package_of(t) not in ("index", "errors", "llm", "config")
            }
            assert not above, (module, sorted(above))


def memory_folder(module: str) -> str | None:
    """The folder of memory/ that ``module`` lives in, or None for memory's root modules."""
    parts = module.split(".")
    if parts[:2] != ["shiyi", "memory"] or len(parts) < 3:
        return None
    return parts[2] if (SOURCE / "memory" / parts[2]).is_dir() else None


def memory_row(folder: str) -> int:
    return next(i for i, row in enumerate(MEMORY_FOLDERS) if folder in row)


def test_every_memory_folder_has_a_row() -> None:
    folders = {p.parent.name for p in (SOURCE / "memory").glob("*/__init__.py")}
    placed = {folder for row in MEMORY_FOLDERS for folder in row}
    assert folders == placed, f"place in MEMORY_FOLDERS: {folders ^ placed}"
    roots = {p.stem for p in (SOURCE / "memory").glob("*.py")} - {"__init__"}
    placed_roots = MEMORY_CORE | MEMORY_FACADE
    assert roots == placed_roots, f"core, facade, or into a folder: {roots ^ placed_roots}"


def test_memory_core_imports_only_the_core() -> None:
    wrong = set()
    for module, targets in module_graph().items():
        if module.removeprefix("shiyi.memory.") not in MEMORY_CORE:
            continue
        for target in targets:
            name = target.removeprefix("shiyi.memory.")
            if target.startswith("shiyi.memory.") and name not in MEMORY_CORE:
                wrong.add((module, "imports", target))
    assert not wrong, sorted(wrong)


def test_memory_folders_import_the_core_and_the_folders_below() -> None:
    wrong = set()
    for module, targets in module_graph().items():
        source = memory_folder(module)
        if source is None:
            continue
        for target in targets:
            if not target.startswith("shiyi.memory."):
                continue  # other packages: test_packages_import_only_downward
            destination = memory_folder(target)
            if destination is None:
                name = target.removeprefix("shiyi.memory.")
                facade_allowed = memory_row(source) == 0 and name in MEMORY_FACADE
                if name not in MEMORY_CORE and not facade_allowed:
                    wrong.add((module, "imports memory's root beyond the core:", target))
            elif destination != source and memory_row(destination) <= memory_row(source):
                wrong.add((module, "imports a folder not below its own:", target))
    assert not wrong, sorted(wrong)


def test_memory_facade_never_imports_the_operations_above_it() -> None:
    wrong = set()
    for module, targets in module_graph().items():
        if module.removeprefix("shiyi.memory.") not in MEMORY_FACADE:
            continue
        wrong |= {(module, t) for t in targets if memory_folder(t) == MEMORY_FOLDERS[0][0]}
    assert not wrong, sorted(wrong)


LLM_SIDES = ("shiyi.llm.local", "shiyi.llm.openai")
"""The embedded runtime and the OpenAI-compatible client: two ways to one ``ChatModel``."""
LLM_SIDE_USERS = {"shiyi.llm.factory", "shiyi.llm.catalog"}
"""The shared modules of ``llm/`` that reach into a side (building a model, the packaged
default's path); every other one serves both and knows neither."""


def _llm_side(module: str) -> str | None:
    return next((s for s in LLM_SIDES if module == s or module.startswith(s + ".")), None)


def test_the_llm_sides_know_only_the_shared_llm_modules() -> None:
    graph = module_graph()
    crossing = set()
    for module, targets in graph.items():
        if package_of(module) != "llm":
            continue
        side = _llm_side(module)
        for target in targets:
            other = _llm_side(target)
            if other is None or other == side:
                continue
            if side is not None or module not in LLM_SIDE_USERS:
                crossing.add((module, "imports", target))
    assert not crossing, sorted(crossing)


def _only_package_and_children(cycle: frozenset[str]) -> bool:
    roots = [m for m in cycle if all(o == m or o.startswith(m + ".") for o in cycle)]
    return bool(roots)


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative (the graph has ~200 modules)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    for start in list(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                components.append(component)
    return components


BUILTIN_ERRORS = {"Exception", "RuntimeError", "ValueError", "OSError", "LookupError"}
"""An error class built on these outside ``errors.py`` would be outside the one hierarchy."""


def test_every_shiyi_error_is_defined_in_errors_py() -> None:
    tree = ast.parse((SOURCE / "errors.py").read_text(encoding="utf-8"))
    ours = {node.name for node in tree.body if isinstance(node, ast.ClassDef)}
    elsewhere = []
    for path in SOURCE.rglob("*.py"):
        if path.name == "errors.py" and path.parent == SOURCE:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ClassDef):
                continue
            bases = {b.id for b in node.bases if isinstance(b, ast.Name)}
            # A private signal on a builtin exception never leaves its module; a class on
            # one of ours reaches callers, so it belongs in the tree even when private.
            builtin = set() if node.name.startswith("_") else BUILTIN_ERRORS
            if bases & (ours | builtin):
                elsewhere.append(f"{module_name(path)}.{node.name}")
    assert not elsewhere, f"move these to shiyi/errors.py (and its tree): {elsewhere}"


def test_only_the_composition_root_builds_chat_models() -> None:
    """Models are built once, by :mod:`shiyi.app`'s one rule, and handed down."""
    builders = {m for m, targets in module_graph().items() if "shiyi.llm.factory" in targets}
    assert builders == {"shiyi.app"}


def test_the_client_imports_no_storage_module() -> None:
    """``shiyi.client`` speaks the wire protocol: no store, index or model comes with it."""
    graph = module_graph()
    seen: set[str] = set()
    todo = [m for m in graph if m == "shiyi.client" or m.startswith("shiyi.client.")]
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo += graph.get(module, ())
    storage = ("memory", "sessions", "knowledge", "index", "llm", "agent", "repomap")
    assert not {m for m in seen if package_of(m) in storage}, sorted(seen)


def test_readme_draws_the_same_layer_order() -> None:
    readme = (SOURCE.parents[1] / "docs" / "architecture.md").read_text(encoding="utf-8")
    drawn = " ".join(readme.split("Dependencies point downward, in this order:")[1].split())
    order = drawn.split(". ")[0]
    layers = [tuple(group.strip().split("/")) for group in order.split("→")]
    assert layers == [layer for layer in LAYERS if layer != ("__main__",)]
