"""EAI's BEHAVIOR-100 through the product: a second world that nobody here wrote (issue 24).

    python bench/behavior.py                      # every row, all 100 activities
    python bench/behavior.py --rows "pddl, goal given" interpret --limit 10

Each activity's problem (EAI's, in virtualhome-eval) is a world of the BEHAVIOR profile, run on
the PDDL world executor from its initial state; success is the problem's goal holding at the end,
checked by the domain's own semantics (EAI checks in iGibson, which cannot run here: a different
check). Rows, named for what the planner is given:
  gold plan, replayed        EAI's gold PDDL plan (resources/behavior/gold_pddl_plan.json), step by step
  human sequences, mapped    eai-eval's 100 human action sequences (iGibson annotations), mapped to the
                             domain's actions and replayed; each disagreement classed domain / annotation /
                             mapping (profiles/behavior/human.py)
  pddl, goal given           the problem's grounded goal, planned by Fast Downward, executed
  oracle goal, class level   the goal over classes (which instances is left to the planner)
  interpret                  the task sentence alone (the headline); the activity's own example held out
  interpret, embeddings only the conditions nearest the sentence, no LLM
  translated, reprompt       the LLM methods from the sentence (demonstrations: the other activities)
  heuristic                  Borro et al.'s search from the sentence, the grounded goal as its stop check
                             (the first --slow-limit activities: an LLM call per step over every option)
Columns: success, executable (no step failed), steps against the gold plan's, seconds per goal;
for interpretations, condition precision / recall / F1 against the annotated goal over classes
(this project's definitions: EAI's BEHAVIOR scorer needs iGibson). Writes behavior.json,
behavior.md and behavior.png under --out.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("OMP_NUM_THREADS", "1")

from llm_planner_ros.core.errors import CancelToken  # noqa: E402
from llm_planner_ros.core.request import parse_request  # noqa: E402
from llm_planner_ros.core.settings import PlannerSettings  # noqa: E402
from llm_planner_ros.executors.pddl_world import PddlWorldExecutor  # noqa: E402
from llm_planner_ros.pddl.semantics import PddlWorld, replay  # noqa: E402
from llm_planner_ros.profiles.behavior import (  # noqa: E402
    BehaviorProblem,
    behavior_profile,
    class_level,
    problem,
    problem_names,
)

ROWS: dict[str, dict] = {
    "gold plan, replayed": {},
    "human sequences, mapped": {"human": True},
    "pddl, goal given": {"method": "pddl"},
    "oracle goal, class level": {"method": "pddl", "class_level": True},
    "interpret": {"method": "interpret"},
    "interpret, embeddings only": {"method": "interpret", "interpret_from": "text"},
    "translated": {"method": "translated"},
    "reprompt (cause)": {"method": "reprompt"},
    "heuristic, goal given as its stop": {"method": "heuristic"},
}
SLOW = ("heuristic",)   # an LLM call per step over every applicable skill: --slow-limit
# EAI's published BEHAVIOR figures (its leaderboard data): other models, other checks (iGibson)
ANCHORS = [("EAI: Claude-3.5 Sonnet, goal interpretation F1 (given objects and initial state)", "F1 82.7"),
           ("EAI: o1-preview, action sequencing success (iGibson check)", "81.0%"),
           ("EAI: o1-preview, subgoal decomposition success (iGibson check)", "57.0%")]


def class_goal(lines) -> set[str]:
    return {class_level(line) for line in lines if line.startswith("(")}


def run_gold(p: BehaviorProblem) -> dict:
    t0 = time.perf_counter()
    world, _ = PddlWorld.from_texts(behavior_profile(p.name).domain_text, p.world_text)
    ran, missing = replay(world, p.gold_plan)
    return {"success": ran == len(p.gold_plan) and p.reached(world), "executable": not missing,
            "steps": ran, "seconds": time.perf_counter() - t0, "detail": "; ".join(missing[:1])}


def run_human(p: BehaviorProblem) -> dict:
    from llm_planner_ros.profiles.behavior.human import replay as replay_human

    t0 = time.perf_counter()
    r = replay_human(p.name)
    if r is None:
        return {"success": False, "executable": False, "steps": 0, "seconds": 0.0, "termination": "no annotation"}
    return {"success": r.reached, "executable": not r.disagreement, "steps": r.executed,
            "seconds": time.perf_counter() - t0, "termination": r.disagreement or "ran",
            "detail": r.why, "disagreement": r.disagreement}


def build_service(row: dict, settings: list[str]):
    from llm_planner_ros.planning.goal_directed import GoalDirectedSettings
    from llm_planner_ros.planning.service import BackendSettings, PlanningService

    extra = {"interpret_from": row["interpret_from"]} if "interpret_from" in row else {}
    extra.update(dict(s.split("=", 1) for s in settings))
    holder: dict = {}
    service = PlanningService.build(BackendSettings(), PlannerSettings(),
                                    executor_factory=lambda scene, task: holder["executor"],
                                    robot_world=lambda executes: holder["executor"],
                                    goal_directed=GoalDirectedSettings(**extra))
    return service, holder


def run_goal(service, holder: dict, row: dict, p: BehaviorProblem) -> dict:
    executor = PddlWorldExecutor(behavior_profile(p.name))
    holder["executor"] = executor
    fields: dict = {"task": p.sentence or p.activity.replace("_", " "), "method": row["method"], "execute": True,
                    "options": {"hold_out_tasks": [p.sentence]} if p.sentence else {}}
    if row["method"] in ("pddl", "heuristic"):   # heuristic: the search stops when the goal holds
        fields["goal_conditions"] = list(p.class_goal() if row.get("class_level") else p.goal)
    t0 = time.perf_counter()
    try:
        result = service.plan(parse_request(**fields), lambda event: None, CancelToken())
    except Exception as exc:   # an invalid goal or an error counts as a failure, with its reason
        return {"success": False, "executable": False, "steps": 0, "seconds": time.perf_counter() - t0,
                "termination": type(exc).__name__, "detail": str(exc)[:300]}
    out = {"success": p.reached(executor.world), "executable": all(s.executed for s in result.steps),
           "steps": sum(s.executed for s in result.steps), "seconds": time.perf_counter() - t0,
           "termination": result.termination_reason.value, "detail": result.detail[:300],
           "goal_conditions": list(result.goal_conditions)}
    if row["method"] == "interpret":
        said, wanted = class_goal(result.goal_conditions), set(p.class_goal())
        hit = len(said & wanted)
        out.update(precision=hit / len(said) if said else 0.0, recall=hit / len(wanted) if wanted else 0.0)
    return out


def summarize(name: str, records: list[dict], gold_steps: dict[str, int]) -> dict:
    n = len(records)
    out = {"row": name, "goals": n, "success": sum(r["success"] for r in records) / n,
           "executable": sum(r["executable"] for r in records) / n,
           "median_s": statistics.median(r["seconds"] for r in records)}
    losses: dict[str, int] = {}
    for r in records:
        if not r["success"]:
            why = (f"{r['disagreement']}: {_reason(r['detail'])}" if r.get("disagreement")
                   else "reached its own goal, not the annotated one" if r.get("termination") == "goal_reached"
                   else "fell back to the LLM method, which failed" if "fell back" in r.get("detail", "")
                   else r.get("termination") or r.get("detail", "")[:60] or "did not execute")
            losses[why] = losses.get(why, 0) + 1
    out["losses"] = dict(sorted(losses.items(), key=lambda kv: -kv[1]))
    reached = [r for r in records if r["success"]]
    if reached:
        out["steps_vs_gold"] = statistics.median(r["steps"] / max(gold_steps[r["problem"]], 1) for r in reached)
    if "precision" in records[0]:
        p = statistics.mean(r["precision"] for r in records)
        rc = statistics.mean(r["recall"] for r in records)
        out.update(precision=p, recall=rc, f1=2 * p * rc / (p + rc) if p + rc else 0.0)
    return out


def _reason(detail: str) -> str:
    """A human sequence's disagreement, without its step and object ("one hand", "not kept")."""
    for key, said in (("handsfull", "a hand is full (the domain has one)"),
                      ("every container", "a container that does not open must be open"),
                      ("one hand", "a second object in hand (one hand)"), ("no such action", "no such action"),
                      ("keeps", "the problem keeps fewer objects of the class"),
                      ("in EAI's PDDL problem", "an object the problem does not have"),
                      ("holds nothing", "the hand holds nothing"), (": (", "a precondition fails after mapping")):
        if key in detail:
            return said
    return detail[:60]


