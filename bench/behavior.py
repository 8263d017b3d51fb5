"""EAI's BEHAVIOR-100 through the product: a second world that nobody here wrote (issue 24).

    python bench/behavior.py                      # every row, all 100 activities
    python bench/behavior.py --rows "pddl, goal given" interpret --limit 10
    python bench/behavior.py --rows interpret --model smollm2-135m qwen2.5-coder-1.5b

Each activity's problem (EAI's, in virtualhome-eval) is a world of the BEHAVIOR profile, run on
the PDDL world executor from its initial state; success is the problem's goal holding at the end,
checked by the domain's own semantics (EAI checks in iGibson, which cannot run here: a different
check). That goal holds at most four literals, one grounding of the activity's BDDL goal cut short;
a second table gives success at the whole goal, any of the groundings eai-eval lists over the
problem's objects (EAI's gold plans reach it in 69 of 100). Rows, named for what the planner is given:
  gold plan, replayed        EAI's gold PDDL plan (resources/behavior/gold_pddl_plan.json), step by step
  human sequences, mapped    eai-eval's 100 human action sequences (iGibson annotations), mapped to the
                             domain's actions and replayed; each disagreement classed domain / annotation /
                             mapping (profiles/behavior/human.py)
  pddl, goal given           the problem's grounded goal, planned by Fast Downward, executed
  oracle goal, class level   the goal over classes (which instances is left to the planner)
  interpret                  the task sentence alone (the headline); the activity's own example held out;
                             the model chooses the goal among candidate conditions (interpret_choose)
  interpret, free text (before issue 36)  interpret_choose false: the model's free-text end state,
                             its sentences translated to conditions by embeddings (the route before issue 36)
  interpret, embeddings only the conditions nearest the sentence, no LLM
  translated, reprompt       the LLM methods from the sentence (demonstrations: the other activities)
  heuristic                  Borro et al.'s search from the sentence, the grounded goal as its stop check
                             (the first --slow-limit activities: an LLM call per step over every option)
Columns: success, executable (no step failed), steps against the gold plan's, seconds per goal;
for interpretations, condition precision / recall / F1 against the annotated goal over classes
(this project's definitions: EAI's BEHAVIOR scorer needs iGibson). Writes behavior.json,
behavior.md and behavior.png under --out.
Models (--model: names of the registry MODELS, llm_planner_ros/llm/models.py; default: the default
model alone, as before): each row that runs the LLM (interpret but embeddings only, translated,
reprompt, heuristic) runs once per model, named "<row> [<model>]" when more than one model is given
or the model is not the default (e.g. "interpret [qwen2.5-coder-1.5b]"), else "<row>"; the others
run once under their own name with the default model's settings. A model that is not shipped is
fetched first (python -m llm_planner_ros model fetch NAME), or given as a file with --set
llm_model_path=FILE (with one --model only).
A row's settings, each later one winning over the earlier ones: (1) the model's: llm_model, its
registry context as llm_context (so that it holds with llm_model_path too) and the registry's
settings for the model; (2) --set (any setting of the service, for every row); (3) the row's own
keys (interpret_from, interpret_choose), so that a row stays what its name says. --set llm_model is
refused: the model is --model's.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Optional

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm_planner_ros"))   # the package folder
os.environ.setdefault("OMP_NUM_THREADS", "1")

from llm_planner_ros.core.errors import CancelToken  # noqa: E402
from llm_planner_ros.core.request import parse_request  # noqa: E402
from llm_planner_ros.evaluation.splits import SPLITS, half  # noqa: E402
from llm_planner_ros.executors.pddl_world import PddlWorldExecutor  # noqa: E402
from llm_planner_ros.llm.models import DEFAULT_MODEL, MODELS  # noqa: E402
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
    "interpret, free text (before issue 36)": {"method": "interpret", "interpret_choose": False},
    "interpret, embeddings only": {"method": "interpret", "interpret_from": "text"},
    "translated": {"method": "translated"},
    "reprompt (cause)": {"method": "reprompt"},
    "heuristic, goal given as its stop": {"method": "heuristic"},
}
ROW_KEYS = ("human", "method", "class_level")   # what a row is; its other keys are settings
LLM_METHODS = ("interpret", "translated", "reprompt", "heuristic")
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
            "whole_goal": p.reached_whole(world), "steps": ran, "seconds": time.perf_counter() - t0,
            "detail": "; ".join(missing[:1])}


def run_human(p: BehaviorProblem) -> dict:
    from llm_planner_ros.profiles.behavior.human import replay as replay_human

    t0 = time.perf_counter()
    r = replay_human(p.name)
    if r is None:
        return {"success": False, "executable": False, "steps": 0, "seconds": 0.0, "termination": "no annotation"}
    return {"success": r.reached, "executable": not r.disagreement, "steps": r.executed,
            "seconds": time.perf_counter() - t0, "termination": r.disagreement or "ran",
            "detail": r.why, "disagreement": r.disagreement}


def uses_llm(row: dict) -> bool:
    """Whether the row's method runs the LLM (so that it runs once per model)."""
    return row.get("method") in LLM_METHODS and row.get("interpret_from") != "text"


