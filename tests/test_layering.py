"""Dependencies point one way (DESIGN.md "Layering"), checked on the real import graph.

The graph is built from the source with ``ast``: one node per module under ``mfconnector/``
(a package is its ``__init__``), one edge per module it imports. Every import counts, at
module level, inside functions (the lazy imports that keep start-up cheap) and under
``if TYPE_CHECKING:`` (a type a module names is a dependency even when Python skips it at
run time). ``from package import name`` is an edge to ``package.name`` when that is a
module, else to ``package``. Relative imports are resolved. Not counted: the parent package
that Python imports first (``a.b.c`` imports ``a.b``), which would make every package
``__init__`` that re-exports its modules look like a cycle, and dynamic imports
(``importlib``), which the source does not use.

Two checks: (a) each edge obeys the table's ``may import`` column, and (b) the graph has no
cycle. Whatever breaks a rule today is listed in ``KNOWN_VIOLATIONS``, each with the issue
section that removes it; the test fails on a violation not listed and on a listed one that
no longer occurs, so the list can only shrink.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

import mfconnector

PACKAGE = Path(mfconnector.__file__).resolve().parent
ROOT = "mfconnector"

# --- the graph ---------------------------------------------------------------------------


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES: dict[str, Path] = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _absolute(module: str, path: Path, node: ast.ImportFrom) -> str:
    """The module a ``from ... import`` names, with relative levels resolved."""
    if node.level == 0:
        return node.module or ""
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    base = package[: len(package) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def imports_of(module: str, path: Path) -> set[str]:
    """Every name this module imports, at any depth of its syntax tree."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            target = _absolute(module, path, node)
            submodules = {f"{target}.{alias.name}" for alias in node.names}
            named = submodules & MODULES.keys()
            found.update(named)
            if len(named) < len(submodules):
                found.add(target)
    return found


def build_graph() -> dict[str, set[str]]:
    """Module → the mfconnector modules it imports (itself excluded)."""
    graph: dict[str, set[str]] = {}
    for module, path in MODULES.items():
        internal = {name for name in imports_of(module, path) if name.split(".")[0] == ROOT}
        unknown = internal - MODULES.keys()
        assert not unknown, f"{module} imports {sorted(unknown)}, which do not exist"
        graph[module] = internal - {module}
    return graph


def third_party_imports(module: str) -> set[str]:
    return {
        name.split(".")[0]
        for name in imports_of(module, MODULES[module])
        if name.split(".")[0] != ROOT
    }


GRAPH = build_graph()

# --- the table ---------------------------------------------------------------------------

CORE = "core"
MODEL = "mail model"
ACTIONS = "actions"
TOOLS = "tools"
BACKENDS = "backends"
AUTH_NET = "auth, net"
EMULATORS = "emulators"
ENTRY = "runtime and entry"

LAYER_OF: Mapping[str, str] = {
    # pure core: no trio, no httpx, no I/O
    "mfconnector": CORE,  # the version
    "mfconnector.limits": CORE,
    "mfconnector.errors": CORE,
    "mfconnector.framing": CORE,
    "mfconnector.jsonrpc": CORE,
    "mfconnector.jsoncost": CORE,
    "mfconnector.strictjson": CORE,
    "mfconnector.envflags": CORE,
    "mfconnector.strict_schema": CORE,  # jsonschema: pure, no I/O
    "mfconnector.protocol": CORE,
    "mfconnector.shaping": CORE,
    "mfconnector.elicitation": CORE,  # the confirmation form and requestState: envelopes
    "mfconnector.visible": CORE,
    "mfconnector.hidden_names": CORE,
    "mfconnector.textconv": CORE,
    "mfconnector.timezones": CORE,
    "mfconnector.paths": CORE,  # where files live; computes paths, opens none
    # the neutral mail model and the backend protocols (0.3)
    "mfconnector.mail": MODEL,
    # gates, state store, digests, outcomes, audit
    "mfconnector.writes": ACTIONS,
    # tool families, and the provider-neutral document extraction the read tools run
    "mfconnector.tools": TOOLS,
    "mfconnector.documents": TOOLS,
    # providers, and the MIME reader the IMAP and Gmail backends share
    "mfconnector.graph": BACKENDS,
    "mfconnector.imap": BACKENDS,
    "mfconnector.gmail": BACKENDS,
    "mfconnector.mime": BACKENDS,
    "mfconnector.auth": AUTH_NET,
    "mfconnector.net": AUTH_NET,
    # in-memory providers, and the demo documents both of them serve
    "mfconnector.emulator": EMULATORS,
    "mfconnector.gmail_emulator": EMULATORS,
    "mfconnector.demo_documents": EMULATORS,
    # runtime and entry: only these know how the pieces are wired
    "mfconnector.runtime": ENTRY,
    "mfconnector.server": ENTRY,
    "mfconnector.session": ENTRY,
    "mfconnector.asking": ENTRY,
    "mfconnector.progress": ENTRY,
    "mfconnector.stdio": ENTRY,
    "mfconnector.stdio_thread": ENTRY,
    "mfconnector.shutdown": ENTRY,
    "mfconnector.hosted": ENTRY,  # the HTTP adapter
    "mfconnector.entry": ENTRY,  # parser, wiring, serving
    "mfconnector.demo": ENTRY,  # wires the emulator in as the demo's Graph
    "mfconnector.tour": ENTRY,
    "mfconnector.cli": ENTRY,
    "mfconnector.__main__": ENTRY,
}
"""Each module's layer: the longest entry that is the module or one of its packages."""

