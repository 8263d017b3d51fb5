"""A building on the mobile_manipulator profile, at any size, seeded (issue 41).

    python bench/building.py --objects 10000 --seed 1 --out /tmp/building_10000

Writes a profile folder (the shipped profile's YAML and domain, and a generated ``world.pddl``)
and ``tasks.json``: tasks of the profile's kinds with their goal literals, over instances.

The building has floors of rooms (offices, kitchens, meeting rooms, lounges), each with its
furniture, containers and appliances, people in offices, and items on and in them. Each person
has a name ("Alice Smith"), and their desk, cupboard, lamp and mug keep their own names
(``alice_smith_desk``: "Alice Smith's desk"), declared under the profile's ``instances:``; the
tasks name those ("Put Alice Smith's mug on Bob Jones's desk"), so that a task's text says
which instances its goal is over, as people in a building would. The
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
FIRST = ("alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy", "karl", "laura",
         "mallory", "nina", "oscar", "peggy", "quinn", "rupert", "sybil", "trent", "ursula", "victor", "wendy",
         "xavier", "yvonne", "zoe", "amir", "bianca", "chen", "dmitri", "elena", "farah", "gustav", "hana",
         "igor", "jonas", "kemal", "lena", "marco", "noor")
LAST = ("smith", "jones", "garcia", "miller", "davis", "lopez", "wilson", "moore", "taylor", "thomas", "white",
        "harris", "martin", "clark", "lewis", "walker", "young", "allen", "king", "wright", "scott", "green",
        "baker", "adams", "nelson", "hill", "campbell", "mitchell", "roberts", "carter", "phillips", "evans",
        "turner", "torres", "parker", "collins", "edwards", "stewart", "morris", "murphy")
OWNED = ("desk", "cupboard", "lamp", "mug")   # what each person's own things are (classes of the profile)


@dataclass
class Building:
    objects: dict[str, str] = field(default_factory=dict)    # instance -> PDDL type
    facts: list[str] = field(default_factory=list)
    places: dict[str, list[str]] = field(default_factory=dict)   # room -> its places
    named: dict[str, tuple[str, str]] = field(default_factory=dict)   # named instance -> (class, its words)
    next_id: int = 1

    def add(self, cls: str, type_: str, name: str = "", words: str = "") -> str:
        """An instance ``<cls>_<id>``, or one that keeps its own ``name`` (said ``words``)."""
        if not name:
            name = f"{cls}_{self.next_id}"
            self.next_id += 1
        else:
            self.named[name] = (cls, words)
        self.objects[name] = type_
        return name

    def instances_yaml(self) -> str:
        """The profile's ``instances:`` entries for the named instances."""
        return "instances:\n" + "".join(f"  {n}: {{class: {c}, words: [{json.dumps(w)}]}}\n"
                                        for n, (c, w) in self.named.items()) if self.named else ""


def generate(n_objects: int, seed: int) -> tuple[Building, list[dict]]:
    """A building of about ``n_objects`` instances (at least one room), and 20 tasks on it."""
    rng = random.Random(seed)
    b = Building()
    robot, dock = b.add("robot", "robot"), b.add("dock", "place")
    b.facts += [f"(at {robot} {dock})", f"(hand_free {robot})"]
    rooms: list[tuple[str, str]] = []   # (room id, kind)
    people: list[str] = []
    names = [(f, la) for la in LAST for f in FIRST]
    rng.shuffle(names)
    per_room = 25   # places, people and items per room, on average (4-5 places, the rest items)
    n_rooms = max(1, (n_objects - 2) // per_room)
    for r in range(n_rooms):
        kind = ROOM_KINDS[r % len(ROOM_KINDS)] if r else "kitchen"
        room = f"floor{r // ROOMS_PER_FLOOR}_room{r % ROOMS_PER_FLOOR}"
        rooms.append((room, kind))
        # the first two offices have someone in them, so that every size has tasks between two people
        if kind == "office" and (len(people) < 2 or rng.random() < 0.8):
            first, last = names[len(people) % len(names)]
            said = f"{first.title()} {last.title()}" + (f" ({len(people) // len(names) + 1})"
                                                        if len(people) >= len(names) else "")
            person = f"{first}_{last}" + (f"_{len(people) // len(names) + 1}" if len(people) >= len(names) else "")
            people.append(b.add("person", "person", person, said))
            own = {cls: f"{person}_{cls}" for cls in OWNED}
            b.places[room] = [b.add(cls, t, own[cls], f"{said}'s {cls}") if cls in own and
                              own[cls] not in b.objects else b.add(cls, t)
                              for cls, t in ROOMS[kind]] + [person]
            # their mug lies somewhere in the building (placed with the items, below)
            b.add("mug", "item", own["mug"], f"{said}'s mug")
        else:
            b.places[room] = [b.add(cls, t) for cls, t in ROOMS[kind]]
        for place in b.places[room]:
            if place.startswith(("lamp", "tv", "kettle")) and rng.random() < 0.3:
                b.facts.append(f"(switched_on {place})")
    places = [p for room, _ in rooms for p in b.places[room]]
    surfaces = [p for p in places if b.objects[p] == "place"]
    mugs = [n for n, (c, _) in b.named.items() if c == "mug"]
    while len(b.objects) < n_objects or mugs:
        room, _ = rooms[rng.randrange(len(rooms))]
        item = mugs.pop() if mugs else b.add(rng.choice(ITEMS), "item")
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
    """Tasks of the profile's kinds over the people's own things, said the way people in the
    building would ("Put Alice Smith's mug on Bob Jones's desk"); each a goal that does not hold
    yet and is not a hazard of the profile (those are refused, rightly: bench/hazards.py counts them).
    Each task once: a small building has fewer than ``count`` (two people have eight at most)."""
    said = {n: w for n, (_, w) in b.named.items()}
    on = set(b.facts)
    out: list[dict] = []
    kinds = ["place", "put_in", "bring", "switch_on"]
    for _ in range(50 * count):
        if len(out) == count:
            break
        kind = kinds[len(out) % len(kinds)]
        owner, other = rng.sample(people, 2)
        mug = f"{owner}_mug"
        if kind == "place":
            goal, task = f"(on {mug} {other}_desk)", f"Put {said[mug]} on {said[other + '_desk']}"
        elif kind == "put_in":
            goal, task = f"(in {mug} {other}_cupboard)", f"Put {said[mug]} in {said[other + '_cupboard']}"
        elif kind == "bring":
            goal, task = f"(has {other} {mug})", f"Bring {said[mug]} to {said[other]}"
        else:
            goal, task = f"(switched_on {owner}_lamp)", f"Turn on {said[owner + '_lamp']}"
        if goal in on or hazardous(goal) or any(t["goal"] == [goal] for t in out):
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
    profile = folder / source.name
    profile.write_text(profile.read_text() + b.instances_yaml())
    (folder / "world.pddl").write_text(world_text(b))
    (folder / "tasks.json").write_text(json.dumps(goals, indent=1))
    return profile, goals


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
