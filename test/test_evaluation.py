"""Metrics on hand-made cases, and human programs through our executor and EAI's own scorer."""
from __future__ import annotations

import json

import pytest

from llm_planner_ros.evaluation import eai
from llm_planner_ros.evaluation.metrics import as_steps, executable, lcs_length, lcs_ratio
from llm_planner_ros.skills import resources
from llm_planner_ros.skills.vocabulary import make_skill


def test_lcs_on_known_sequences():
    assert lcs_length("abcd", "acd") == 3
    assert lcs_length("abc", "") == 0
    assert lcs_length("AGGTAB", "GXTXAYB") == 4
    gen = ["[WALK] <kitchen> (1)", "[OPEN] <fridge> (1)"]
    refs = [["[WALK] <kitchen> (1.7)", "[FIND] <milk> (1.3)", "[OPEN] <fridge> (1.9)", "[GRAB] <milk> (1.3)"],
            ["[WALK] <kitchen> (2)", "[OPEN] <fridge> (4)", "[CLOSE] <fridge> (4)"]]
    assert lcs_ratio(gen, refs[:1]) == pytest.approx(2 / 4)      # normalised by the longer program
    assert lcs_ratio(gen, refs) == pytest.approx(2 / 3)          # maximised over references
    assert lcs_ratio([], refs) == 0.0
    assert lcs_ratio([make_skill("WALK", ["kitchen"])], [gen]) == pytest.approx(1 / 2)   # skills compare too
    assert as_steps(["not a script line"]) == [("not a script line", ())]


def test_a_human_program_is_executable_and_meets_its_goal():
    program = next(p for p in resources.human_programs() if p.program_id == "file160_1")
    graph = resources.scene_graphs(program.program_id)[0]
    goal = resources.eai_goal(program.program_id)
    assert executable(program.script, graph, goal) == (True, True)
    assert executable(program.script[::-1], graph, goal)[0] is False      # switch on before walking there
    assert executable([], graph) == (False, None)


def test_eai_output_format():
    out = eai.eai_output(["[WALK] <light> (411)", "[SWITCHON] <light> (411)", "[PUTIN] <a> (1) <b> (2)"])
    assert out == '{\n"WALK": ["light"],\n"SWITCHON": ["light"],\n"PUTIN": ["a", "b"]\n}'
    assert json.loads(out) == {"WALK": ["light"], "SWITCHON": ["light"], "PUTIN": ["a", "b"]}


@pytest.fixture(scope="module")
def scored_subset():
    """EAI's scorer on 21 EAI programs: the shipped GPT-4o answers, and the human programs."""
    gpt4o = eai.shipped_responses("gpt-4o-2024-05-13")[::17]          # 21 programs across the tasks
    goals = [resources.eai_goal(r["identifier"]) for r in gpt4o]
    assert any(g["actions"] for g in goals) and any("state" in c for g in goals for c in g["goal"]) \
        and any("relation_type" in c for g in goals for c in g["goal"])   # else EAI's scorer divides by 0
    by_id = {p.program_id.removeprefix("file"): p for p in resources.human_programs()}
    human = [{"identifier": r["identifier"], "llm_output": eai.eai_output(by_id[r["identifier"]].script)}
             for r in gpt4o]
    return gpt4o, by_id, eai.score({"gpt-4o": gpt4o, "human": human})


def test_eai_scorer_runs_on_shipped_answers(scored_subset):
    gpt4o, _, result = scored_subset
    summary = result["gpt-4o"]["summary"]
    assert 0 <= summary["goal_evaluation"]["task_success_rate"] <= 100
    assert 0 < summary["trajectory_evaluation"]["execution_success_rate"] <= 100
    # EAI's known defect: programs with two or more relation goals are silently left out
    many_relations = {r["identifier"] for r in gpt4o
                      if sum("relation_type" in c for c in resources.eai_goal(r["identifier"])["goal"]) >= 2}
    assert many_relations
    assert set(result["gpt-4o"]["programs"]) == {r["identifier"] for r in gpt4o} - many_relations


def test_eai_scorer_collapses_repeated_verbs(scored_subset):
    """EAI's known defect: json.loads keeps one entry per verb, so human programs whose verbs
    repeat are scored as failing although each executes and meets its goal step by step."""
    gpt4o, by_id, result = scored_subset
    ours = [executable(by_id[r["identifier"]].script, resources.scene_graphs(by_id[r["identifier"]].program_id)[0],
                       resources.eai_goal(r["identifier"])) for r in gpt4o]
    assert all(ours) and all(e == (True, True) for e in ours)
    eai_rate = result["human"]["summary"]["trajectory_evaluation"]["execution_success_rate"]
    assert eai_rate < 100.0
    scored = result["human"]["programs"]
    repeated = [i for i in scored if len({a for a, _ in as_steps(by_id[i].script)}) < len(by_id[i].script)]
    assert repeated and not all(scored[i]["executable"] for i in repeated)