BELOW_ENTRY = frozenset({CORE, MODEL, ACTIONS, TOOLS, BACKENDS, AUTH_NET, EMULATORS})
MAY_IMPORT: Mapping[str, frozenset[str]] = {
    CORE: frozenset({CORE}),
    MODEL: frozenset({CORE, MODEL}),
    ACTIONS: frozenset({CORE, MODEL, ACTIONS}),
    TOOLS: frozenset({CORE, MODEL, ACTIONS, TOOLS}),
    BACKENDS: frozenset({CORE, MODEL, BACKENDS, AUTH_NET}),
    AUTH_NET: frozenset({CORE, AUTH_NET}),
    EMULATORS: frozenset({EMULATORS}),
    ENTRY: BELOW_ENTRY | {ENTRY},
}
"""The table's ``may import`` column; a layer always sees itself (the core "downward
only": that is the no-cycle check)."""

AUTH_INTERFACE = "mfconnector.auth"
"""What a backend may see of ``auth``: the token-provider interface, never msal's side."""
SEPARATE_PACKAGES: tuple[frozenset[str], ...] = (
    frozenset({"mfconnector.graph", "mfconnector.imap", "mfconnector.gmail"}),
    frozenset({"mfconnector.emulator", "mfconnector.gmail_emulator"}),
)
"""Packages of one layer that never import each other: one backend knows nothing of
another, one emulator nothing of another."""
PURE_LAYERS = frozenset({CORE, MODEL})
IMPURE = frozenset({"trio", "httpx", "msal", "msal_extensions", "requests", "hypercorn", "anyio"})
"""What a pure layer never imports: an event loop, an HTTP stack, the sign-in library."""


def layer_of(module: str) -> str:
    parts = module.split(".")
    for end in range(len(parts), 0, -1):
        layer = LAYER_OF.get(".".join(parts[:end]))
        if layer is not None:
            return layer
    raise KeyError(module)


def package_of(module: str) -> str:
    return ".".join(module.split(".")[:2])


def edge_problem(importer: str, imported: str) -> str | None:
    """Why this edge breaks the table, or None."""
    mine, theirs = layer_of(importer), layer_of(imported)
    if theirs not in MAY_IMPORT[mine]:
        return f"{mine} may not import {theirs}"
    if mine == BACKENDS and imported.startswith(f"{AUTH_INTERFACE}."):
        return "a backend sees only the token-provider interface (mfconnector.auth)"
    for group in SEPARATE_PACKAGES:
        a, b = package_of(importer), package_of(imported)
        if a != b and a in group and b in group:
            return f"{a} may not import {b}"
    return None


def layer_violations(graph: Mapping[str, Iterable[str]]) -> dict[tuple[str, str], str]:
    return {
        (importer, imported): problem
        for importer, targets in graph.items()
        for imported in targets
        if (problem := edge_problem(importer, imported)) is not None
    }


