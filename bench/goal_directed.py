"""What cutting the problem to the goal buys: Fast Downward on the cut problem and on the whole graph.

    python bench/goal_directed.py [--per-task 1] [--full-limit 30] [--out bench/results]

Per EAI program (EAI's goal conditions): the time to read the world's facts off the live graph,
the problem's size cut and whole, and the planner's time (translation + search) for each.
Writes goal_directed.json and goal_directed.md.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm_planner_ros"))   # the package folder

from llm_planner_ros.core.world import WorldState  # noqa: E402
from llm_planner_ros.evaluation.eai import select_tasks  # noqa: E402
from llm_planner_ros.pddl import fast_downward  # noqa: E402
from llm_planner_ros.pddl.goals import contradictions, ground_goal  # noqa: E402
from llm_planner_ros.pddl.invariants import pairs  # noqa: E402
from llm_planner_ros.pddl.problem import Problem, build_problem  # noqa: E402
from llm_planner_ros.planning.goal_directed import GoalDirectedSettings  # noqa: E402
from llm_planner_ros.profiles.virtualhome.goals import MUTEX, eai_goal_spec, vocabulary  # noqa: E402
from llm_planner_ros.profiles.virtualhome.problem import relevant_objects  # noqa: E402
from llm_planner_ros.profiles.virtualhome.resources import domain_text  # noqa: E402
from llm_planner_ros.profiles.virtualhome.simulator import VirtualHomeExecutor  # noqa: E402
from llm_planner_ros.profiles.virtualhome.tasks import eai_tasks  # noqa: E402


def whole_problem(world: WorldState, goal) -> Problem:
    """Every object of the graph (what the cut avoids)."""
    decl = " ".join(f"{o} - {t}" for o, t in sorted(world.objects.items()))
    init = " ".join(f"({' '.join(a)})" for a in sorted(world.facts))
    return Problem(f"(define (problem whole) (:domain virtualhome) (:objects {decl}) (:init {init}) "
                   f"(:goal {goal.pddl()}))", frozenset(world.objects), len(world.facts))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-task", type=int, default=1)
    parser.add_argument("--full-limit", type=float, default=30.0, help="time limit on the whole graph (s)")
    parser.add_argument("--out", default="bench/results")
    args = parser.parse_args()
    search = GoalDirectedSettings().pddl_search
    rows, skipped = [], []
    for task in select_tasks(eai_tasks(), per_task=args.per_task):
        sim = VirtualHomeExecutor(graph=task.graph, goal=task.goal)
        t0 = time.perf_counter()
        world = sim.world_state()
        world_ms = 1000 * (time.perf_counter() - t0)
        goal = ground_goal(eai_goal_spec(task.goal, task.graph), world, vocabulary())
        if contradictions(goal, pairs(MUTEX)) or not (goal.alternatives[0] or goal.actions):
            skipped.append(task.identifier)   # nothing to plan: counted and named, not hidden
            continue
        cut = build_problem(world, goal, "virtualhome", relevant=relevant_objects)
        cut_out = fast_downward.solve(domain_text(), cut.text, 10.0, search)
        whole = whole_problem(world, goal)
        whole_out = fast_downward.solve(domain_text(), whole.text, args.full_limit, search)
        rows.append({"program": task.identifier, "task": task.task, "world_ms": round(world_ms, 1),
                     "cut_objects": len(cut.objects), "cut_facts": cut.num_facts, "cut_status": cut_out.status,
                     "cut_s": round(cut_out.seconds, 3), "whole_objects": len(whole.objects),
                     "whole_facts": whole.num_facts, "whole_status": whole_out.status,
                     "whole_s": round(whole_out.seconds, 2)})
        print(rows[-1], flush=True)
    med = lambda key: statistics.median(r[key] for r in rows)   # noqa: E731
    summary = {"programs": len(rows), "skipped": skipped, "search": search, "median_world_ms": med("world_ms"),
               "median_cut_objects": med("cut_objects"), "median_cut_s": med("cut_s"),
               "cut_solved": sum(r["cut_status"] == "solved" for r in rows),
               "median_whole_objects": med("whole_objects"), "median_whole_s": med("whole_s"),
               "whole_solved": sum(r["whole_status"] == "solved" for r in rows),
               "whole_limit_s": args.full_limit}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "goal_directed.json").write_text(json.dumps({"summary": summary, "rows": rows}, indent=1))
    lines = ["| problem | programs | median objects | median facts | solved | median planner s |",
             "|---|---|---|---|---|---|",
             f"| cut to the goal | {len(rows)} | {med('cut_objects')} | {med('cut_facts')} | "
             f"{summary['cut_solved']} | {med('cut_s'):.2f} |",
             f"| whole graph ({args.full_limit:g} s limit) | {len(rows)} | {med('whole_objects')} | "
             f"{med('whole_facts')} | {summary['whole_solved']} | {med('whole_s'):.2f} |",
             "", f"Reading the facts off the live graph: median {med('world_ms'):.0f} ms.",
             "", f"{len(skipped)} of {len(rows) + len(skipped)} programs skipped (their goal contradicts itself "
                 f"or is empty){': ' + ', '.join(skipped) if skipped else ''}."]
    (out / "goal_directed.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
