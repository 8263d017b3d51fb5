"""EAI's 100 human action sequences (iGibson annotations, ``eai-eval``), replayed on the problem's
PDDL world: the domain-agreement check of BEHAVIOR, as ``bench/domain_agreement.py`` is for
VirtualHome.

The annotations act in iGibson, with two hands, objects named ``bow_0`` and no walking. Each step
is mapped to the domain's actions:

- ``bow_0`` is the problem's first ``bow_n_*`` instance (EAI's ``bow_n_08_1``), ``bow_1`` the second;
- each interaction is preceded by ``navigate_to`` its object (iGibson's agent reaches without walking);
- ``RIGHT_``/``LEFT_`` place the object that hand holds; ``CLEAN`` uses the tool in hand (the
  domain's ``clean_*`` action for its type); ``SOAK`` soaks in a sink; ``SLICE`` uses the knife held.

Each disagreement is classified:

- **domain**: the domain cannot say the step (no such action, e.g. ``TOGGLE_OFF``), or forbids what
  iGibson allows (a second object grasped: the domain has one hand);
- **annotation**: an action no one defines (a typo), or a hand that holds nothing;
- **mapping**: the step names an object EAI's PDDL problem does not keep (the problems are cut
  from iGibson's scenes: four baskets there may be two here), or it was mapped but its
  preconditions fail here (the object map or the inserted walk may be wrong).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Optional

from llm_planner_ros.core.data_packages import data_packages_dir
from llm_planner_ros.pddl.semantics import PddlError, PddlWorld
from llm_planner_ros.profiles.behavior import BehaviorProblem, behavior_profile, problem

_ANNOTATIONS = ("behavior_eval", "evaluation", "action_sequencing", "resources", "human_annotations")
NO_ACTION = {"TOGGLE_OFF", "UNFREEZE", "TRANSFER_CONTENTS_INSIDE"}   # iGibson's, none in EAI's domain
# iGibson's fixture categories that are not the synset's first word
FIXTURES = {"fridge": "electric_refrigerator", "top_cabinet": "cabinet", "bottom_cabinet": "cabinet",
            "bottom_cabinet_no_top": "cabinet", "counter": "countertop", "burner": "stove"}
PLACE = {"PLACE_INSIDE": "place_inside", "PLACE_ONTOP": "place_ontop", "PLACE_NEXTTO": "place_nextto",
         "PLACE_UNDER": "place_under", "PLACE_NEXTTO_ONTOP": "place_nextto_ontop"}


def human_sequence(name: str) -> Optional[list[dict]]:
    path = data_packages_dir().joinpath(*_ANNOTATIONS, f"{name}.json")
    return json.loads(path.read_text()) if path.exists() else None


@dataclass
class Replay:
    name: str
    steps: int                      # annotation steps
    executed: int                   # annotation steps that ran
    reached: bool
    disagreement: str = ""          # "", domain, annotation, mapping
    why: str = ""


def _instances(p: BehaviorProblem) -> dict[str, str]:
    """iGibson's ``bow_0`` -> this world's instance (EAI's ``bow_n_08_1`` renamed)."""
    out = {}
    for eai_name, ours in p.renames:
        m = re.fullmatch(r"(.+?)_n_\d+_(\d+)", eai_name)
        if m:
            out[f"{m.group(1)}_{int(m.group(2)) - 1}"] = ours
    return out


def replay(name: str) -> Optional[Replay]:
    """The problem's human sequence run on its PDDL world (None: no annotation for it)."""
    steps = human_sequence(name)
    if steps is None:
        return None
    p = problem(name)
    profile = behavior_profile(name)
    world, _ = PddlWorld.from_texts(profile.domain_text, p.world_text)
    agent = profile.spec.agent or "agent_n_01_1"
    objects = _instances(p)
    hands: dict[str, Optional[str]] = {"RIGHT": None, "LEFT": None}

    def end(i: int, kind: str, why: str) -> Replay:
        return Replay(name, len(steps), i, kind == "" and p.reached(world), kind, why)

    def run(action: tuple[str, ...]) -> str:
        try:
            missing = world.missing(action)
        except PddlError as exc:
            return str(exc)
        if missing:
            return f"({' '.join(action)}): {missing[0]}"
        world.apply(action)
        return ""

    def takes(action: str, tool: str) -> bool:
        """Whether ``action``'s first parameter admits ``tool`` (each clean_* action wants its own tool type)."""
        return world.domain.is_a(world.objects[tool], world.domain.actions[action].parameters[0][1])

    def walk_then(target: str, action: tuple[str, ...]) -> str:
        if ("in_reach_of_agent", target) not in world.state:
            why = run(("navigate_to", target, agent))
            if why:
                return why
        return run(action)

    def instance(label: str) -> tuple[Optional[str], str]:
        label = re.sub(r"_part_\d+$", "", label)   # a slice of an object is the object here
        if label in objects:
            return objects[label], ""
        word = re.sub(r"_\d+$", "", label)
        word = FIXTURES.get(word, word)
        same = sorted(o for o in world.objects if re.sub(r"_n_\d+_\d+$", "", o) == word)
        if len(same) == 1:   # a fixture, named by iGibson's scene id
            return same[0], ""
        if same:
            return None, f"EAI's PDDL problem keeps {len(same)} {word}(s), not iGibson's {label}"
        return None, f"no {word} in EAI's PDDL problem"

    for i, step in enumerate(steps):
        verb, label = step["action"].upper(), step.get("object", "")
        hand, _, act = verb.partition("_") if verb.split("_")[0] in hands else ("", "", verb)
        if act in NO_ACTION:
            return end(i, "domain", f"step {i + 1} {verb}: the domain has no such action")
        target, missing = instance(label)
        if target is None:
            return end(i, "mapping", f"step {i + 1} {verb} {label}: {missing}")
        if act == "GRASP":
            if any(hands.values()):
                return end(i, "domain", f"step {i + 1} {verb} {label}: a second object in hand (the domain has "
                                        "one hand)")
            why = walk_then(target, ("grasp", target, agent))
            hands[hand] = target
        elif act in PLACE or act == "RELEASE":
            held = hands.get(hand)
            if held is None:
                return end(i, "annotation", f"step {i + 1} {verb}: the {hand.lower()} hand holds nothing")
            if act == "RELEASE":
                why = run(("release", held, agent))
            elif act == "PLACE_ONTOP" and world.objects[target].startswith("floor_n_01"):
                why = walk_then(target, ("place_onfloor", held, target, agent))
            elif act == "PLACE_NEXTTO_ONTOP":
                return end(i, "annotation", f"step {i + 1} {verb}: names one object, the action takes two")
            else:
                why = walk_then(target, (PLACE[act], held, target, agent))
            hands[hand] = None
        elif act in ("OPEN", "CLOSE", "TOGGLE_ON"):
            why = walk_then(target, (act.lower(), target, agent))
        elif act == "CLEAN":
            tool = next((h for h in hands.values() if h), None)
            fits = [(a, tool, target, agent) for a in world.domain.actions
                    if tool is not None and a.startswith("clean_") and takes(a, tool)]
            why = walk_then(target, fits[0]) if fits else \
                f"no clean_* action takes {tool}" if tool else f"nothing in hand to clean the {target} with"
        elif act == "SOAK":
            sink = next(iter(world.of_type("sink_n_01")), None)
            why = walk_then(sink, ("soak", target, sink, agent)) if sink else "no sink in the problem"
        elif act == "SLICE":
            knife = next((h for h in hands.values() if h and world.domain.is_a(world.objects[h], "knife_n_01")), None)
            why = walk_then(target, ("slice", target, knife, agent)) if knife else "no knife in hand"
        elif act in ("COOK", "FREEZE"):
            tool_type = "pan_n_01" if act == "COOK" else "electric_refrigerator_n_01"
            tool = next(iter(world.of_type(tool_type)), None)
            why = run((act.lower(), target, tool)) if tool else f"no {tool_type} in the problem"
        else:
            return end(i, "annotation", f"step {i + 1} {verb}: no such action")
        if why and "handsfull" in why:   # iGibson acts with the other hand free; the domain's one hand is full
            return end(i, "domain", f"step {i + 1} {verb} {label}: {why} (the domain has one hand)")
        if why and act == "PLACE_INSIDE" and why.endswith(f"(open {target})"):
            return end(i, "domain", f"step {i + 1} {verb} {label}: {why} (the domain wants every container "
                                    "open; iGibson, only one that opens)")
        if why:
            return end(i, "mapping", f"step {i + 1} {verb} {label}: {why}")
    return end(len(steps), "", "")
