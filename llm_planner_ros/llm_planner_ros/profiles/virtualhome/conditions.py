"""VirtualHome's goal conditions in words: what a scene admits follows its domain's affordance
predicates (a state an object can take, a relation between plausible pairs, an action goal on an
object the action takes), each with the sentence a person would write for it."""
from __future__ import annotations

from llm_planner_ros.core.world import WorldState
from llm_planner_ros.interpretation.conditions import Condition

# (affordance predicate, the two states, sentences); "{o}" is the object's name
# (affordance predicate, the two states, per state: the sentence, then the act that brings it about)
_STATES = (
    ("has_switch", ("on", "off"), (("The {o} is on.", "I turn on the {o}."),
                                   ("The {o} is off.", "I turn off the {o}."))),
    ("can_open", ("open", "closed"), (("The {o} is open.", "I open the {o}."),
                                      ("The {o} is closed.", "I close the {o}."))),
    ("has_plug", ("plugged_in", "plugged_out"), (("The {o} is plugged in.", "I plug in the {o}."),
                                                  ("The {o} is unplugged.", "I unplug the {o}."))),
)
# action goal verb -> (affordance predicates its object needs (any), sentences: the first is shown)
_ACTIONS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "WATCH": (("lookable",), ("I watch the {o}.", "I am watching the {o}.")),
    "LOOKAT": (("lookable", "readable"), ("I look at the {o}.", "I am looking at the {o}.")),
    "READ": (("readable",), ("I read the {o}.", "I am reading the {o}.")),
    "DRINK": (("drinkable", "recipient"), ("I drink from the {o}.", "I am drinking from the {o}.")),
    "TYPE": (("typeable",), ("I type on the {o}.", "I am typing on the {o}.")),
    "TOUCH": (("grabbable",), ("I touch the {o}.", "I am touching the {o}.")),
    "WASH": (("grabbable", "body_part"), ("I wash the {o}.", "I am washing the {o}.")),
    "RINSE": (("grabbable", "body_part"), ("I rinse the {o}.", "I am rinsing the {o}.")),
    "SCRUB": (("grabbable", "body_part"), ("I scrub the {o}.", "I am scrubbing the {o}.")),
    "WIPE": (("grabbable", "body_part"), ("I wipe the {o}.", "I am wiping the {o}.")),
    "EAT": (("eatable",), ("I eat the {o}.", "I am eating the {o}.")),
    "PUSH": (("movable",), ("I push the {o}.", "I am pushing the {o}.")),
    "POUR": (("pourable",), ("I pour the {o}.", "I am pouring the {o}.")),
}


# class names that do not read as English when their underscores become spaces
_PHRASES = {"hands_both": "hands", "coffe_maker": "coffee maker", "food_food": "food", "tooth_paste": "toothpaste",
            "home_office": "living room", "dining_room": "kitchen", "tv": "television"}


def phrase(class_name: str) -> str:
    return _PHRASES.get(class_name, class_name.replace("_", " "))


def render_conditions(world: WorldState, max_pairs: int = 6000) -> list[Condition]:
    """The conditions ``world`` admits, one per class (instances of a class read the same)."""
    by_pred: dict[str, set[str]] = {}
    for atom in world.facts:
        if len(atom) == 2 and atom[1] in world.classes:
            by_pred.setdefault(atom[0], set()).add(world.classes[atom[1]])
    classes = lambda *preds: sorted(set().union(*(by_pred.get(p, set()) for p in preds)))   # noqa: E731
    out: list[Condition] = [Condition("I am sitting.", ("(sitting character)",), aliases=("I sit down.",)),
                            Condition("I am lying down.", ("(lying character)",), aliases=("I lie down.",)),
                            Condition("I am asleep.", ("(lying character)",), ("SLEEP",), ("I go to sleep.",))]
    for pred, states, sentences in _STATES:
        for c in classes(pred):
            out += [Condition(t.format(o=phrase(c)), (f"({s} {c})",), aliases=(act.format(o=phrase(c)),))
                    for s, (t, act) in zip(states, sentences)]
    for c in classes("sittable"):
        out.append(Condition(f"I am sitting on the {phrase(c)}.", ("(sitting character)", f"(ontop character {c})"),
                             aliases=(f"I sit on the {phrase(c)}.",)))
    for c in classes("lieable"):
        out.append(Condition(f"I am lying on the {phrase(c)}.", ("(lying character)", f"(ontop character {c})"),
                             aliases=(f"I lie on the {phrase(c)}.",)))
    for c in classes("grabbable"):
        out.append(Condition(f"I am holding the {phrase(c)}.", (f"(holds_rh character {c})",),
                             aliases=(f"I pick up the {phrase(c)}.",)))
    seen = sorted(set(world.classes.values()) - {"character"})
    rooms = {world.classes[a[1]] for a in world.facts if a[0] == "is_room" and a[1] in world.classes}
    for c in seen:
        if c in rooms:
            out.append(Condition(f"I am in the {phrase(c)}.", (f"(inside character {c})",),
                                 aliases=(f"I go to the {phrase(c)}.",)))
            continue
        out.append(Condition(f"I am facing the {phrase(c)}.", (f"(facing character {c})",),
                             aliases=(f"I turn to the {phrase(c)}.",)))
        out.append(Condition(f"I am next to the {phrase(c)}.", (f"(next_to character {c})",),
                             aliases=(f"I walk to the {phrase(c)}.",)))
    pairs = 0
    for a in classes("grabbable"):
        for b in classes("surfaces"):
            if a != b and pairs < max_pairs:
                out.append(Condition(f"The {phrase(a)} is on the {phrase(b)}.", (f"(obj_ontop {a} {b})",),
                                     aliases=(f"I put the {phrase(a)} on the {phrase(b)}.",)))
                pairs += 1
        for b in classes("containers", "can_open"):
            if a != b and pairs < max_pairs:
                out.append(Condition(f"The {phrase(a)} is inside the {phrase(b)}.", (f"(obj_inside {a} {b})",),
                                     aliases=(f"I put the {phrase(a)} in the {phrase(b)}.",)))
                pairs += 1
    for verb, (affordances, templates) in _ACTIONS.items():   # done on that object: (did_watch television)
        for c in classes(*affordances):
            done_said = tuple(t.format(o=phrase(c)) for t in templates)
            out.append(Condition(done_said[0], (f"(did_{verb.lower()} {c})",), aliases=done_said[1:]))
    return out