def row_name(name: str, model: Optional[str], models: list[str]) -> str:
    """``name`` with ``model`` appended where more than one model runs or it is not the default."""
    return name if model is None or models == [DEFAULT_MODEL] else f"{name} [{model}]"


def model_settings(model: Optional[str]) -> dict:
    """The settings that select ``model`` (None: none, the default model's); --set wins over them."""
    if model is None:
        return {}
    entry = MODELS[model]
    return {"llm_model": model, "llm_context": entry.context, **entry.settings}


def row_settings(row: dict, model: Optional[str], settings: dict) -> dict:
    """A row's settings: the model's, then ``settings`` (--set), then the row's own keys, each winning."""
    return {"interpret_confirm": "never",   # every goal runs: its outcome is what is measured
            **model_settings(model), **settings, **{k: v for k, v in row.items() if k not in ROW_KEYS}}


def model_label(row: dict, model: Optional[str], settings: dict) -> str:
    """The table's model column: the model the row runs, or none (with its fallback's, for interpret)."""
    path = settings.get("llm_model_path")

    def named(m: str) -> str:
        return f"{m} ({Path(path).name})" if path else m
    if model is not None:
        return named(model)
    if row.get("method") == "interpret" and settings.get("interpret_fallback", "reprompt") != "none":
        return f"none (fallback: {named(DEFAULT_MODEL)})"
    return "none"


def build_service(settings: dict):
    from llm_planner_ros.wiring import ServiceConfig, compose

    holder: dict = {}
    service = compose(ServiceConfig.from_flat(settings), executor_factory=lambda scene, task: holder["executor"],
                    robot_world=lambda executes: holder["executor"])
    return service, holder


def check_settings(parser: argparse.ArgumentParser, settings: dict, runs: list[tuple]) -> None:
    """Refuse what would make a row's name lie, a setting that does not exist, or a model that is
    not there, before anything runs."""
    from llm_planner_ros.core.errors import LLMError
    from llm_planner_ros.llm.models import model_file
    from llm_planner_ros.wiring import ServiceConfig, SettingsError

    models = {model for _, _, model in runs if model is not None}
    if "llm_model" in settings:
        parser.error("--set llm_model: name the model with --model")
    if "llm_model_path" in settings and len(models) > 1:
        parser.error("--set llm_model_path gives one file for every row: give one --model with it, or fetch "
                     "the models (python -m llm_planner_ros model fetch NAME)")
    embedded = settings.get("llm_backend", "embedded") == "embedded"
    if not embedded and models - {DEFAULT_MODEL}:
        parser.error("--model picks the embedded backend's model; --set llm_backend is not embedded")
    for _, name, model in runs:
        if ROWS[name].get("method"):
            try:
                ServiceConfig.from_flat(row_settings(ROWS[name], model, settings))
            except SettingsError as exc:
                parser.error(f"--set: {exc}")
    for model in sorted(models) if embedded and "llm_model_path" not in settings else []:
        try:
            model_file(model)
        except LLMError as exc:
            parser.error(str(exc))


