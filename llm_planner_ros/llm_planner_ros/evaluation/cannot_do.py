"""Tasks the shipped worlds cannot do (issue 37), written before anything was tuned, never tuned
on: each names an object its world lacks, or asks for a state no skill of the world brings about.
A task passes when its goal ends without running (refused, or asked: unconfirmed with nobody to
ask) and the end's detail names the missing thing (``names``: any one of the words); it fails
when a goal runs as a substitute. bench/interpret.py runs them (``--cannot-do``)."""
from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from llm_planner_ros.core.errors import CancelToken
from llm_planner_ros.core.request import parse_request
from llm_planner_ros.core.types import PlanResult

if TYPE_CHECKING:
    from llm_planner_ros.planning.service import PlanningService

# the worlds: VirtualHome's scene 1 as it starts, the mobile_manipulator profile's world, and one
# BEHAVIOR activity's world (cleaning_bathtub: a bathtub, a sink, a scrub brush)
VIRTUALHOME, MOBILE_MANIPULATOR, BEHAVIOR_BATHTUB = "virtualhome", "mobile_manipulator", "behavior:cleaning_bathtub"


@dataclass(frozen=True)
class CannotDo:
    world: str
    task: str
    names: tuple[str, ...]     # the missing thing; the end's detail names one of these words


CANNOT_DO = (
    # VirtualHome, scene 1 (no milk, cat, dog, car, plants, garden, bread, eggs, washing machine, piano)
    CannotDo(VIRTUALHOME, "Put the milk in the fridge", ("milk",)),
    CannotDo(VIRTUALHOME, "Feed the cat", ("cat",)),
    CannotDo(VIRTUALHOME, "Walk the dog", ("dog",)),
    CannotDo(VIRTUALHOME, "Wash the car", ("car",)),
    CannotDo(VIRTUALHOME, "Water the plants in the garden", ("plants", "plant", "garden")),
    CannotDo(VIRTUALHOME, "Make me a sandwich", ("sandwich", "bread")),
    CannotDo(VIRTUALHOME, "Fry two eggs", ("eggs", "egg")),
    CannotDo(VIRTUALHOME, "Put the dirty clothes in the washing machine", ("washing", "machine", "clothes")),
    CannotDo(VIRTUALHOME, "Play the piano", ("piano",)),
    CannotDo(VIRTUALHOME, "Mow the lawn", ("lawn", "mower")),
    CannotDo(VIRTUALHOME, "Fly to the moon", ("moon",)),
    CannotDo(VIRTUALHOME, "Bring me a beer from the garage", ("beer", "garage")),
    # mobile_manipulator (a counter, table, sofa, desk, dock, fridge, cupboard, kettle, lamp, tv,
    # a person, a cup, mug, apple, milk, book, remote, phone, plate)
    CannotDo(MOBILE_MANIPULATOR, "Make me a sandwich", ("sandwich", "bread")),
    CannotDo(MOBILE_MANIPULATOR, "Feed the cat", ("cat",)),
    CannotDo(MOBILE_MANIPULATOR, "Water the plants", ("plants", "plant")),
    CannotDo(MOBILE_MANIPULATOR, "Bring me my keys", ("keys", "key")),
    CannotDo(MOBILE_MANIPULATOR, "Put the banana in the fridge", ("banana",)),
    CannotDo(MOBILE_MANIPULATOR, "Vacuum the floor", ("vacuum", "floor")),
    CannotDo(MOBILE_MANIPULATOR, "Take out the trash", ("trash",)),
    CannotDo(MOBILE_MANIPULATOR, "Open the window", ("window",)),
    CannotDo(MOBILE_MANIPULATOR, "Hand me a pen", ("pen",)),
    CannotDo(MOBILE_MANIPULATOR, "Put my shoes in the cupboard", ("shoes", "shoe")),
    CannotDo(MOBILE_MANIPULATOR, "Turn on the oven", ("oven",)),
    CannotDo(MOBILE_MANIPULATOR, "Bring me a towel", ("towel",)),
    # BEHAVIOR, cleaning_bathtub's world (a bathtub, a sink, a scrub brush)
    CannotDo(BEHAVIOR_BATHTUB, "Put the soap in the bucket", ("soap", "bucket")),
    CannotDo(BEHAVIOR_BATHTUB, "Fold the towels", ("towels", "towel")),
    CannotDo(BEHAVIOR_BATHTUB, "Clean the toilet", ("toilet",)),
    CannotDo(BEHAVIOR_BATHTUB, "Put the shampoo on the shelf", ("shampoo", "shelf")),
    CannotDo(BEHAVIOR_BATHTUB, "Wash the dishes in the sink", ("dishes", "dish")),
    CannotDo(BEHAVIOR_BATHTUB, "Throw the rag in the bin", ("rag", "bin")),
    CannotDo(BEHAVIOR_BATHTUB, "Open the window", ("window",)),
    CannotDo(BEHAVIOR_BATHTUB, "Put the toothbrush in the cup", ("toothbrush", "cup")),
    CannotDo(BEHAVIOR_BATHTUB, "Mop the floor", ("floor", "mop")),
    CannotDo(BEHAVIOR_BATHTUB, "Hang the towel on the rack", ("towel", "rack")),
)

