"""Goal conditions as sentences (groundwork of goal interpretation): rendering from a world,
translation of free text to the nearest condition, contradiction resolution."""
from __future__ import annotations

from llm_planner_ros.interpretation.conditions import ConditionIndex, resolve, spec_of
from llm_planner_ros.pddl.invariants import pairs
from llm_planner_ros.profiles.virtualhome.conditions import render_conditions
from llm_planner_ros.profiles.virtualhome.goals import MUTEX
from llm_planner_ros.profiles.virtualhome.simulator import VirtualHomeExecutor


def test_rendering_translation_and_contradictions(embedder):
    conditions = render_conditions(VirtualHomeExecutor().world_state())
    texts = {c.text: c for c in conditions}
    assert texts["The television is on."].literals == ("(on television)",)
    assert texts["I watch the television."].literals == ("(did_watch television)",)
    assert "The pillow is on." not in texts                        # a pillow has no switch
    index = ConditionIndex([c for c in conditions if "television" in c.text or "couch" in c.text], embedder)
    matches = index.translate(["the TV is switched on", "I sit down on the sofa", "the TV is switched off",
                               "purple elephants sing"], threshold=0.5)
    assert matches[0].condition.literals == ("(on television)",)
    assert "(sitting character)" in matches[1].condition.literals
    assert matches[3].condition is None                            # nothing near enough
    kept, dropped = resolve(matches, pairs(MUTEX))
    on_off = [c for c in kept if c.literals and c.literals[0].startswith(("(on television", "(off television"))]
    assert len(on_off) == 1 and dropped and "contradicts" in dropped[0]
    assert spec_of(kept).literals


def test_eai_goals_as_sentences_and_the_held_out_rule(embedder):
    from llm_planner_ros.interpretation.interpreter import GoalInterpreter
    from llm_planner_ros.profiles.virtualhome.examples import eai_goal_demos, goal_sentences
    from llm_planner_ros.profiles.virtualhome.tasks import eai_tasks

    watch = next(t for t in eai_tasks() if t.identifier == "1057_1")
    said = goal_sentences(watch.goal, watch.graph)
    assert {"The television is on.", "The television is plugged in.", "I am facing the television."} <= set(said)
    assert any(s in said for s in ("I watch the television.", "I look at the television."))
    interpreter = GoalInterpreter(None, embedder, eai_goal_demos(), render_conditions)
    examples = interpreter.examples("watch tv", hold_out=["Watch TV"])
    assert examples and all(d.task != "Watch TV" for d in examples)     # held out by label, not by string
    baseline = interpreter.retrieve("Wash hands", VirtualHomeExecutor().world_state())
    assert baseline.lines() and all(line.startswith("(") for line in baseline.lines())


def test_a_worlds_words_are_its_objects_and_sentences_not_its_predicates_names(embedder):
    """A negated literal's predicate ("onfloor") is not a word of the world: before, "Mop the floor"
    in a world without a floor found "floor" 0.81 from "onfloor" and named nothing absent."""
    from llm_planner_ros.interpretation.absent import WorldWords
    from llm_planner_ros.interpretation.conditions import Condition

    index = ConditionIndex([Condition("The brush is not on the sink.", ("(not (onfloor brush sink))",)),
                            Condition("The brush is in the bathtub.", ("(inside brush bathtub)",))], embedder)
    words = WorldWords(index, embedder)
    assert {"brush", "sink", "bathtub"} <= set(words.words) and not {"onfloor", "inside"} & set(words.words)
    assert [w for w, _, _ in words.absent("Mop the floor", below=0.6)] == ["floor"]
    assert words.absent("Put the brush in the bathtub", below=0.6) == []


