"""The package's import graph, walked from the source (every import: module level, inside
functions and for type checking): no circles, no import from a layer to one above it, and
nothing outside the worlds' own folders, the evaluation and the benchmarks names VirtualHome,
BEHAVIOR or EAI, in an import, a name or a string (issues 23, 24 and 39)."""
from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "llm_planner_ros"
# packages that must not know the built-in world or the benchmark
NEUTRAL = ("core", "planning", "pddl", "interpretation", "safety", "translation", "pet", "skills", "ros",
           "executors", "llm", "trace", "console", "wiring", "cli")
# The layers, from the ground up: a module imports only from its own layer or those below. The
# worlds given in code are plugins over the planning layer, loaded by name (planning.worlds).
LAYERS = (("core",), ("pddl",), ("safety", "skills", "translation", "llm", "trace"), ("interpretation", "pet"),
          ("profiles",), ("executors",), ("planning",),
          ("profiles.virtualhome", "profiles.behavior", "profiles.mobile_manipulator"), ("wiring",),
          ("ros", "cli", "console", "evaluation", "__main__"))
# where the built-in world's, BEHAVIOR's and EAI's names may appear
THEIR_OWN = ("profiles/virtualhome/", "profiles/behavior/", "evaluation/")
# their names, as words in code, strings and comments
THEIR_NAMES = re.compile(r"virtual_?home|\beai\b|behavior-100|\bbehavior\b|trimmedtestscene|inside_room|"
                         r"\bcharacter_\d|\bid2task\b", re.IGNORECASE)
WORLD_SPECIFIC = ("virtualhome_eval", "llm_planner_ros.evaluation", "llm_planner_ros.profiles.virtualhome.simulator",
                  "llm_planner_ros.profiles.virtualhome", "llm_planner_ros.profiles.behavior",
                  "llm_planner_ros.profiles.virtualhome.resources",
                  "llm_planner_ros.profiles.virtualhome.vocabulary")
# imports still to move behind the VirtualHome profile (issue 23); this list only shrinks
NOT_YET_MOVED: dict[str, list[str]] = {}


def modules() -> dict[str, Path]:
    out = {}
    for path in ROOT.rglob("*.py"):
        parts = path.relative_to(ROOT.parent).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """Every module ``name`` imports: a package module, or an outside package's top name."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([base] if base else []))
            for alias in node.names:
                full = f"{base}.{alias.name}"
                out.add(full if full in known else base)
        elif isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
    return {m if m in known or m.startswith("llm_planner_ros") else m.split(".")[0] for m in out} - {name}


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imports(name, path, known) for name, path in known.items()}


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in g.get(v, ()):
            if w not in g:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))
    for v in sorted(g):
        if v not in index:
            visit(v)
    return out


def test_the_walker_sees_a_circle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    g = graph()
    assert "llm_planner_ros.core.world" in g["llm_planner_ros.pddl.goals"]


def test_the_package_has_no_import_circles():
    assert cycles(graph()) == []


def test_the_neutral_layers_do_not_import_virtualhome_or_eai():
    found = {}
    for name, imported in graph().items():
        layer = name.split(".")[1] if name.count(".") else ""
        if layer in NEUTRAL:
            bad = sorted(m for m in imported if m.startswith(WORLD_SPECIFIC))
            if bad:
                found[name] = bad
    assert found == NOT_YET_MOVED


def layer(module: str) -> int:
    """The index in LAYERS of ``module`` (its longest matching prefix)."""
    parts = module.split(".")[1:]
    best, found = 0, -1
    for i, names in enumerate(LAYERS):
        for name in names:
            np = name.split(".")
            if parts[:len(np)] == np and len(np) > best:
                best, found = len(np), i
    assert found >= 0, f"{module} is in no layer; add it to LAYERS"
    return found


def test_no_import_runs_up_a_layer():
    up = sorted(f"{m} -> {i}" for m, imported in graph().items() if m != "llm_planner_ros"
                for i in imported if i.startswith("llm_planner_ros.") and layer(i) > layer(m))
    assert up == []


def test_the_layer_check_sees_an_import_up():
    assert layer("llm_planner_ros.profiles.virtualhome.world") > layer("llm_planner_ros.planning.service") \
        > layer("llm_planner_ros.profiles.loader") > layer("llm_planner_ros.core.request")


def names_outside_their_own(root: Path = ROOT) -> list[str]:
    """``file:line: text`` of every name of the built-in world, BEHAVIOR or EAI in a token (a
    name, a string, a comment) of a Python file outside THEIR_OWN folders."""
    found = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith(THEIR_OWN):
            continue
        for tok in tokenize.generate_tokens(io.StringIO(path.read_text()).readline):
            if tok.type in (tokenize.NAME, tokenize.STRING, tokenize.COMMENT) and THEIR_NAMES.search(tok.string):
                found.append(f"{rel}:{tok.start[0]}: {THEIR_NAMES.search(tok.string).group(0)}")
    return found


def test_no_name_of_virtualhome_eai_or_behavior_outside_their_own_folders():
    assert names_outside_their_own() == []


def test_the_name_check_finds_a_name(tmp_path):
    (tmp_path / "planning").mkdir()
    (tmp_path / "planning" / "x.py").write_text('SCENE = "TrimmedTestScene1"  # a VirtualHome scene\n')
    assert names_outside_their_own(tmp_path) == ["planning/x.py:1: TrimmedTestScene", "planning/x.py:1: VirtualHome"]


def test_a_world_given_in_code_is_loaded_by_name_and_offers_what_the_planner_reads():
    import pytest

    from llm_planner_ros.planning.worlds import WORLDS, PlanningWorld, WorldPlugin, load_world

    wanted = {n for cls in (WorldPlugin, PlanningWorld) for n in list(vars(cls)) + list(cls.__annotations__)
              if not n.startswith("_")}
    for name in WORLDS:
        world = load_world(name)
        assert load_world(name) is world
        assert not [n for n in sorted(wanted) if not hasattr(world, n)], name
    with pytest.raises(ValueError, match="unknown world 'moon_base'; known: virtualhome"):
        load_world("moon_base")