# A second list, written on 2026-11-27 after the first one's result had been read (a banana run
# as the apple, "oven" and "mop" not named) and before any change made for it: the first list was
# then looked at for a change to the absent-word test (none was kept), this one was not. Most name
# a thing of the same kind as one the world has (a spoon beside a knife, an orange beside an apple,
# a shower beside a bathtub), where a substitute is likeliest.
CANNOT_DO_HELD_OUT = (
    CannotDo(VIRTUALHOME, "Play the guitar", ("guitar",)),
    CannotDo(VIRTUALHOME, "Put the spoon in the sink", ("spoon",)),
    CannotDo(VIRTUALHOME, "Light a candle", ("candle",)),
    CannotDo(VIRTUALHOME, "Slice the tomato", ("tomato",)),
    CannotDo(VIRTUALHOME, "Fix the bicycle", ("bicycle",)),
    CannotDo(VIRTUALHOME, "Open the umbrella", ("umbrella",)),
    CannotDo(VIRTUALHOME, "Make a smoothie in the blender", ("smoothie", "blender")),
    CannotDo(VIRTUALHOME, "Grab the hammer", ("hammer",)),
    CannotDo(MOBILE_MANIPULATOR, "Put the orange in the fridge", ("orange",)),
    CannotDo(MOBILE_MANIPULATOR, "Bring me a glass of wine", ("wine", "glass")),
    CannotDo(MOBILE_MANIPULATOR, "Put the spoon on the plate", ("spoon",)),
    CannotDo(MOBILE_MANIPULATOR, "Bring me the newspaper", ("newspaper",)),
    CannotDo(MOBILE_MANIPULATOR, "Turn on the microwave", ("microwave",)),
    CannotDo(MOBILE_MANIPULATOR, "Put the laptop on the desk", ("laptop",)),
    CannotDo(MOBILE_MANIPULATOR, "Water the flowers", ("flowers", "flower")),
    CannotDo(MOBILE_MANIPULATOR, "Bring me a pillow", ("pillow",)),
    CannotDo(MOBILE_MANIPULATOR, "Put the bowl in the cupboard", ("bowl",)),
    CannotDo(BEHAVIOR_BATHTUB, "Put the sponge in the sink", ("sponge",)),
    CannotDo(BEHAVIOR_BATHTUB, "Light the candles", ("candles", "candle")),
    CannotDo(BEHAVIOR_BATHTUB, "Put the bath mat on the floor", ("mat", "floor")),
    CannotDo(BEHAVIOR_BATHTUB, "Clean the mirror", ("mirror",)),
    CannotDo(BEHAVIOR_BATHTUB, "Turn on the shower", ("shower",)),
    CannotDo(BEHAVIOR_BATHTUB, "Put the brush in the drawer", ("drawer",)),
    CannotDo(BEHAVIOR_BATHTUB, "Empty the trash can", ("trash",)),
)