def test_wordnet_tells_a_narrower_kind_from_a_word_for_the_same_thing():
    """WordNet 3.0's nouns, read in place from the files bootstrap installs (data.noun cut in two:
    "zucchini" lies in the second part)."""
    from llm_planner_ros.interpretation.lexicon import wordnet_nouns

    nouns = wordnet_nouns()
    assert nouns is not None, "WordNet's database is not installed (make bootstrap installs it)"
    assert nouns.narrower("banana", "fruit") and nouns.narrower("orange", "fruit")
    assert nouns.narrower("zucchini", "vegetable") and nouns.narrower("laptop", "computer")
    assert not nouns.narrower("fruit", "apple")                    # broader: an apple is a fruit
    assert not nouns.narrower("refrigerator", "fridge")            # a fridge is a refrigerator
    assert not nouns.narrower("sofa", "couch") and not nouns.narrower("television", "tv")   # one sense
    assert not nouns.narrower("oven", "kitchen")                   # unrelated: the cosine decides
    assert not nouns.synsets("xyzzy") and not nouns.narrower("xyzzy", "fruit")
    assert nouns.narrower("fridge", "refrigerator") and nouns.is_a("electric_refrigerator", "fridge")


def test_a_narrower_kind_of_a_world_word_is_absent(embedder):
    """"banana" is 0.73 from the world's "fruit" (the apple's word), so before, "Put the banana in
    the fridge" ran with the apple. A world's fruit need not be a banana: the banana is absent."""
    from llm_planner_ros.interpretation.absent import WorldWords
    from llm_planner_ros.interpretation.conditions import Condition
    from llm_planner_ros.interpretation.lexicon import wordnet_nouns

    index = ConditionIndex([Condition("The apple, a fruit, is in the fridge.", ("(inside apple fridge)",))], embedder)
    words = WorldWords(index, embedder)
    assert words.absent("Put the banana in the fridge", below=0.6) == []          # embeddings alone
    found = words.absent("Put the banana in the fridge", below=0.6, lexicon=wordnet_nouns())
    assert [(w, near) for w, _, near in found] == [("banana", "fruit")]
    assert words.absent("Put the fruit in the refrigerator", below=0.6, lexicon=wordnet_nouns()) == []
    # "fridge" is a narrower kind of the word "refrigerator", but this world's thing is one
    fridge = Condition("The electric refrigerator is open.", ("(open electric_refrigerator_n_01_5)",))
    behavior = ConditionIndex([fridge], embedder)
    assert WorldWords(behavior, embedder).absent("Open the fridge", below=0.6, lexicon=wordnet_nouns()) == []


def test_wordnet_counts_the_steps_up_to_a_kind_two_words_share():
    from llm_planner_ros.interpretation.lexicon import wordnet_nouns

    nouns = wordnet_nouns()
    assert nouns is not None, "WordNet's database is not installed (make bootstrap installs it)"
    assert nouns.steps("sofa", "couch", 4) == 0 and nouns.steps("book", "novel", 4) == 1
    assert nouns.steps("lamp", "light", 4) == 2 and nouns.steps("cheese", "milk", 4) == 2
    assert nouns.steps("oven", "kitchen", 20) == 11 and nouns.steps("oven", "kitchen", 4) == 5   # most + 1
    assert nouns.steps("xyzzy", "sofa", 4) is None


def test_a_world_word_wordnet_relates_only_distantly_does_not_stand_for_a_task_word(embedder):
    """"oven" is 0.61 from "kitchen" (the mobile_manipulator's kitchen counter), so before,
    "Turn on the oven" ran with the lamp and the kettle. An oven and a kitchen share no kind within
    4 steps up: the oven is absent. "lamp" still stands for "light" (2 steps)."""
    from llm_planner_ros.interpretation.absent import WorldWords
    from llm_planner_ros.interpretation.conditions import Condition
    from llm_planner_ros.interpretation.lexicon import wordnet_nouns

    index = ConditionIndex([Condition("The robot is in the kitchen.", ("(inside robot kitchen)",)),
                            Condition("The lamp is switched on.", ("(switched_on lamp)",))], embedder)
    words = WorldWords(index, embedder)
    assert words.absent("Turn on the oven", below=0.6, lexicon=wordnet_nouns()) == []    # any relation
    found = words.absent("Turn on the oven", below=0.6, lexicon=wordnet_nouns(), related_steps=4)
    assert [w for w, _, _ in found] == ["oven"]
    assert words.absent("Turn on the light", below=0.6, lexicon=wordnet_nouns(), related_steps=4) == []


