"""Method interpret's grammar and condition index on worlds at their edges, with the real embedded
model (llama.cpp parses and decodes under each grammar) and the real embedder: names that need
escaping, names that lead others, a literal of no argument, thousands of literals; a world that
admits no condition, or only action goals, interprets to nothing (or what it has) without a crash."""
from __future__ import annotations

import pytest

from llm_planner_ros.core.errors import CancelToken
from llm_planner_ros.interpretation.conditions import Condition, ConditionIndex
from llm_planner_ros.interpretation.interpreter import GoalInterpreter
from llm_planner_ros.interpretation.literals import LiteralWriter
from llm_planner_ros.interpretation.menu import MenuSettings
from llm_planner_ros.llm.base import SamplingParams
from llm_planner_ros.llm.constraint import LiteralConstraint
from llm_planner_ros.profiles.virtualhome.simulator import VirtualHomeExecutor

ODD = ['(on "tv")', '(in cup\\ box\\\\)', "(on café)", "(holds 日本 杯子)", "(x a\x01b\x7f)", "(p ::= |)",
       "(p [a-z]* root)", "(on 🍺)", "(done)", "(on cup)", "(on cup_big)", "(on cu)", "(on_x cup)", "(on)"]


@pytest.mark.parametrize("literals", [ODD, ODD[:1], ["(on " + "x" * 40 + ")", "(on y)"]],
                         ids=["odd", "one", "long"])
def test_llama_cpp_decodes_under_the_grammar_of_odd_names_and_only_names_them(smollm2, literals):
    constraint = LiteralConstraint.of(literals, max_items=3)
    params = SamplingParams(temperature=0.0, max_tokens=160, stop=("\n",), constraint=constraint)
    for prompt in ("Task: watch tv\nGoal:", "Task: put the cup in the box\nGoal: (on cu) (on_x cup)\n\nTask: x\nGoal:"):
        text = smollm2.complete(prompt, 1, params, CancelToken())[0].text
        report = constraint.parse_report(text)
        assert report.kept and not report.rejected, text
        assert all(lit in literals for lit in report.kept)


def test_thousands_of_literals_make_a_small_grammar(smollm2):
    literals = [f"(on obj{i})" for i in range(3000)] + \
               [f"(inside obj{i} box{j})" for i in range(300) for j in range(10)]
    constraint = LiteralConstraint.of(literals, max_items=2)
    assert len(constraint.gbnf()) < 50_000   # factored by predicate and argument, not one rule per literal
    params = SamplingParams(temperature=0.0, max_tokens=24, stop=("\n",), constraint=constraint)
    kept = constraint.parse(smollm2.complete("Task: watch tv\nGoal:", 1, params, CancelToken())[0].text)
    assert kept and all(lit in constraint for lit in kept)


@pytest.mark.parametrize("conditions", [[], [Condition("I watch the TV.", (), ("WATCH",))]], ids=["none", "actions"])
def test_a_world_without_literal_conditions_interprets_without_a_crash(smollm2, embedder, conditions):
    world = VirtualHomeExecutor().world_state()
    interpreter = GoalInterpreter(smollm2, embedder, [], lambda w: list(conditions), with_task_text=True,
                                  orient=True, menu=MenuSettings(), writer=LiteralWriter(smollm2, 4),
                                  absent_below=0.6)
    found = interpreter.interpret("Turn on the lamp", world)
    assert found.conditions == conditions and found.written == [] and found.absent == ["lamp"]
    assert interpreter.retrieve("Turn on the lamp", world).conditions == conditions
    assert [c for c, _ in ConditionIndex(conditions, embedder).nearest("lamp", 3)] == conditions