def run_goal(service, holder: dict, row: dict, p: BehaviorProblem) -> dict:
    executor = PddlWorldExecutor(behavior_profile(p.name))
    holder["executor"] = executor
    fields: dict = {"task": p.sentence or p.activity.replace("_", " "), "method": row["method"], "execute": True,
                    "options": {"hold_out_tasks": [p.sentence]} if p.sentence else {}}
    if row["method"] in ("pddl", "heuristic"):   # heuristic: the search stops when the goal holds
        fields["goal_conditions"] = list(p.class_goal() if row.get("class_level") else p.goal)
    t0 = time.perf_counter()
    try:
        result, report = service.plan_with_report(parse_request(**fields), lambda event: None, CancelToken())
    except Exception as exc:   # an invalid goal or an error counts as a failure, with its reason
        failed = {"success": False, "whole_goal": False, "executable": False, "steps": 0,
                  "seconds": time.perf_counter() - t0, "termination": type(exc).__name__, "detail": str(exc)[:300]}
        if row["method"] == "interpret":   # in every column of the row, never dropped from one
            failed.update(confidence=None, reported_success=False, absent=[], precision=0.0, recall=0.0)
        return failed
    out = {"success": p.reached(executor.world), "whole_goal": p.reached_whole(executor.world),
           "executable": all(s.executed for s in result.steps),
           "steps": sum(s.executed for s in result.steps), "seconds": time.perf_counter() - t0,
           "termination": result.termination_reason.value, "detail": result.detail,
           "goal_conditions": list(result.goal_conditions),
           "stage_s": {k: v for k, v in report.stats.items()   # interpret_llm_s, interpret_menu_s, ...
                       if k.startswith("interpret_") and k.endswith("_s") and isinstance(v, (int, float))}}
    if row["method"] == "interpret":
        out.update(confidence=report.stats.get("confidence"), reported_success=result.success,
                   absent=report.stats.get("absent", []), given_up=report.stats.get("given_up", []))
        said, wanted = class_goal(result.goal_conditions), set(p.class_goal())
        hit = len(said & wanted)
        out.update(precision=hit / len(said) if said else 0.0, recall=hit / len(wanted) if wanted else 0.0)
    return out


def mean_stage_s(records: list[dict], key: str) -> Optional[float]:
    """The mean of a stage's seconds (e.g. interpret_llm_s) over the records that have it."""
    values = [r["stage_s"][key] for r in records if key in r.get("stage_s", {})]
    return statistics.mean(values) if values else None