# A third list, written on 2026-11-28 after the narrower-kind rule of the absent-word test (WordNet:
# "banana" is a narrower kind of the world's "fruit") was written from the first two lists' misses,
# and before anything ran on it. Most name a thing of the same kind as one the world has, or a
# narrower kind of a world's word (a pear beside the food, a hairbrush beside the scrub brush).
CANNOT_DO_THIRD = (
    CannotDo(VIRTUALHOME, "Put the pear in the freezer", ("pear",)),
    CannotDo(VIRTUALHOME, "Slice the cheese with the knife", ("cheese",)),
    CannotDo(VIRTUALHOME, "Squeeze a lemon into the tea", ("lemon",)),
    CannotDo(VIRTUALHOME, "Print the form on the printer", ("printer",)),
    CannotDo(VIRTUALHOME, "Turn on the radio", ("radio",)),
    CannotDo(VIRTUALHOME, "Put the vase on the table", ("vase",)),
    CannotDo(VIRTUALHOME, "Cover me with a blanket on the bed", ("blanket",)),
    CannotDo(VIRTUALHOME, "Bring me a fork", ("fork",)),
    CannotDo(VIRTUALHOME, "Pour me a glass of orange juice", ("juice", "orange")),
    CannotDo(MOBILE_MANIPULATOR, "Put the pear in the fridge", ("pear",)),
    CannotDo(MOBILE_MANIPULATOR, "Put the cheese in the fridge", ("cheese",)),
    CannotDo(MOBILE_MANIPULATOR, "Bring me a yogurt from the fridge", ("yogurt",)),
    CannotDo(MOBILE_MANIPULATOR, "Turn on the radio", ("radio",)),
    CannotDo(MOBILE_MANIPULATOR, "Bring me the magazine", ("magazine",)),
    CannotDo(MOBILE_MANIPULATOR, "Put the fork on the plate", ("fork",)),
    CannotDo(MOBILE_MANIPULATOR, "Put the tablet on the dock", ("tablet",)),
    CannotDo(MOBILE_MANIPULATOR, "Load the dishwasher", ("dishwasher",)),
    CannotDo(MOBILE_MANIPULATOR, "Give the person some grapes", ("grapes", "grape")),
    CannotDo(BEHAVIOR_BATHTUB, "Put the toothpaste by the sink", ("toothpaste",)),
    CannotDo(BEHAVIOR_BATHTUB, "Scrub the jacuzzi", ("jacuzzi",)),
    CannotDo(BEHAVIOR_BATHTUB, "Put the razor in the sink", ("razor",)),
    CannotDo(BEHAVIOR_BATHTUB, "Clean the hairbrush in the sink", ("hairbrush",)),
    CannotDo(BEHAVIOR_BATHTUB, "Put the comb in the bathtub", ("comb",)),
    CannotDo(BEHAVIOR_BATHTUB, "Turn on the faucet", ("faucet",)),
)


def world_executor(world: str):
    """(a fresh executor of ``world`` as it starts, whether its world is a profile's)."""
    if world == VIRTUALHOME:
        from llm_planner_ros.profiles.virtualhome.simulator import VirtualHomeExecutor

        return VirtualHomeExecutor(), False
    from llm_planner_ros.executors.pddl_world import PddlWorldExecutor

    if world == MOBILE_MANIPULATOR:
        from llm_planner_ros.profiles.loader import load_profile, shipped

        return PddlWorldExecutor(load_profile(shipped("mobile_manipulator"))), True
    from llm_planner_ros.profiles.behavior import behavior_profile, problem_names

    activity = world.split(":", 1)[1]
    return PddlWorldExecutor(behavior_profile(next(n for n in problem_names() if n.startswith(activity)))), True


def check(case: CannotDo, result: PlanResult, absent: list[str]) -> dict:
    """Passes when nothing ran as a substitute and the end names the missing thing."""
    ran = any(s.executed for s in result.steps)
    named = any(re.search(rf"\b{re.escape(n)}\b", result.detail.lower()) for n in case.names)
    passed = not ran and named and result.termination_reason.value not in ("goal_reached", "already_done")
    return dict(world=case.world, task=case.task, passed=passed, ran=ran, named=named, absent=absent,
                termination=result.termination_reason.value, detail=result.detail[:300])


class ConstantExecutor:
    """The same executor, whatever is asked (as an executor factory or a robot world)."""

    def __init__(self, executor) -> None:
        self.executor = executor

    def __call__(self, *args):
        return self.executor


def world_services(settings: dict, worlds: Iterable[str]) -> Iterator[tuple[str, Any, bool, PlanningService]]:
    """Per world: (its name, a fresh executor of it, whether its world is a profile's, a service with
    ``settings`` (flat, as the node's parameters) that plans and executes on that executor)."""
    from llm_planner_ros.wiring import ServiceConfig, compose

    for world in worlds:
        executor, profile = world_executor(world)
        yield world, executor, profile, compose(
            ServiceConfig.from_flat(settings), executor_factory=ConstantExecutor(executor),
            robot_world=ConstantExecutor(executor) if profile else None)


