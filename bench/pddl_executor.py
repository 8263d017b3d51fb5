"""The PDDL world executor's checker against unified-planning's sequential simulator, step by step.

The same plans (EAI's gold plans for the BEHAVIOR-100 problems, Fast Downward's for the
mobile manipulator's examples) replayed by both: each action's preconditions checked, then its
effects applied. Columns: plans, steps, time per step (median and mean), plans that reach their
goal, and the agreement of the two on every step (both apply it, or both refuse it).

    python bench/pddl_executor.py            # BEHAVIOR's 100 plans (~1-2 min on 2 cores)
    python bench/pddl_executor.py --limit 20
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm_planner_ros"))   # the package folder

from llm_planner_ros.pddl.domain import parse_sexpr  # noqa: E402
from llm_planner_ros.pddl.semantics import PddlWorld  # noqa: E402
from llm_planner_ros.profiles.behavior import behavior_profile, problem, problem_names  # noqa: E402


def ours(domain_text: str, world_text: str, plan, goal) -> dict:
    t0 = time.perf_counter()
    world, _ = PddlWorld.from_texts(domain_text, world_text)
    load_s = time.perf_counter() - t0
    times, applied = [], []
    for action in plan:
        t0 = time.perf_counter()
        ok = not world.missing(action)
        if ok:
            world.apply(action)
        times.append(time.perf_counter() - t0)
        applied.append(ok)
        if not ok:
            break
    return {"times": times, "applied": applied, "reached": world.holds(["and"] + goal), "load_s": load_s}


def unified_planning(domain_text: str, world_text: str, plan) -> dict:
    import tempfile

    from unified_planning.io import PDDLReader
    from unified_planning.shortcuts import SequentialSimulator, get_environment

    get_environment().credits_stream = None
    import re

    # unified-planning wants one name space: an action named as a type or predicate ("open",
    # "place") is refused, so its actions are read under a prefix
    domain_text = re.sub(r"\(:action\s+([\w-]+)", r"(:action act_\1", domain_text, flags=re.IGNORECASE)
    with tempfile.TemporaryDirectory() as tmp:
        d, p = Path(tmp) / "d.pddl", Path(tmp) / "p.pddl"
        d.write_text(domain_text)
        p.write_text(world_text)
        t0 = time.perf_counter()
        problem_up = PDDLReader().parse_problem(str(d), str(p))
        load_s = time.perf_counter() - t0
    simulator = SequentialSimulator(problem_up)
    state = simulator.get_initial_state()
    times, applied = [], []
    for name, *args in plan:
        action = problem_up.action(f"act_{name}")
        params = [problem_up.object(a) for a in args]
        t0 = time.perf_counter()
        ok = simulator.is_applicable(state, action, params)
        if ok:
            state = simulator.apply(state, action, params)
        times.append(time.perf_counter() - t0)
        applied.append(ok)
        if not ok:
            break
    reached = simulator.is_goal(state) if all(applied) else False
    return {"times": times, "applied": applied, "reached": reached, "load_s": load_s}


def behavior_plans(limit):
    """EAI's gold plans for the BEHAVIOR-100 problems: (name, domain, world, plan, goal)."""
    for name in problem_names()[:limit]:
        p = problem(name)
        if p.gold_plan:
            yield name, behavior_profile(name).domain_text, p.world_text, p.gold_plan, list(p.goal)


def mobile_manipulator_plans():
    """Fast Downward's plans for the shipped mobile manipulator's example goals, in its reference world."""
    from llm_planner_ros.pddl import fast_downward
    from llm_planner_ros.pddl.goals import ground_goal, parse_goal
    from llm_planner_ros.pddl.problem import build_problem
    from llm_planner_ros.profiles.loader import load_profile, shipped
    from llm_planner_ros.profiles.skills import reference_world

    profile = load_profile(shipped("mobile_manipulator"))
    vocabulary, world = profile.goal_vocabulary(), reference_world(profile)
    for example in profile.spec.examples:
        goal = ground_goal(parse_goal(example.goal, (), vocabulary), world, vocabulary)
        problem_text = build_problem(world, goal, "mobile_manipulator").text
        outcome = fast_downward.solve(profile.domain_text, problem_text, 10.0, "astar(ff())")
        if outcome.status == "solved":
            yield example.task, profile.domain_text, problem_text, outcome.actions, [goal.pddl()]