def summarize(name: str, records: list[dict], gold_steps: dict[str, int]) -> dict:
    n = len(records)
    out = {"row": name, "goals": n, "success": sum(r["success"] for r in records) / n,
           "executable": sum(r["executable"] for r in records) / n,
           "median_s": statistics.median(r["seconds"] for r in records),
           "interpret_llm_s": mean_stage_s(records, "interpret_llm_s"),
           "interpret_menu_s": mean_stage_s(records, "interpret_menu_s")}
    losses: dict[str, int] = {}
    for r in records:
        if not r["success"]:
            why = (f"{r['disagreement']}: {_reason(r['detail'])}" if r.get("disagreement")
                   else "reached its own goal, not the annotated one" if r.get("termination") == "goal_reached"
                   else "fell back to the LLM method, which failed" if "fell back" in r.get("detail", "")
                   else r.get("termination") or r.get("detail", "")[:60] or "did not execute")
            losses[why] = losses.get(why, 0) + 1
    out["losses"] = dict(sorted(losses.items(), key=lambda kv: -kv[1]))
    whole = [r for r in records if r.get("whole_goal") is not None]
    if whole:   # the activity's whole goal, any grounding: both ways it differs from the problem's goal
        out["whole_goal"] = {"success": sum(r["whole_goal"] for r in whole) / len(whole), "goals": len(whole),
                             "only_whole": sum(r["whole_goal"] and not r["success"] for r in whole),
                             "only_cut": sum(r["success"] and not r["whole_goal"] for r in whole)}
    reached = [r for r in records if r["success"]]
    if reached:
        out["steps_vs_gold"] = statistics.median(r["steps"] / max(gold_steps[r["problem"]], 1) for r in reached)
    if "reported_success" in records[0]:   # issue 37: at the shipped threshold (InterpretSettings)
        from llm_planner_ros.evaluation.honesty import honesty
        from llm_planner_ros.planning.interpreted import InterpretSettings

        out["honesty"] = honesty(records, InterpretSettings().interpret_confidence, reached_key="success")
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
    lines = ["| row | model | goals | success | executable | steps / gold (median) | median s/goal | "
             "LLM s (mean) | menu s (mean) | goal P / R / F1 |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        f1 = f"{r['precision']:.2f} / {r['recall']:.2f} / **{100 * r['f1']:.1f}**" if "f1" in r else "—"
        ratio = f"{r['steps_vs_gold']:.2f}" if "steps_vs_gold" in r else "—"
        llm_s, menu_s = (f"{r[k]:.2f}" if r.get(k) is not None else "—"
                         for k in ("interpret_llm_s", "interpret_menu_s"))
        lines.append(f"| {r['row']} | {r.get('model_label', '—')} | {r['goals']} | **{100 * r['success']:.1f}%** | "
                     f"{100 * r['executable']:.1f}% | {ratio} | {r['median_s']:.2f} | {llm_s} | {menu_s} | {f1} |")
    lines += [f"| {name} | — | 100 | {figure} (anchor) | — | — | — | — | — | — |" for name, figure in ANCHORS]
    whole = [r for r in rows if r.get("whole_goal")]
    lines += subtable("The activity's whole goal (the problem's PDDL goal holds at most four of its literals; here "
                      "any of the BDDL goal's groundings that eai-eval lists, over the problem's objects):",
                      ["row", "success: the problem's goal", "success: the whole goal", "whole goal only",
                       "problem's goal only"],
                      [[r["row"], f"{r['success']:.1%}", f"**{r['whole_goal']['success']:.1%}**",
                        r["whole_goal"]["only_whole"], r["whole_goal"]["only_cut"]] for r in whole])
    honest = [r["honesty"] | {"row": r["row"]} for r in rows if r.get("honesty")]
    lines += subtable("At the shipped confidence threshold (every goal ran; a goal below it, of unknown confidence, "
                      "or naming what the world lacks counts as asked):",
                      ["row", "asked goal reached, unasked", "another goal reached, unasked", "asked",
                       "confidence known", "wrong goal without asking"],
                      [[h["row"]] + [f"{h[k]:.1%}" for k in ("reached_unasked", "wrong_unasked", "asked",
                                                              "confidence_known", "wrong_never_asking")]
                       for h in honest])
    lines += ["", "Where the failures end, per row:"]
    lines += [f"- {r['row']}: " + "; ".join(f"{why}: {n}" for why, n in r["losses"].items())
              for r in rows if r["losses"]]
    return "\n".join(lines)


def subtable(intro: str, header: list[str], body: list[list]) -> list[str]:
    """A second table's lines under ``intro`` (none without rows)."""
    if not body:
        return []
    return ["", intro, "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)] + \
        ["| " + " | ".join(map(str, cells)) + " |" for cells in body]


def plot(rows: list[dict], path: Path, models: list[str]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 0.5 * len(rows) + 1.5))
    ax.barh([r["row"] for r in rows][::-1], [100 * r["success"] for r in rows][::-1], color="#27a")
    ax.set_xlabel("success (%): the problem's goal holds at the end (PDDL check)")
    ax.set_xlim(0, 100)
    ax.set_title(f"BEHAVIOR-100 through llm_planner_ros (embedded {', '.join(models)})")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", nargs="*", default=list(ROWS), choices=list(ROWS), metavar="ROW",
                        help="the rows (default: all): " + "; ".join(f'"{r}"' for r in ROWS))
    parser.add_argument("--model", nargs="+", default=[DEFAULT_MODEL], choices=list(MODELS), metavar="NAME",
                        help=f"the planning models, each running every row that runs the LLM (choices: "
                             f"{', '.join(MODELS)}; default: {DEFAULT_MODEL})")
    parser.add_argument("--limit", type=int, default=None, help="the first N activities (default: all 100)")
    parser.add_argument("--split", choices=SPLITS, default="all",
                        help="the activities at even (dev) or odd (test) positions in name order, so that a "
                             "setting chosen on one half is reported on the other (default: all)")
    parser.add_argument("--set", nargs="*", default=["pddl_time_limit_s=3"], metavar="KEY=VALUE",
                        help="settings for every row, over the model's and under the row's own (default: Fast "
                             "Downward's limit 3 s a plan; EAI's problems solve in under 1 s, and interpret's "
                             "probes of unsolvable goals then end sooner)")
    parser.add_argument("--slow-limit", type=int, default=20,
                        help="heuristic runs on the first N activities (about 10 s a goal on 2 cores)")
    parser.add_argument("--out", default="bench/results")
    args = parser.parse_args()
    settings = dict(s.split("=", 1) for s in args.set)
    models = list(dict.fromkeys(args.model))
    # what runs, in the rows' order: (name, row, model); the rows that run the LLM once per model
    runs = [(row_name(name, model, models), name, model) for name in args.rows
            for model in (models if uses_llm(ROWS[name]) else [None])]
    check_settings(parser, settings, runs)
    names = half(problem_names(), args.split)[:args.limit]
    problems = [problem(n) for n in names]
    gold_steps = {p.name: len(p.gold_plan) for p in problems}
    summaries, records = [], {}
    t_all = time.perf_counter()
    for name, base, model in runs:
        row = ROWS[base]
        t0 = time.perf_counter()
        merged: dict = {}
        if not row:
            recs = [dict(run_gold(p), problem=p.name) for p in problems]
        elif row.get("human"):
            recs = [dict(run_human(p), problem=p.name) for p in problems]
        else:
            merged = row_settings(row, model, settings)
            service, holder = build_service(merged)
            chosen = problems[:args.slow_limit] if row["method"] in SLOW else problems
            recs = [dict(run_goal(service, holder, row, p), problem=p.name) for p in chosen]
            del service, holder   # one model's LLM in memory at a time
        records[name] = recs
        summaries.append(dict(summarize(name, recs, gold_steps), base_row=base, model=model,
                              model_label=model_label(row, model, merged),
                              settings=merged, wall_s=time.perf_counter() - t0))
        print(f"{name}: {100 * summaries[-1]['success']:.1f}% in {summaries[-1]['wall_s']:.0f}s", flush=True)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    text = table(summaries)
    print("\n" + text + f"\n\n{len(problems)} activities, {time.perf_counter() - t_all:.0f}s in all")
    (out / "behavior.md").write_text(text + "\n")
    (out / "behavior.json").write_text(json.dumps({"models": models, "set": settings, "rows": summaries,
                                                   "records": records}, indent=1))
    plot(summaries, out / "behavior.png", models)
    print(f"wrote {out / 'behavior.md'}, behavior.json and behavior.png")


if __name__ == "__main__":
    main()