def run_cannot_do(settings: dict, cases: Sequence[CannotDo] = CANNOT_DO) -> list[dict]:
    """Each case through a service with ``settings`` (flat, as the node's parameters) on its world
    as it starts, executed: :func:`check`'s verdicts."""
    out = []
    for world, executor, _, service in world_services(settings, dict.fromkeys(c.world for c in cases)):
        for case in (c for c in cases if c.world == world):
            executor.reset()
            request = parse_request(task=case.task, method="interpret", execute=True)
            result, report = service.plan_with_report(request, lambda event: None, CancelToken(), executor)
            out.append(check(case, result, list(report.stats.get("absent", []))))
    return out

# A fourth list, written on 2026-11-28 before the related-kind rule of the absent-word test (WordNet:
# "oven" is only distantly related to the world's "kitchen", 0.605 apart by cosine) was written from
# the first list's last miss, and before anything ran on it. Most name a thing that goes with one the
# world has without being a kind of it (a cake for the oven, a coat for the hanger, a charger for the dock).
CANNOT_DO_FOURTH = (
    CannotDo(VIRTUALHOME, "Bake a cake in the oven", ("cake",)),
    CannotDo(VIRTUALHOME, "Put the wine bottle in the freezer", ("wine", "bottle")),
    CannotDo(VIRTUALHOME, "Hang my coat on the hanger", ("coat",)),
    CannotDo(VIRTUALHOME, "Put the keys on the nightstand", ("keys", "key")),
    CannotDo(VIRTUALHOME, "Start the dishwasher", ("dishwasher",)),
    CannotDo(VIRTUALHOME, "Put the mail on the desk", ("mail",)),
    CannotDo(VIRTUALHOME, "Iron my shirt", ("iron", "shirt")),
    CannotDo(VIRTUALHOME, "Play a video on the projector", ("projector", "video")),
    CannotDo(VIRTUALHOME, "Feed the fish in the aquarium", ("fish", "aquarium")),
    CannotDo(MOBILE_MANIPULATOR, "Turn on the stove", ("stove",)),
    CannotDo(MOBILE_MANIPULATOR, "Start the toaster", ("toaster",)),
    CannotDo(MOBILE_MANIPULATOR, "Bring me the charger from the dock", ("charger",)),
    CannotDo(MOBILE_MANIPULATOR, "Pour the cereal on the plate", ("cereal",)),
    CannotDo(MOBILE_MANIPULATOR, "Bring me my glasses from the desk", ("glasses",)),
    CannotDo(MOBILE_MANIPULATOR, "Put the coffee beans in the cupboard", ("coffee", "beans")),
    CannotDo(MOBILE_MANIPULATOR, "Turn on the ceiling fan", ("fan", "ceiling")),
    CannotDo(MOBILE_MANIPULATOR, "Bring the blanket to the sofa", ("blanket",)),
    CannotDo(MOBILE_MANIPULATOR, "Put the ice cream in the fridge", ("ice", "cream")),
    CannotDo(BEHAVIOR_BATHTUB, "Turn on the water heater", ("heater", "water")),
    CannotDo(BEHAVIOR_BATHTUB, "Hang the shower curtain", ("curtain", "shower")),
    CannotDo(BEHAVIOR_BATHTUB, "Put the bath toys in the bathtub", ("toys", "toy")),
    CannotDo(BEHAVIOR_BATHTUB, "Put the lotion on the counter", ("lotion", "counter")),
    CannotDo(BEHAVIOR_BATHTUB, "Dry the bathtub with a cloth", ("cloth",)),
    CannotDo(BEHAVIOR_BATHTUB, "Put the bath salts in the bathtub", ("salts", "salt")),
)