def table(rows: list[dict]) -> str:
    lines = ["| row | goals | success | executable | steps / gold (median) | median s/goal | goal P / R / F1 |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        f1 = f"{r['precision']:.2f} / {r['recall']:.2f} / **{100 * r['f1']:.1f}**" if "f1" in r else "—"
        ratio = f"{r['steps_vs_gold']:.2f}" if "steps_vs_gold" in r else "—"
        lines.append(f"| {r['row']} | {r['goals']} | **{100 * r['success']:.1f}%** | {100 * r['executable']:.1f}% | "
                     f"{ratio} | {r['median_s']:.2f} | {f1} |")
    lines += [f"| {name} | 100 | {figure} (anchor) | — | — | — | — |" for name, figure in ANCHORS]
    lines += ["", "Where the failures end, per row:"]
    lines += [f"- {r['row']}: " + "; ".join(f"{why}: {n}" for why, n in r["losses"].items())
              for r in rows if r["losses"]]
    return "\n".join(lines)


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 0.5 * len(rows) + 1.5))
    ax.barh([r["row"] for r in rows][::-1], [100 * r["success"] for r in rows][::-1], color="#27a")
    ax.set_xlabel("success (%): the problem's goal holds at the end (PDDL check)")
    ax.set_xlim(0, 100)
    ax.set_title("BEHAVIOR-100 through llm_planner_ros (embedded SmolLM2-135M)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", nargs="*", default=list(ROWS), choices=list(ROWS))
    parser.add_argument("--limit", type=int, default=None, help="the first N activities (default: all 100)")
    parser.add_argument("--set", nargs="*", default=["pddl_time_limit_s=3"], metavar="KEY=VALUE",
                        help="goal-directed settings (default: Fast Downward's limit 3 s a plan; EAI's problems "
                             "solve in under 1 s, and interpret's probes of unsolvable goals then end sooner)")
    parser.add_argument("--slow-limit", type=int, default=20,
                        help="heuristic runs on the first N activities (about 10 s a goal on 2 cores)")
    parser.add_argument("--out", default="bench/results")
    args = parser.parse_args()
    names = problem_names()[:args.limit]
    problems = [problem(n) for n in names]
    gold_steps = {p.name: len(p.gold_plan) for p in problems}
    summaries, records = [], {}
    t_all = time.perf_counter()
    for name in args.rows:
        row = ROWS[name]
        t0 = time.perf_counter()
        if not row:
            recs = [dict(run_gold(p), problem=p.name) for p in problems]
        elif row.get("human"):
            recs = [dict(run_human(p), problem=p.name) for p in problems]
        else:
            service, holder = build_service(row, args.set)
            chosen = problems[:args.slow_limit] if row["method"] in SLOW else problems
            recs = [dict(run_goal(service, holder, row, p), problem=p.name) for p in chosen]
        records[name] = recs
        summaries.append(dict(summarize(name, recs, gold_steps), wall_s=time.perf_counter() - t0))
        print(f"{name}: {100 * summaries[-1]['success']:.1f}% in {summaries[-1]['wall_s']:.0f}s", flush=True)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    text = table(summaries)
    print("\n" + text + f"\n\n{len(problems)} activities, {time.perf_counter() - t_all:.0f}s in all")
    (out / "behavior.md").write_text(text + "\n")
    (out / "behavior.json").write_text(json.dumps({"rows": summaries, "records": records}, indent=1))
    plot(summaries, out / "behavior.png")
    print(f"wrote {out / 'behavior.md'}, behavior.json and behavior.png")


if __name__ == "__main__":
    main()
