"""A building on the mobile_manipulator profile, at any size, seeded (issue 41).

    python bench/building.py --objects 10000 --seed 1 --out /tmp/building_10000

Writes a profile folder (the shipped profile's YAML and domain, and a generated ``world.pddl``)
and ``tasks.json``: tasks of the profile's kinds with their goal literals, over instances.

The building has floors of rooms (offices, kitchens, meeting rooms, lounges), each with its
furniture, containers and appliances, people in offices, and items on and in them. The
mobile_manipulator domain has no rooms or doors: the robot drives from any place to any other,
so floors and rooms shape where things are (and which tasks make sense), not what the planner
reads. About 15% of the objects are places, 2% people and the rest items.
"""
from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm_planner_ros"))   # the package folder

from llm_planner_ros.core.world import parse_fact  # noqa: E402
from llm_planner_ros.profiles.loader import load_profile, shipped  # noqa: E402

ROOMS = {   # room kind -> its places: (class, PDDL type)
    "office": [("desk", "place"), ("desk", "place"), ("lamp", "appliance"), ("cupboard", "container")],
    "kitchen": [("kitchen_counter", "place"), ("fridge", "container"), ("cupboard", "container"),
                ("kettle", "appliance"), ("dining_table", "place")],
    "meeting": [("dining_table", "place"), ("tv", "appliance"), ("lamp", "appliance")],
    "lounge": [("sofa", "place"), ("tv", "appliance"), ("lamp", "appliance"), ("dining_table", "place")],
}
ROOM_KINDS = ("office", "office", "office", "kitchen", "meeting", "lounge")
ITEMS = ("cup", "mug", "apple", "milk", "book", "remote", "phone", "plate")
ROOMS_PER_FLOOR = 12


@dataclass
class Building:
    objects: dict[str, str] = field(default_factory=dict)    # instance -> PDDL type
    facts: list[str] = field(default_factory=list)
    places: dict[str, list[str]] = field(default_factory=dict)   # room -> its places
    next_id: int = 1

    def add(self, cls: str, type_: str) -> str:
        name = f"{cls}_{self.next_id}"
        self.next_id += 1
        self.objects[name] = type_
        return name


def generate(n_objects: int, seed: int) -> tuple[Building, list[dict]]:
    """A building of about ``n_objects`` instances (at least one room), and 20 tasks on it."""
    rng = random.Random(seed)
    b = Building()
    robot, dock = b.add("robot", "robot"), b.add("dock", "place")
    b.facts += [f"(at {robot} {dock})", f"(hand_free {robot})"]
    rooms: list[tuple[str, str]] = []   # (room id, kind)
    people: list[str] = []
    per_room = 25   # places, people and items per room, on average (4-5 places, the rest items)
    n_rooms = max(1, (n_objects - 2) // per_room)
    for r in range(n_rooms):
        kind = ROOM_KINDS[r % len(ROOM_KINDS)] if r else "kitchen"
        room = f"floor{r // ROOMS_PER_FLOOR}_room{r % ROOMS_PER_FLOOR}"
        rooms.append((room, kind))
        b.places[room] = [b.add(cls, t) for cls, t in ROOMS[kind]]
        if kind == "office" and rng.random() < 0.8:
            people.append(b.add("person", "person"))
            b.places[room].append(people[-1])
        for place in b.places[room]:
            if place.startswith(("lamp", "tv", "kettle")) and rng.random() < 0.3:
                b.facts.append(f"(switched_on {place})")
    places = [p for room, _ in rooms for p in b.places[room]]
    surfaces = [p for p in places if b.objects[p] == "place"]
    while len(b.objects) < n_objects:
        room, _ = rooms[rng.randrange(len(rooms))]
        item = b.add(rng.choice(ITEMS), "item")
        containers = [p for p in b.places[room] if b.objects[p] == "container"]
        on = [p for p in b.places[room] if b.objects[p] == "place"] or surfaces
        if containers and rng.random() < 0.3:
            b.facts.append(f"(in {item} {rng.choice(containers)})")
        else:
            b.facts.append(f"(on {item} {rng.choice(on)})")
    return b, tasks(b, rng, people)


def hazardous(goal: str) -> bool:
    """Whether the goal literal alone is one of the profile's hazards (a cup on the sofa)."""
    return bool(load_profile(shipped("mobile_manipulator")).hazards.holding({parse_fact(goal)}))


def tasks(b: Building, rng: random.Random, people: list[str], count: int = 20) -> list[dict]:
    """Tasks of the profile's kinds, each a goal over instances that does not hold yet and is not
    a hazard of the profile (those are refused, rightly: bench/hazards.py counts them)."""
    items = [o for o, t in b.objects.items() if t == "item"]
    surfaces = [o for o, t in b.objects.items() if t == "place" and not o.startswith("dock")]
    containers = [o for o, t in b.objects.items() if t == "container"]
    appliances = [o for o, t in b.objects.items() if t == "appliance"]
    on = set(b.facts)
    out: list[dict] = []
    kinds = ["place", "put_in", "bring", "switch_on"]
    while len(out) < count:
        kind = kinds[len(out) % len(kinds)]
        item = rng.choice(items)
        cls = item.rsplit("_", 1)[0]
        if kind == "place":
            target = rng.choice(surfaces)
            goal, task = f"(on {item} {target})", f"Put the {cls} on the {target.rsplit('_', 1)[0].replace('_', ' ')}"
        elif kind == "put_in":
            target = rng.choice(containers)
            goal, task = f"(in {item} {target})", f"Put the {cls} in the {target.rsplit('_', 1)[0]}"
        elif kind == "bring" and people:
            target = rng.choice(people)
            goal, task = f"(has {target} {item})", f"Bring the {cls} to the person"
        else:
            target = rng.choice(appliances)
            if f"(switched_on {target})" in on:
                continue
            goal, task = f"(switched_on {target})", f"Turn on the {target.rsplit('_', 1)[0]}"
        if goal in on or hazardous(goal):
            continue
        out.append({"task": task, "kind": kind, "goal": [goal]})
    return out


def world_text(b: Building) -> str:
    by_type: dict[str, list[str]] = {}
    for name, t in b.objects.items():
        by_type.setdefault(t, []).append(name)
    decl = "\n    ".join(f"{' '.join(names)} - {t}" for t, names in sorted(by_type.items()))
    init = "\n    ".join(b.facts)
    return (f"; a generated building: {len(b.objects)} objects, {len(b.places)} rooms (bench/building.py)\n"
            f"(define (problem building) (:domain mobile_manipulator)\n  (:objects\n    {decl}\n  )\n"
            f"  (:init\n    {init}\n  )\n  (:goal (and))\n)\n")


def write(folder: Path, n_objects: int, seed: int) -> tuple[Path, list[dict]]:
    """The profile folder for a building of ``n_objects``; returns its profile.yaml and the tasks."""
    folder.mkdir(parents=True, exist_ok=True)
    source = shipped("mobile_manipulator")
    for f in source.parent.iterdir():
        if f.suffix in (".yaml", ".pddl") and f.name != "world.pddl":
            shutil.copy(f, folder / f.name)
    b, goals = generate(n_objects, seed)
    (folder / "world.pddl").write_text(world_text(b))
    (folder / "tasks.json").write_text(json.dumps(goals, indent=1))
    return folder / source.name, goals


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--objects", type=int, default=1000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args()
    profile, goals = write(args.out, args.objects, args.seed)
    print(f"{profile} ({args.objects} objects), {len(goals)} tasks in {args.out / 'tasks.json'}")


if __name__ == "__main__":
    main()