# A fifth list, written on 2026-11-28 after the fourth list's misses were read ("glasses" taken for
# the plural of the world's "glass", "coffee" of the world's "coffee mug" standing for "beans") and
# before any change made for them, and before anything ran on it. Most name a plural that is a word
# of its own (glasses, scissors, pliers), or pair a word the world has only inside another name, or
# as a thing of its own, with one it lacks (tea bags, water bottle, apple juice).
CANNOT_DO_FIFTH = (
    CannotDo(VIRTUALHOME, "Find my glasses on the nightstand", ("glasses",)),
    CannotDo(VIRTUALHOME, "Put the tea bags in the drawer", ("bags", "bag")),
    CannotDo(VIRTUALHOME, "Put the toilet paper in the bathroom cabinet", ("paper",)),
    CannotDo(VIRTUALHOME, "Put the pens in the pencil case", ("pens", "pen", "case")),
    CannotDo(VIRTUALHOME, "Open the garage door", ("garage",)),
    CannotDo(VIRTUALHOME, "Turn on the ceiling fan", ("fan",)),
    CannotDo(VIRTUALHOME, "Put the kitchen scissors on the table", ("scissors",)),
    CannotDo(VIRTUALHOME, "Pour the olive oil into the frying pan", ("pan", "frying", "olive")),
    CannotDo(MOBILE_MANIPULATOR, "Put my sunglasses on the table", ("sunglasses",)),
    CannotDo(MOBILE_MANIPULATOR, "Make me a cup of coffee", ("coffee",)),
    CannotDo(MOBILE_MANIPULATOR, "Bring me the water bottle", ("bottle",)),
    CannotDo(MOBILE_MANIPULATOR, "Put the milk chocolate in the fridge", ("chocolate",)),
    CannotDo(MOBILE_MANIPULATOR, "Bring me the TV guide", ("guide",)),
    CannotDo(MOBILE_MANIPULATOR, "Hand me the pliers", ("pliers",)),
    CannotDo(MOBILE_MANIPULATOR, "Put the apple juice in the fridge", ("juice",)),
    CannotDo(MOBILE_MANIPULATOR, "Put the remote batteries in the drawer", ("batteries", "battery", "drawer")),
    CannotDo(BEHAVIOR_BATHTUB, "Clean the bathtub with the scrubbing pads", ("pads", "pad")),
    CannotDo(BEHAVIOR_BATHTUB, "Brush the dog in the bathtub", ("dog",)),
    CannotDo(BEHAVIOR_BATHTUB, "Put the shower gel by the sink", ("gel", "shower")),
    CannotDo(BEHAVIOR_BATHTUB, "Put the scrub brush in the laundry basket", ("laundry", "basket")),
    CannotDo(BEHAVIOR_BATHTUB, "Fill the bathtub with bubble bath", ("bubble",)),
    CannotDo(BEHAVIOR_BATHTUB, "Rinse the sink with the shower head", ("shower",)),
    CannotDo(BEHAVIOR_BATHTUB, "Put the brush in the glass", ("glass",)),
    CannotDo(BEHAVIOR_BATHTUB, "Wipe the sink with paper towels", ("paper", "towels", "towel")),
)

# A sixth list, written on 2026-11-29 after the fifth list's misses were read ("coffee" known only
# as the "coffee mug"'s first word, so "a cup of coffee" ran with the mug) and before any change
# made for them, and before anything ran on it. Several name, on its own, a word the world has only
# as the first word of another name (VirtualHome's "towel rack", "DVD player" and "game
# controller"; the robot's "coffee mug" and "water boiler"); the rest name things these worlds lack.
CANNOT_DO_SIXTH = (
    CannotDo(VIRTUALHOME, "Bring me a towel", ("towel",)),
    CannotDo(VIRTUALHOME, "Dry my hands with a towel", ("towel",)),
    CannotDo(VIRTUALHOME, "Put a DVD in the player", ("dvd",)),
    CannotDo(VIRTUALHOME, "Play a board game", ("board", "game")),
    CannotDo(VIRTUALHOME, "Make me a cup of hot chocolate", ("chocolate",)),
    CannotDo(VIRTUALHOME, "Put the coffee beans in the grinder", ("beans", "grinder")),
    CannotDo(VIRTUALHOME, "Hang the coat on the rack", ("coat",)),
    CannotDo(VIRTUALHOME, "Put the wine in the fridge", ("wine",)),
    CannotDo(MOBILE_MANIPULATOR, "Pour me some coffee", ("coffee",)),
    CannotDo(MOBILE_MANIPULATOR, "Bring me a glass of water", ("water",)),
    CannotDo(MOBILE_MANIPULATOR, "Bring me a cup of tea", ("tea",)),
    CannotDo(MOBILE_MANIPULATOR, "Put the ice cream in the freezer", ("ice", "cream", "freezer")),
    CannotDo(MOBILE_MANIPULATOR, "Bring me the laptop from the work desk", ("laptop",)),
    CannotDo(MOBILE_MANIPULATOR, "Take the dishes to the dishwasher", ("dishwasher",)),
    CannotDo(MOBILE_MANIPULATOR, "Bring me the coffee beans", ("beans", "coffee")),
    CannotDo(MOBILE_MANIPULATOR, "Put the flowers in a vase", ("flowers", "flower", "vase")),
    CannotDo(BEHAVIOR_BATHTUB, "Put the soap on the edge of the bathtub", ("soap",)),
    CannotDo(BEHAVIOR_BATHTUB, "Wash the bathtub with a sponge", ("sponge",)),
    CannotDo(BEHAVIOR_BATHTUB, "Drop a bath bomb in the bathtub", ("bomb", "bath")),
    CannotDo(BEHAVIOR_BATHTUB, "Hang the bath towel on the hook", ("towel", "hook")),
    CannotDo(BEHAVIOR_BATHTUB, "Clean the mirror above the sink", ("mirror",)),
    CannotDo(BEHAVIOR_BATHTUB, "Put the rubber duck in the bathtub", ("duck", "rubber")),
    CannotDo(BEHAVIOR_BATHTUB, "Empty the bucket into the sink", ("bucket",)),
    CannotDo(BEHAVIOR_BATHTUB, "Put the shampoo bottle next to the sink", ("shampoo", "bottle")),
)

