"""Skill templates (both ways) and admissible banks, on the real VirtualHome resources."""
from __future__ import annotations

import pytest

from llm_planner_ros.core.types import Skill
from llm_planner_ros.profiles.virtualhome import bank, resources
from llm_planner_ros.profiles.virtualhome.vocabulary import ACTIONS, SkillParser, make_skill, skill_text

OBJECTS = resources.object_properties()
PARSER = SkillParser(OBJECTS)
SAMPLE_ARGS = {0: (), 1: ("coffee_table",), 2: ("water_glass", "kitchen_counter")}


@pytest.mark.parametrize("action", sorted(ACTIONS))
def test_every_template_round_trips(action):
    objects = SAMPLE_ARGS[ACTIONS[action].arity]
    skill = make_skill(action, objects)
    assert PARSER.parse_text(skill.text) == skill
    assert PARSER.parse_text(skill.text.upper() + ".") == skill
    assert SkillParser.parse_script(skill.script()) == Skill(action, objects, (1,) * len(objects), skill.text)


def test_templates_follow_huang_appendix():
    assert skill_text("PUTIN", ["milk", "fridge"]) == "put milk in fridge"
    assert skill_text("PUTBACK", ["plate", "table"]) == "put plate on table"
    assert skill_text("POUR", ["water", "water_glass"]) == "pour water into water glass"
    assert skill_text("PUTOFF", ["clothes_shirt"]) == "take off clothes shirt"
    assert skill_text("SWITCHON", ["tv"]) == "switch on tv"
    assert skill_text("WALK", ["kitchen"]) == "walk to kitchen"
    assert skill_text("STANDUP", []) == "stand up"
    with pytest.raises(ValueError, match="PUTIN takes 2 objects, got 1"):
        skill_text("PUTIN", ["milk"])


def test_script_parsing_reads_eai_instance_ids_and_rejects_garbage():
    s = SkillParser.parse_script("[PUTBACK] <water_glass> (1.1000) <cupboard> (1.229)")
    assert (s.action, s.objects, s.object_ids) == ("PUTBACK", ("water_glass", "cupboard"), (1000, 229))
    for bad in ["", "walk to kitchen", "[FLY] <bird> (1)", "[WALK] <kitchen"]:
        with pytest.raises(ValueError):
            SkillParser.parse_script(bad)


def test_unknown_objects_do_not_parse():
    assert PARSER.parse_text("grab unicorn") is None
    assert PARSER.parse_text("dance wildly") is None


def test_full_bank_size_and_rules():
    full = bank.full_bank()
    assert len(full) == 35062          # 330 classes; Huang et al.'s VirtualHome 1.0 bank had 47,522
    texts = set(full.texts)
    assert {"open fridge", "put milk in fridge", "switch on television", "stand up"} <= texts
    assert "switch on bed" not in texts             # a bed has no switch
    assert "put fridge in milk" not in texts        # nor contain things
    assert "put milk in milk" not in texts          # no skill uses one object twice
    # the simulator's class exceptions, per argument: EAI's goals put plates ON the dishwasher
    assert {"put plate on dishwasher", "type on keyboard", "grab water"} <= texts
    assert "put dishwasher on plate" not in texts
    assert full.digest == bank.full_bank().digest   # stable order


def test_scene_bank_has_only_the_scene_objects():
    graph = resources.initial_graph("TrimmedTestScene1")
    scene = bank.scene_bank(graph)
    assert len(scene) == 2177
    assert scene.objects() == set(bank.scene_properties(graph))
    assert "character" not in scene.objects()
    assert {"open freezer", "walk to dining room", "switch on television"} <= set(scene.texts)
    assert "open fridge" not in scene.texts         # this scene has a freezer, no fridge


def test_unknown_scene_is_a_clear_error():
    with pytest.raises(KeyError, match="unknown scene 'Mars'"):
        resources.initial_graph("Mars")


def test_human_programs_are_loaded():
    programs = resources.human_programs()
    assert len(programs) == 518
    assert len({p.task for p in programs}) == 26
    assert all(p.script and p.task for p in programs)