def test_a_part_of_the_body_is_the_persons_not_absent_from_the_world(embedder):
    """EAI's scenes have no teeth and no hands, yet "Brush teeth" and "Wash hands" need none."""
    from llm_planner_ros.interpretation.absent import WorldWords
    from llm_planner_ros.interpretation.conditions import Condition
    from llm_planner_ros.interpretation.lexicon import wordnet_nouns

    nouns = wordnet_nouns()
    assert nouns.body_part("teeth") and nouns.body_part("hand") and not nouns.body_part("brush")
    index = ConditionIndex([Condition("I am holding the toothbrush.", ("(holding toothbrush)",))], embedder)
    words = WorldWords(index, embedder)
    assert words.absent("Wash my hands with the toothbrush", below=0.99, lexicon=nouns, related_steps=4) == []
    assert [w for w, _, _ in words.absent("Wash my hands with the toothbrush", below=0.99)] == ["hands"]


def test_a_plural_that_is_a_word_of_its_own_is_not_more_than_one_of_its_singular(embedder):
    """"glasses" are spectacles, not drinking glasses (the mobile_manipulator's cup is also "glass"),
    so before, "Bring me my glasses" ran with the cup. "clothes" (4 steps from "cloth"), "windows"
    (software in WordNet) and "plates" (not a noun of its own) stay plurals."""
    from llm_planner_ros.interpretation.absent import WorldWords, _own_plural
    from llm_planner_ros.interpretation.conditions import Condition
    from llm_planner_ros.interpretation.lexicon import wordnet_nouns

    nouns = wordnet_nouns()
    assert _own_plural(nouns, "glasses", 4) and _own_plural(nouns, "pliers", 4)
    assert not any(_own_plural(nouns, w, 4) for w in ("clothes", "windows", "plates", "glass"))
    assert not _own_plural(nouns, "glasses", 0)                      # 0: the rule is off
    index = ConditionIndex([Condition("I am holding the glass.", ("(holding cup)",)),
                            Condition("The window is open.", ("(open window)",))], embedder)
    words = WorldWords(index, embedder)
    found = words.absent("Bring me my glasses", below=0.6, lexicon=nouns, related_steps=4)
    assert [w for w, _, _ in found] == ["glasses"]
    assert words.absent("Bring me my glasses", below=0.6) == []       # as the plural of "glass"
    assert words.absent("Open the windows and bring me two glasses", below=0.6) == []


def test_a_word_only_inside_a_things_name_stands_for_no_other_word(embedder):
    """The mobile_manipulator's mug is also a "coffee mug", and "coffee" was 0.60 from "beans", so
    before, "Put the coffee beans in the cupboard" put the mug away. "coffee" is still a word of the
    world (a task may say "the coffee mug"), but it names no thing of its own."""
    from llm_planner_ros.interpretation.absent import WorldWords
    from llm_planner_ros.interpretation.conditions import Condition
    from llm_planner_ros.interpretation.lexicon import wordnet_nouns

    index = ConditionIndex([Condition("The mug is on the table.", ("(on mug table)",),
                                      aliases=("The coffee mug is on the table.",))], embedder)
    words = WorldWords(index, embedder)
    assert words.modifiers == {"coffee": {"mug"}} and "coffee" in words.words
    assert [w for w, _, _ in words.absent("Put the coffee beans on the table", below=0.6)] == ["beans"]
    assert words.absent("Put the coffee mug on the table", below=0.6) == []
    # a word that leads a kind of itself is a thing's word: VirtualHome's "food_apple" is food
    fruit = ConditionIndex([Condition("I am holding the food apple.", ("(holds_rh character food_apple)",))], embedder)
    words = WorldWords(fruit, embedder)
    assert words.modifiers == {"food": {"apple"}}
    assert words.absent("Put the groceries away", below=0.6, lexicon=wordnet_nouns()) == []   # 0.66 from "food"
    assert [w for w, _, _ in words.absent("Put the groceries away", below=0.6)] == ["groceries"]


