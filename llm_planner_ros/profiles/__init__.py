"""World profiles: a robot's skills, facts, objects and words, as data beside a PDDL domain
(:mod:`.loader`); and worlds given in code, which the planner loads by name, as PlanSys2 loads
its planner plugins: VirtualHome's apartment is one (:mod:`.virtualhome.world`)."""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from llm_planner_ros.planning.worlds import WorldPlugin

# name -> "module:class" of a world given in code; one line per world
WORLDS = {
    "virtualhome": "llm_planner_ros.profiles.virtualhome.world:VirtualHomeWorld",
}
DEFAULT_WORLD = "virtualhome"
_loaded: dict[str, WorldPlugin] = {}


def load_world(name: str = DEFAULT_WORLD) -> WorldPlugin:
    """The world ``name`` (one instance per process); an unknown name is an error naming the known ones."""
    if name not in WORLDS:
        raise ValueError(f"unknown world {name!r}; known: {', '.join(sorted(WORLDS))}")
    if name not in _loaded:
        module, _, cls = WORLDS[name].partition(":")
        _loaded[name] = getattr(importlib.import_module(module), cls)()
    return _loaded[name]
