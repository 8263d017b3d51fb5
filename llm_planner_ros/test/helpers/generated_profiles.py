"""Profiles written for a test: the shipped mobile manipulator with many object classes of
names no cache has seen (so that a goal on it embeds thousands of new sentences), and with an
action over four items that Fast Downward's grounding cannot hold in memory; and with instances
that keep their own names."""
from __future__ import annotations

import random
import shutil
from pathlib import Path

import yaml

from llm_planner_ros.profiles.loader import shipped

BLOW_UP_ACTION = """  (:action stack_four
    :parameters (?r - robot ?a - item ?b - item ?c - item ?d - item ?p - place)
    :precondition (and (at ?r ?p) (on ?a ?p) (on ?b ?p) (on ?c ?p) (on ?d ?p))
    :effect (and (holding ?r ?a) (not (hand_free ?r))))
)"""


def _name(rng: random.Random) -> str:
    return "".join(rng.choice("bcdfghjklmnprstvz") + rng.choice("aeiou") for _ in range(4))


def write_profile(folder: Path, items: int, places: int, seed: int, blow_up: bool = False) -> Path:
    """``items`` item classes and ``places`` place classes of new names beside the shipped ones,
    one instance each, every new item on the first new place; returns the profile.yaml's path."""
    rng = random.Random(seed)
    source = shipped("mobile_manipulator")
    spec = yaml.safe_load(source.read_text())
    domain = (source.parent / spec["domain"]).read_text()
    world = (source.parent / spec["world"]).read_text()
    names = list(dict.fromkeys(_name(rng) for _ in range(3 * (items + places))))[:items + places]
    item_classes, place_classes = names[:items], names[items:]
    for cls in names:
        spec["objects"][cls] = [cls + " thing"]
    if blow_up:
        domain = domain.rstrip().removesuffix(")") + BLOW_UP_ACTION + "\n"
        spec["actions"]["stack_four"] = {"skill": "STACK_FOUR", "args": ["?a", "?b", "?c", "?d"],
                                         "words": "stack the {0}, the {1}, the {2} and the {3}"}
    ids = iter(range(100, 100 + len(names)))
    item_objects = [f"{cls}_{next(ids)}" for cls in item_classes]
    place_objects = [f"{cls}_{next(ids)}" for cls in place_classes]
    objects = f"    {' '.join(item_objects)} - item\n    {' '.join(place_objects)} - place\n  )"
    facts = " ".join(f"(on {item} {place_objects[0]})" for item in item_objects)
    head, tail = world.split("  )\n  (:init", 1)
    world = head + objects + "\n  (:init\n    " + facts + tail
    folder.mkdir(parents=True, exist_ok=True)
    spec["domain"], spec["world"] = "domain.pddl", "world.pddl"
    (folder / "domain.pddl").write_text(domain)
    (folder / "world.pddl").write_text(world)
    (folder / "profile.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    return folder / "profile.yaml"


def named_profile(tmp_path: Path, instances: str) -> Path:
    """The shipped profile with a world whose desks and person keep their own names (issue 40),
    ``instances`` appended to its YAML."""
    source = shipped("mobile_manipulator").parent
    for f in source.iterdir():
        shutil.copy(f, tmp_path / f.name)
    world = (tmp_path / "world.pddl").read_text()
    for old, new in (("desk_5 dock_6 - place", "bob_desk carol_desk dock_6 - place"), ("person_12", "alice"),
                     ("(on book_17 desk_5)", "(on book_17 bob_desk)"),
                     ("(on phone_19 desk_5)", "(on phone_19 carol_desk)")):
        assert old in world
        world = world.replace(old, new)
    (tmp_path / "world.pddl").write_text(world)
    (tmp_path / "profile.yaml").write_text((tmp_path / "profile.yaml").read_text() + instances)
    return tmp_path / "profile.yaml"


NAMED = ("instances:\n  bob_desk: {class: desk, words: [\"Bob's desk\"]}\n  carol_desk: desk\n"
         "  alice: {class: person, words: [Alice]}\n")
