"""Tasks the shipped worlds cannot do (issue 37), written before anything was tuned, never tuned
on: each names an object its world lacks, or asks for a state no skill of the world brings about.
A task passes when its goal ends without running (refused, or asked: unconfirmed with nobody to
ask) and the end's detail names the missing thing (``names``: any one of the words); it fails
when a goal runs as a substitute. bench/interpret.py runs them (``--cannot-do``)."""
from __future__ import annotations

from dataclasses import dataclass

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
