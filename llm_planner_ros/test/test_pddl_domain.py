"""The PDDL domain agrees with the simulator: human programs replayed in both (a sample here;
bench/domain_agreement.py runs all 518)."""
from __future__ import annotations

import pytest

from llm_planner_ros.evaluation.domain_agreement import replay
from llm_planner_ros.profiles.virtualhome import resources

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

# one program of each of these tasks: walking, containers, switches, plugs, sitting, lying, hands
SAMPLE_TASKS = ("Watch TV", "Put groceries in Fridge", "Wash dishes with dishwasher", "Go to sleep", "Drink",
                "Work", "Make coffee", "Read book")


def sample() -> list:
    programs = resources.human_programs()
    return [next(p for p in programs if p.task == task) for task in SAMPLE_TASKS]


@pytest.mark.parametrize("program", sample(), ids=lambda p: f"{p.task}:{p.program_id}")
def test_every_human_step_is_allowed_and_no_effect_is_invented(program):
    report = replay(program.program_id, program.script, resources.scene_graphs(program.program_id)[0])
    assert report.simulator_failed is None
    assert report.checked >= len(program.script) - 2          # nearly every step is within the domain
    assert report.disagreements == [], report.disagreements


def test_a_wrong_domain_is_caught(monkeypatch, tmp_path):
    """The check can fail: a domain whose switch_on forgets that a switched-on thing is no longer
    off claims a fact the simulator lacks."""
    from llm_planner_ros.evaluation import domain_agreement as agreement

    text = agreement.domain_text()
    broken = text.replace("(on ?o) (not (off ?o)) (did_switchon ?o)", "(on ?o) (did_switchon ?o)")
    assert broken != text
    monkeypatch.setattr(agreement, "domain_text", lambda: broken)
    path = tmp_path / "broken.pddl"   # pytest's folder: nothing left in /tmp
    path.write_text(broken)
    monkeypatch.setattr(agreement, "domain_path", lambda: str(path))
    program = next(p for p in resources.human_programs() if p.task == "Watch TV"
                   and any("[SWITCHON]" in line for line in p.script))
    report = replay(program.program_id, program.script, resources.scene_graphs(program.program_id)[0])
    assert any(d.kind == "effect" and "('off'," in d.detail for d in report.disagreements), report.disagreements


def test_refused_skills_leave_the_domain():
    from llm_planner_ros.pddl.domain import load_domain
    from llm_planner_ros.pddl.fast_downward import solve
    from llm_planner_ros.profiles.virtualhome.resources import domain_text

    domain = load_domain(domain_text())
    walks = {n for n, a in domain.actions.items() if a.skill_verb == "WALK"}
    pruned = domain.without_skills({"WALK"})
    assert walks and not walks & set(pruned.actions) and set(pruned.actions) == set(domain.actions) - walks
    assert all(f"(:action {n}" not in pruned.text.lower() for n in walks)
    assert load_domain(pruned.text).actions.keys() == pruned.actions.keys()   # still a domain that parses
    assert domain.without_skills(set()) is domain
    problem = ("(define (problem p) (:domain virtualhome) (:objects c - character) (:init) "
               "(:goal (and)))")
    assert solve(pruned.text, problem, 10.0, "astar(ff())").status == "solved"   # Fast Downward reads it
