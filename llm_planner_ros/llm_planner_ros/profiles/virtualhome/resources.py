"""VirtualHome data shipped in the PyPI package ``virtualhome-eval``: object properties,
human programs (task, description, steps) and the TrimmedTestScene1 scene graphs."""
from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources
from pathlib import Path
from typing import Optional

_PROGRAMS = "dataset/programs_processed_precond_nograb_morepreconds"
SCENES = ("TrimmedTestScene1",)


def domain_path() -> str:
    """VirtualHome's PDDL domain as this package writes it (EAI's, with skill and word lines)."""
    return str(Path(__file__).with_name("domain.pddl"))


def domain_text() -> str:
    return Path(domain_path()).read_text()


def package_root() -> Path:
    try:
        return Path(str(resources.files("virtualhome_eval")))
    except ModuleNotFoundError as exc:
        raise RuntimeError("virtualhome-eval is not installed; run scripts/bootstrap.sh") from exc


@cache
def object_properties() -> dict[str, frozenset[str]]:
    """VirtualHome object classes with their static properties: the 314 of EAI's
    ``properties_data.json`` (the names its programs use) plus the classes of the shipped scene
    graphs, rooms included, with the properties their nodes carry."""
    with open(package_root() / "resources" / "properties_data.json") as f:
        props = {name: set(p) for name, p in json.load(f).items()}
    for scene in SCENES:
        for node in initial_graph(scene)["nodes"]:
            props.setdefault(node["class_name"], set()).update(node.get("properties", ()))
    props.pop("character", None)
    return {name: frozenset(p) for name, p in props.items()}


@cache
def unity_properties() -> dict[str, frozenset[str]]:
    """The classes of VirtualHome's Unity simulator with their properties."""
    with open(package_root() / "resources" / "properties_data_unity.json") as f:
        return {name: frozenset(p) for name, p in json.load(f).items() if name != "character"}


@dataclass(frozen=True)
class HumanProgram:
    program_id: str          # e.g. "file628_2" (EAI ids drop the "file" prefix: "628_2")
    task: str                # e.g. "Drink"
    description: str
    script: tuple[str, ...]  # VirtualHome script lines with instance ids


@cache
def human_programs(scene: str = "TrimmedTestScene1") -> tuple[HumanProgram, ...]:
    """The executable human programs of a scene (518 for TrimmedTestScene1), sorted by id."""
    _check_scene(scene)
    folder = package_root() / _PROGRAMS / "executable_programs" / f"{scene}_graph"
    programs = []
    for path in sorted(folder.rglob("*.txt")):
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        script = tuple(line.strip() for line in lines[2:] if line.strip().startswith("["))
        programs.append(HumanProgram(program_id=path.stem, task=lines[0].strip(),
                                     description=lines[1].strip() if len(lines) > 1 else "",
                                     script=script))
    return tuple(programs)


@lru_cache(maxsize=8)
def scene_graphs(program_id: str, scene: str = "TrimmedTestScene1") -> tuple[dict, dict]:
    """(initial graph, final graph) recorded for one human program."""
    _check_scene(scene)
    folder = package_root() / _PROGRAMS / "init_and_final_graphs" / f"{scene}_graph"
    matches = list(folder.rglob(f"{program_id}.json"))
    if not matches:
        raise KeyError(f"no scene graph for program {program_id!r} in {scene}")
    with open(matches[0]) as f:
        data = json.load(f)
    return data["init_graph"], data["final_graph"]


def initial_graph(scene: str = "TrimmedTestScene1") -> dict:
    """A canonical initial graph for the scene: that of its first human program."""
    return scene_graphs(human_programs(scene)[0].program_id, scene)[0]


def _check_scene(scene: str) -> None:
    if scene not in SCENES:
        raise KeyError(f"unknown scene {scene!r}; available: {', '.join(SCENES)}")


@cache
def _eai_goals() -> dict[str, dict]:
    with open(package_root() / "resources" / "task_state_LTL_formula_accurate.json") as f:
        data = json.load(f)["scene_1"]
    return {pid: g["vh_goal"] for programs in data.values() for pid, g in programs.items()}


def eai_goal(program_id: str) -> Optional[dict]:
    """EAI's goal conditions for a program (``{"goal": [...], "actions": [...]}``), if it has them.
    Node states and relations name node ids of the program's initial graph."""
    return _eai_goals().get(program_id.removeprefix("file"))


def scene_for_task(scene_id: str, task: str) -> tuple[Optional[dict], Optional[dict]]:
    """(initial graph, EAI goal) of the scene's first EAI program for ``task``; (None, None) if
    the task has none (the executor then starts from the scene's canonical graph, goal unknown)."""
    if not task:
        return None, None
    for program in human_programs(scene_id):
        goal = eai_goal(program.program_id)
        if program.task.lower() == task.strip().lower() and goal is not None:
            return scene_graphs(program.program_id, scene_id)[0], goal
    return None, None