def compare(plans) -> tuple[dict, list[str], tuple[int, int]]:
    rows: dict[str, list] = {"ours (pddl/semantics.py)": [], "unified-planning SequentialSimulator": []}
    skipped, agree, total = [], 0, 0
    for name, domain_text, world_text, plan, goal in plans:
        a = ours(domain_text, world_text, plan, [parse_sexpr(g)[0] for g in goal])
        rows["ours (pddl/semantics.py)"].append(a)
        try:
            b = unified_planning(domain_text, world_text, plan)
        except Exception as exc:   # a problem unified-planning does not read is counted, not hidden
            skipped.append(f"{name}: {type(exc).__name__}: {str(exc)[:60]}")
            continue
        rows["unified-planning SequentialSimulator"].append(b)
        n = min(len(a["applied"]), len(b["applied"]))
        agree += sum(x == y for x, y in zip(a["applied"][:n], b["applied"][:n]))
        agree += len(a["applied"]) == len(b["applied"])   # both stop at the same step
        total += n + 1
    return rows, skipped, (agree, total)


def summarize(world: str, rows: dict) -> list[dict]:
    out = []
    for label, recs in rows.items():
        times = [t for r in recs for t in r["times"]]
        out.append({"world": world, "row": label, "plans": len(recs), "steps": len(times),
                    "median_us": 1e6 * statistics.median(times) if times else None,
                    "mean_us": 1e6 * statistics.fmean(times) if times else None,
                    "reached": sum(r["reached"] for r in recs),
                    "load_s": statistics.fmean([r.get("load_s", 0.0) for r in recs]) if recs else None})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None, help="the first N BEHAVIOR problems (default: all)")
    parser.add_argument("--out", default="bench/results")
    args = parser.parse_args()
    t_all = time.perf_counter()
    summary, notes = [], []
    for world, plans in (("mobile manipulator (FD plans of its 14 examples)", mobile_manipulator_plans()),
                         ("BEHAVIOR-100 (EAI's gold plans)", behavior_plans(args.limit))):
        rows, skipped, (agree, total) = compare(list(plans))
        summary += summarize(world, rows)
        notes.append(f"{world}: the two agree on {agree}/{total} step outcomes (apply or refuse, and where each "
                     f"stops); unified-planning did not read {len(skipped)} problem(s)"
                     + (f", e.g. {skipped[0]}" if skipped else ""))
    fmt = lambda v, f: "—" if v is None else format(v, f)   # noqa: E731
    lines = ["| world | checker | plans | steps | median µs/step | mean µs/step | plans reaching their goal | "
             "parse s/problem |", "|---|---|---|---|---|---|---|---|"]
    lines += [f"| {r['world']} | {r['row']} | {r['plans']} | {r['steps']} | {fmt(r['median_us'], '.0f')} | "
              f"{fmt(r['mean_us'], '.0f')} | {r['reached']}/{r['plans']} | {fmt(r['load_s'], '.2f')} |"
              for r in summary]
    text = "\n".join(lines) + "\n\n" + "\n".join(f"- {n}" for n in notes)
    print(text + f"\n\n{time.perf_counter() - t_all:.0f}s in all")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "pddl_executor.md").write_text(text + "\n")
    (out / "pddl_executor.json").write_text(json.dumps({"rows": summary, "notes": notes}, indent=1))
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = [r for r in summary if r["median_us"]]
    fig, ax = plt.subplots(figsize=(8, 2.6))
    ax.barh([f"{r['row']}\n{r['world'][:28]}" for r in shown], [r["median_us"] for r in shown], color="#27a")
    ax.set_xscale("log")
    ax.set_xlabel("median µs per step (precondition check + effects)")
    fig.tight_layout()
    fig.savefig(out / "pddl_executor.png", dpi=110)
    print(f"wrote {out / 'pddl_executor.md'}, pddl_executor.json and pddl_executor.png")


if __name__ == "__main__":
    main()