def test_a_word_the_world_has_only_inside_a_things_name_said_alone_is_absent(embedder):
    """The mobile_manipulator's "coffee" is only the first word of the mug's alias, so "Make me a
    cup of coffee" ran with the mug and the cup. Said on its own as a thing, such a word names
    what the world lacks; said with the word it leads, or with the verb that word is made from
    ("boil" for "boiler"), or as a verb of a later clause, it does not. WordNet tells where the word
    alone names the whole thing ("remote" is a remote control), and where it is a room, which says
    where the thing it leads is ("the kitchen" of the "kitchen counter")."""
    from llm_planner_ros.interpretation.absent import WorldWords
    from llm_planner_ros.interpretation.conditions import Condition
    from llm_planner_ros.interpretation.lexicon import wordnet_nouns

    lexicon = wordnet_nouns()
    index = ConditionIndex([Condition("The mug is on the table.", ("(on mug table)",),
                                      aliases=("The coffee mug is on the table.",)),
                            Condition("The kettle is on.", ("(switched_on kettle)",),
                                      aliases=("The water boiler is on.",)),
                            Condition("The remote control is on the table.", ("(on remote_control table)",)),
                            Condition("The brush is on the table.", ("(on brush table)",),
                                      aliases=("The scrub brush is on the table.",)),
                            Condition("I am at the kitchen counter.", ("(at robot kitchen_counter)",))], embedder)
    words = WorldWords(index, embedder)
    assert words.modifiers == {"coffee": {"mug"}, "water": {"boiler"}, "remote": {"control"}, "scrub": {"brush"},
                               "kitchen": {"counter"}}

    def absent(task, **kw):
        return [w for w, _, _ in words.absent(task, below=0.6, related_steps=4, **kw)]

    assert absent("Make me a cup of coffee", lexicon=lexicon) == ["coffee"]
    assert absent("Make me a cup of coffee") == []                     # without WordNet, as before
    assert absent("Bring me a glass of water", lexicon=lexicon) == ["glass", "water"]
    assert absent("Put the coffee mug on the table", lexicon=lexicon) == []
    assert absent("Please boil some water", lexicon=lexicon) == []     # the water boiler
    assert absent("Hand me the remote", lexicon=lexicon) == []         # WordNet: a remote control
    assert absent("Take the mug and then scrub the table", lexicon=lexicon) == []   # a verb
    assert absent("Go to the kitchen", lexicon=lexicon) == []          # a room says where the counter is


def test_one_food_does_not_stand_for_another(embedder):
    """"cheese" is 2 hypernym steps from the world's "milk" (both dairy products) and was taken for
    it. A food or drink stands only for a kind it is of ("milk" for "drink"); other words keep the
    related-kind rule ("lamp" still stands for "light")."""
    from llm_planner_ros.interpretation.absent import WorldWords, _stands_for
    from llm_planner_ros.interpretation.conditions import Condition
    from llm_planner_ros.interpretation.lexicon import wordnet_nouns

    lexicon = wordnet_nouns()
    assert lexicon.food("cheese") and lexicon.food("milk") and not lexicon.food("water")
    assert not _stands_for(lexicon, "milk", "cheese", 4) and not _stands_for(lexicon, "apple", "pear", 4)
    assert _stands_for(lexicon, "milk", "drink", 4) and _stands_for(lexicon, "lamp", "light", 4)
    index = ConditionIndex([Condition("The milk is in the fridge.", ("(in milk fridge)",)),
                            Condition("The lamp is on.", ("(switched_on lamp)",))], embedder)
    words = WorldWords(index, embedder)
    cheese = "Put the cheese in the fridge"
    assert [w for w, _, _ in words.absent(cheese, below=0.6, lexicon=lexicon, related_steps=4)] == ["cheese"]
    assert words.absent(cheese, below=0.6) == []                  # without WordNet: milk, 0.6 away
    assert words.absent("Turn on the light", below=0.6, lexicon=lexicon, related_steps=4) == []