def strongly_connected(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """Every set of modules that import each other round a cycle (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
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
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def cycle_path(graph: Mapping[str, Iterable[str]], component: Iterable[str]) -> list[str]:
    """One concrete cycle through the component's first module: ``a, b, ..., a``."""
    members = set(component)
    start = min(members)
    parents: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for child in sorted(set(graph[node]) & members):
                if child == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(parents[path[-1]])
                    return [*reversed(path), start]
                if child not in parents:
                    parents[child] = node
                    following.append(child)
        frontier = following
    raise ValueError("not a cycle")


def test_every_module_has_a_layer() -> None:
    unmapped = []
    for module in MODULES:
        try:
            layer_of(module)
        except KeyError:
            unmapped.append(module)
    assert not unmapped, f"add these to LAYER_OF: {unmapped}"


def violations(graph: Mapping[str, Iterable[str]]) -> dict[str, str]:
    """Every broken rule, keyed as ``KNOWN_VIOLATIONS`` spells it, with why (or the path)."""
    found = {
        f"{_short(importer)} -> {_short(imported)}": problem
        for (importer, imported), problem in layer_violations(graph).items()
    }
    for component in strongly_connected(graph):
        key = "cycle: " + ", ".join(_short(m) for m in component)
        found[key] = " -> ".join(_short(m) for m in cycle_path(graph, component))
    return found


def _short(module: str) -> str:
    return module.removeprefix(f"{ROOT}.")


KNOWN_VIOLATIONS: frozenset[str] = frozenset()
"""What breaks the table or makes a cycle today, and which issue section removes it."""


def test_every_import_follows_the_layering_table() -> None:
    new = {
        key: why
        for key, why in violations(GRAPH).items()
        if key not in KNOWN_VIOLATIONS and not key.startswith("cycle: ")
    }
    assert not new, "imports that break DESIGN.md's layering table:\n" + "\n".join(
        f"  {key}  ({why})" for key, why in sorted(new.items())
    )


def test_no_import_cycle() -> None:
    new = {
        key: path
        for key, path in violations(GRAPH).items()
        if key not in KNOWN_VIOLATIONS and key.startswith("cycle: ")
    }
    assert not new, "import cycles:\n" + "\n".join(f"  {path}" for path in sorted(new.values()))


def test_every_known_violation_still_occurs() -> None:
    """The list only shrinks: a fixed violation is taken off it in the same change."""
    gone = KNOWN_VIOLATIONS - violations(GRAPH).keys()
    assert not gone, f"fixed, so remove from KNOWN_VIOLATIONS: {sorted(gone)}"


@pytest.mark.parametrize("module", [m for m in MODULES if layer_of(m) in PURE_LAYERS], ids=_short)
def test_the_pure_layers_import_no_event_loop_or_network(module: str) -> None:
    assert not third_party_imports(module) & IMPURE, module


# --- the checker checks what it says --------------------------------------------------------


def test_the_graph_counts_lazy_and_type_checking_imports() -> None:
    """entry.wiring imports graph.client only inside functions and under TYPE_CHECKING."""
    wiring = MODULES["mfconnector.entry.wiring"].read_text(encoding="utf-8")
    assert "\nfrom mfconnector.graph.client" not in wiring  # not at module level
    assert "mfconnector.graph.client" in GRAPH["mfconnector.entry.wiring"]
    assert "mfconnector.auth.commands" in GRAPH["mfconnector.cli"]  # a lazy `from` import
    assert "mfconnector.writes.setup" in GRAPH["mfconnector.tools.base"]  # TYPE_CHECKING only


def test_the_rules_refuse_what_the_table_forbids() -> None:
    assert edge_problem("mfconnector.graph.client", "mfconnector.auth") is None
    assert edge_problem("mfconnector.graph.client", "mfconnector.net.settings") is None
    assert edge_problem("mfconnector.graph.client", "mfconnector.auth.msal_provider")
    assert edge_problem("mfconnector.imap.pool", "mfconnector.graph.urls")
    assert edge_problem("mfconnector.auth.config", "mfconnector.writes.gates")
    assert edge_problem("mfconnector.jsonrpc", "mfconnector.runtime")
    assert edge_problem("mfconnector.emulator.core", "mfconnector.errors")
    assert edge_problem("mfconnector.gmail_emulator.core", "mfconnector.emulator.ids")
    assert edge_problem("mfconnector.tools.mail", "mfconnector.server")
    assert edge_problem("mfconnector.entry.wiring", "mfconnector.tools.base") is None


def test_a_cycle_is_found_and_its_path_reported() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e2"}, "e2": set()}
    assert strongly_connected(graph) == [["a", "b", "c"]]
    assert cycle_path(graph, ["a", "b", "c"]) == ["a", "b", "c", "a"]
    assert strongly_connected({"a": {"b"}, "b": set()}) == []


READ_TOOLS = ("mail", "mail_read", "batch_read", "attachments", "account")
"""The read tools (issue 18): they speak the mail model, never a provider."""
PROVIDERS = ("mfconnector.graph", "mfconnector.imap", "mfconnector.gmail", "httpx", "msal")


def runtime_imports(path: Path) -> set[str]:
    """What a module imports when it runs: ``if TYPE_CHECKING:`` blocks left out."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return names


def reached_from(module: str) -> dict[str, str]:
    """Every mfconnector module ``module`` imports at run time, directly or through others,
    each with the module that imports it."""
    seen: dict[str, str] = {}
    pending = [module]
    while pending:
        current = pending.pop()
        relative = current.removeprefix("mfconnector.").replace(".", "/")
        path = PACKAGE / f"{relative}.py"
        if not path.exists():
            path = PACKAGE / relative / "__init__.py"
        if not path.exists():
            continue
        for name in runtime_imports(path):
            if name not in seen and (name.startswith("mfconnector") or name in PROVIDERS):
                seen[name] = current
                if name.startswith("mfconnector"):
                    pending.append(name)
    return seen


@pytest.mark.parametrize("tool", READ_TOOLS)
def test_the_read_tools_reach_no_provider(tool: str) -> None:
    reached = reached_from(f"mfconnector.tools.{tool}")
    providers = {name: by for name, by in reached.items() if name.startswith(PROVIDERS)}
    assert providers == {}, providers
    assert "mfconnector.mail.model" in reached
