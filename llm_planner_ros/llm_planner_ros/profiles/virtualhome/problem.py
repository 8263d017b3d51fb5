"""VirtualHome's cut of a problem: grounding its domain over a full scene graph (hundreds of
objects, thousands of CLOSE edges) is slow, so the problem keeps the character, the rooms, the
goal's objects, what the character holds or sits on, candidates for what the goal leaves
unnamed (a seat for ``(sitting character)``, a cup for ``DRINK``), and, transitively, the
containers and surfaces of all of these."""
from __future__ import annotations

from typing import Optional

from llm_planner_ros.core.world import WorldState
from llm_planner_ros.pddl.goals import GroundGoal
from llm_planner_ros.pddl.problem import whole_world


def rooms_of(world: WorldState) -> set[str]:
    """The instances the world says are rooms (``is_room``), which a plan keeps whole."""
    return {a[1] for a in world.facts if a[0] == "is_room"}

# The object an action goal needs, where the goal may not name one: any of these properties
VERB_OBJECTS = {
    "DRINK": ("drinkable", "recipient"), "WATCH": ("lookable",), "LOOKAT": ("lookable",),
    "READ": ("readable",), "TYPE": ("typeable",), "SWITCHOFF": ("has_switch",), "SWITCHON": ("has_switch",),
    "EAT": ("eatable",), "PUTON": ("clothes",), "GRAB": ("grabbable",), "PUSH": ("movable",),
    "POUR": ("pourable", "drinkable"), "SLEEP": ("sittable", "lieable"), "WAKEUP": ("sittable", "lieable"),
    "WIPE": ("grabbable",), "TOUCH": ("grabbable",), "WASH": ("body_part", "grabbable"),
    "RINSE": ("body_part", "grabbable"), "SCRUB": ("body_part", "grabbable"),
}
CANDIDATES_PER_NEED = 6


def character(world: WorldState) -> str:
    """The instance of type ``character`` (VirtualHome's agent); "" when there is none."""
    return next((n for n, t in world.objects.items() if t == "character"), "")


def _candidates(world: WorldState, props: tuple[str, ...], near: set[str], limit: int) -> list[str]:
    """Instances with any of ``props``, those in the character's room first, then by id."""
    found = {a[1] for a in world.facts if a[0] in props and len(a) == 2}
    return sorted(found, key=lambda n: (n not in near, world.ids.get(n, 0)))[:limit]


def relevant_objects(world: WorldState, goal: GroundGoal, allowed: Optional[set[str]] = None,
                     excluded: frozenset[str] = frozenset()) -> set[str]:
    """What the problem keeps; with ``allowed``, only those (plus the character, the rooms and the
    goal's own objects); never one of ``excluded`` (objects the policy does not let be touched).
    A world without a character is kept whole."""
    char = character(world)
    if not char:
        return whole_world(world, goal, allowed, excluded)
    if allowed is not None:
        world = WorldState(world.objects, frozenset(a for a in world.facts if all(
            x in allowed or x == char or ("is_room", x) in world.facts for x in a[1:])),
            world.classes, world.ids)
    rooms = rooms_of(world)
    here = {a[2] for a in world.facts if a[0] == "inside" and a[1] == char}
    near = {a[1] for a in world.facts if a[0] == "inside_room" and a[2] in here}
    keep = {char} | rooms | set(goal.objects)
    keep |= {a[2] for a in world.facts if a[0] in ("holds_rh", "holds_lh", "ontop") and a[1] == char}
    goal_preds = {atom[0] for alt in goal.alternatives for _, atoms in alt for atom in atoms}
    if "sitting" in goal_preds:
        keep |= set(_candidates(world, ("sittable",), near, CANDIDATES_PER_NEED))
    if "lying" in goal_preds:
        keep |= set(_candidates(world, ("lieable",), near, CANDIDATES_PER_NEED))
    if "holds_lh" in goal_preds:   # the left hand takes what the right hand cannot: fill the right first
        keep |= set(_candidates(world, ("grabbable",), near, CANDIDATES_PER_NEED))
    for group in goal.actions:
        if any(objects for _, objects in group):
            continue   # done on an object the goal names
        if allowed is not None:
            keep |= allowed   # the objects given are few: all are candidates
            continue
        for verb, _ in group:
            props = VERB_OBJECTS.get(verb)
            if props is None:
                continue
            if any((p, o) in world.facts for p in props for o in keep):
                continue
            keep |= set(_candidates(world, props, near, CANDIDATES_PER_NEED))
            if verb == "POUR":
                keep |= set(_candidates(world, ("pour_target",), near, CANDIDATES_PER_NEED))
    if allowed is not None:
        keep &= allowed | {char} | rooms | set(goal.objects)
    keep -= excluded
    frontier = set(keep)
    while frontier:   # containers and surfaces, transitively
        nxt = {a[2] for a in world.facts if a[0] in ("obj_inside", "obj_ontop") and a[1] in frontier} - keep - excluded
        keep |= nxt
        frontier = nxt
    return keep