# A seventh list, written on 2026-11-29 before any rule for foods and drinks (the third and fifth
# lists' misses: "cheese" and "chocolate" were taken for the world's "milk", 2 hypernym steps from
# each) and before anything ran on it. Most name a food or drink the world lacks beside one it has.
CANNOT_DO_SEVENTH = (
    CannotDo(VIRTUALHOME, "Bring me a glass of orange juice", ("juice", "orange")),
    CannotDo(VIRTUALHOME, "Put the butter in the fridge", ("butter",)),
    CannotDo(VIRTUALHOME, "Pour me a glass of milk", ("milk",)),
    CannotDo(VIRTUALHOME, "Make a cup of cocoa", ("cocoa",)),
    CannotDo(VIRTUALHOME, "Put the honey in the cupboard", ("honey",)),
    CannotDo(VIRTUALHOME, "Heat the soup in the microwave", ("soup",)),
    CannotDo(VIRTUALHOME, "Put the yogurt in the fridge", ("yogurt",)),
    CannotDo(VIRTUALHOME, "Bring me a bowl of cereal", ("cereal", "bowl")),
    CannotDo(MOBILE_MANIPULATOR, "Put the yogurt in the fridge", ("yogurt",)),
    CannotDo(MOBILE_MANIPULATOR, "Bring me the orange juice", ("juice", "orange")),
    CannotDo(MOBILE_MANIPULATOR, "Put the butter on the table", ("butter",)),
    CannotDo(MOBILE_MANIPULATOR, "Bring me a pear", ("pear",)),
    CannotDo(MOBILE_MANIPULATOR, "Put the cream in the fridge", ("cream",)),
    CannotDo(MOBILE_MANIPULATOR, "Bring me some grapes", ("grapes", "grape")),
    CannotDo(MOBILE_MANIPULATOR, "Put the eggs in the fridge", ("eggs", "egg")),
    CannotDo(MOBILE_MANIPULATOR, "Bring me the wine", ("wine",)),
    CannotDo(MOBILE_MANIPULATOR, "Give me the bread", ("bread",)),
    CannotDo(BEHAVIOR_BATHTUB, "Put the bath oil in the bathtub", ("oil",)),
    CannotDo(BEHAVIOR_BATHTUB, "Pour the vinegar into the sink", ("vinegar",)),
    CannotDo(BEHAVIOR_BATHTUB, "Put the salt in the sink", ("salt",)),
    CannotDo(BEHAVIOR_BATHTUB, "Rinse the bathtub with milk", ("milk",)),
    CannotDo(BEHAVIOR_BATHTUB, "Put the lemon on the sink", ("lemon",)),
    CannotDo(BEHAVIOR_BATHTUB, "Wash the sink with lemon juice", ("lemon", "juice")),
    CannotDo(BEHAVIOR_BATHTUB, "Put the bleach next to the bathtub", ("bleach",)),
)

# every list by the name the benchmark reports it under, in the order they were written
CANNOT_LISTS = {"first": CANNOT_DO, "held out": CANNOT_DO_HELD_OUT, "third": CANNOT_DO_THIRD,
                "fourth": CANNOT_DO_FOURTH, "fifth": CANNOT_DO_FIFTH,
                "sixth": CANNOT_DO_SIXTH,
                "seventh": CANNOT_DO_SEVENTH}
