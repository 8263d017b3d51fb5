"""The product's case: the task sentence alone, on all of EAI's programs.

    python bench/interpret.py [--per-task N] [--rows interpret embeddings] [--model NAME ...]
        [--tasks-split all|dev|test] [--jobs 2] [--set KEY=VALUE ...] [--out bench/results]

Rows (setting "task text only": the planner gets the task label, e.g. "Watch TV", nothing else;
demonstrations of the program's own task are held out by its label):
  interpret              method interpret with the embedded LLM (--model), fallback as configured: the
                         model chooses the goal among candidate conditions (interpret_choose)
  interpret, free text (before issue 36)  interpret_choose false: the model writes the end state in
                         free text, its sentences translated to conditions by embeddings (the route
                         before issue 36), beside the row above
  interpret, LLM only    the model's conditions alone, without those nearest the task text
  interpret, embeddings only  the conditions nearest the task text, no LLM (the baseline)
  oracle goal, class level  EAI's annotated goal said as class-level sentences (what a perfect
                         interpretation could reach through binding and planning: the ceiling)
  ..., paraphrased       the task in other words (PARAPHRASES), on --paraphrase-per-task programs of
                         each task; "paraphrased again": a second phrasing (PARAPHRASES_AGAIN), written
                         before anything was tuned, never tuned on
Models (--model: names of the registry MODELS, llm_planner_ros/llm/models.py; default: the default
model alone, as before): each row whose interpretation runs the LLM runs once per model, named
"<row> [<model>]" when more than one model is given or the model is not the default (e.g.
"interpret [qwen2.5-coder-1.5b]"), else "<row>". The rows without an LLM interpretation (embeddings
only, the oracle) run once under their own name with the default model's settings (their fallback,
interpret_fallback, plans with the default model). A model that is not shipped is fetched first
(python -m llm_planner_ros model fetch NAME), or given as a file with --set llm_model_path=FILE
(with one --model only: the file serves every row).
A row's settings, each later one winning over the earlier ones: (1) the model's: llm_model, its
registry context as llm_context (4096 for the Qwen models; so that it holds with llm_model_path
too, which otherwise takes llm_context as set) and the registry's settings for the model; (2) --set,
for every row; (3) the row's own keys, so that a row stays what its name says. --set llm_model is
refused: the model is --model's. Each row's merged settings are in interpret.json.
Tasks (--tasks-split): EAI's 26 task titles sorted alphabetically; dev = the titles at even
positions (0, 2, ...; 13 titles, 174 programs), test = those at odd positions (13 titles, 168
programs), all (the default) = every title. Choose settings on dev, report them on test. The
paraphrased rows take their programs from the same titles.
After the rows, the tasks beyond EAI's titles (evaluation/beyond_eai.py: conditions that must and must not appear,
or an absent object that must be named) run on scene 1 as it starts, once per model, with the interpret row's
settings (--no-beyond skips them).
Each program is scored by EAI's goal conditions on the simulator. The loss is split by stage:
interpretation (empty / already holds / no plan -> fallback), goal reached but not EAI's, and
execution. Condition-level precision / recall / F1 compare the interpreted class-level literals
with the annotated ones. Per row: the median seconds per goal (whole goal) and the mean seconds of
the model's answer (interpret_llm_s), of its choice among the candidates (interpret_menu_s) and of
Fast Downward over every plan of the goal (planner_s; of it, its translator: planner_translate_s), with
the plans per goal.
EAI's goal-interpretation scorer runs where every program of the chosen titles ran (no --per-task):
on all 342, or on a split's programs (the 15 shipped answers then scored on the same programs).
Honesty columns (issue 37): every goal runs (interpret_confirm never) and its confidence is
recorded (and, on a second line per row, the same goals without the confidence's factor for an
instance chosen among several rooms'); at the row's interpret_confidence a goal below it (or of
unknown confidence) counts as asked. Per row: the asked goal reached unasked, another goal reached
unasked (reported done, EAI's goal not met: the wrong-goal rate), asked, the wrong-goal rate
without asking, and the AUROC of the confidence for reaching EAI's goal; interpret_risk.png plots risk against coverage.
Then the tasks the worlds cannot do (evaluation/cannot_do.py, --no-cannot-do skips them), once per
model with the shipped settings (nobody answers: an asked goal ends unconfirmed): the first list,
a second one written later, held out from any change made for the first one's misses, a third
one, written after the narrower-kind rule (made for both lists' misses) and before anything ran on
it, a fourth, written before the related-kind rule (made for the first list's last miss) and
before anything ran on it, a fifth, written after the fourth one's misses were read and before
any change made for them, a sixth, written the same way after the fifth one's misses, and a seventh, written before
any rule for foods and drinks.
Writes interpret.json, interpret.md and interpret_risk.png; one process per --jobs.
"""
from __future__ import annotations

import argparse
import gc
import hashlib
import json
import os
import re
import statistics
import sys
import time
from collections import Counter
from multiprocessing import Pool
from pathlib import Path
from typing import Optional

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm_planner_ros"))   # the package folder
os.environ.setdefault("OMP_NUM_THREADS", "1")

from llm_planner_ros.evaluation.beyond_eai import BEYOND, BeyondTask  # noqa: E402
from llm_planner_ros.evaluation.cannot_do import CANNOT_LISTS, run_cannot_do  # noqa: E402
from llm_planner_ros.evaluation.eai import select_tasks  # noqa: E402
from llm_planner_ros.evaluation.honesty import honesty  # noqa: E402
from llm_planner_ros.evaluation.splits import SPLITS, half  # noqa: E402
from llm_planner_ros.llm.models import DEFAULT_MODEL, MODELS  # noqa: E402
from llm_planner_ros.profiles.virtualhome.tasks import EaiTask, eai_tasks  # noqa: E402

ROWS = {"interpret": {}, "interpret, free text (before issue 36)": {"interpret_choose": False},
        "interpret, LLM only": {"interpret_from": "llm"},
        "interpret, embeddings only": {"interpret_from": "text"}, "oracle goal, class level": None,
        "interpret, paraphrased": {}, "interpret, embeddings only, paraphrased": {"interpret_from": "text"},
        "interpret, paraphrased again": {},
        "interpret, embeddings only, paraphrased again": {"interpret_from": "text"}}
# How else a person might ask for each of EAI's tasks (written for this benchmark; scored against
# the same programs' goal conditions, demonstrations held out by the program's task label).
PARAPHRASES = {
    "Browse internet": "Go online and surf the web", "Brush teeth": "Clean my teeth with the toothbrush",
    "Change TV channel": "Switch to another channel on the television", "Cook some food": "Prepare a hot meal",
    "Drink": "Have something to drink", "Get some water": "Fetch me a glass of water",
    "Go to sleep": "Time for bed, go to sleep", "Go to toilet": "Use the bathroom",
    "Listen to music": "Put some music on", "Make coffee": "Brew a cup of coffee",
    "Pet cat": "Stroke the cat", "Pick up phone": "Answer the phone", "Put groceries in Fridge":
    "Store the groceries in the refrigerator", "Read book": "Read a novel", "Relax on sofa": "Take a rest on the couch",
    "Set up table": "Lay the table for dinner", "Take shower": "Have a shower", "Turn on light": "Switch the lights on",
    "Wash clothes": "Do the laundry", "Wash dishes by hand": "Hand-wash the dirty dishes",
    "Wash dishes with dishwasher": "Run the dishwasher with the dirty dishes", "Wash hands": "Clean my hands",
    "Wash teeth": "Clean my teeth", "Watch TV": "Switch the television on and watch it",
    "Work": "Do some work at the computer", "Write an email": "Send an email",
}
# A second phrasing per task (issue 25), written before anything was tuned on it, never tuned on.
PARAPHRASES_AGAIN = {
    "Browse internet": "Check the news online", "Brush teeth": "Give my teeth a brush",
    "Change TV channel": "Flip to a different TV station", "Cook some food": "Make something to eat on the stove",
    "Drink": "I'm thirsty, get me a drink", "Get some water": "Pour me some water",
    "Go to sleep": "Get into bed and sleep", "Go to toilet": "Go to the restroom", "Listen to music": "Play some songs",
    "Make coffee": "Make me a coffee", "Pet cat": "Give the cat a cuddle", "Pick up phone": "Grab the telephone",
    "Put groceries in Fridge": "Put the shopping away in the fridge", "Read book": "Sit down with a book and read",
    "Relax on sofa": "Lie back on the sofa and relax", "Set up table": "Set the dining table",
    "Take shower": "Wash myself in the shower", "Turn on light": "Turn the lamp on",
    "Wash clothes": "Wash the laundry in the machine", "Wash dishes by hand": "Wash the plates in the sink",
    "Wash dishes with dishwasher": "Load the dishwasher and start it", "Wash hands": "Wash my hands with soap",
    "Wash teeth": "Scrub my teeth clean", "Watch TV": "Watch some television",
    "Work": "Get some work done on the computer", "Write an email": "Type an email on the computer",
}
PHRASINGS = {"paraphrased": PARAPHRASES, "paraphrased again": PARAPHRASES_AGAIN}


def phrasing(row: str) -> str:
    """The row's phrasing of the tasks: "" (EAI's), "paraphrased" or "paraphrased again"."""
    return next((p for p in sorted(PHRASINGS, key=len, reverse=True) if row.endswith(", " + p)), "")


def uses_llm(row: str) -> bool:
    """Whether the row's interpretation runs the LLM (so that it runs once per model)."""
    settings = ROWS[row]
    return settings is not None and settings.get("interpret_from") != "text"


def row_name(row: str, model: Optional[str], models: list[str]) -> str:
    """``row`` with ``model`` appended where more than one model runs or it is not the default."""
    return row if model is None or models == [DEFAULT_MODEL] else f"{row} [{model}]"


def split_titles(tasks: list[EaiTask], split: str) -> list[str]:
    """The task titles of ``split``, sorted: all, or one half (:func:`half`)."""
    return half(sorted({t.task for t in tasks}), split)


SETTINGS: dict = {}   # --set, for every row (the worker processes are forked after it is filled)


def model_settings(model: Optional[str]) -> dict:
    """The settings that select ``model`` (None: none, the default model's); --set wins over them."""
    if model is None:
        return {}
    entry = MODELS[model]
    return {"llm_model": model, "llm_context": entry.context, **entry.settings}


# Every goal runs (nobody is asked) so that its outcome is known; whether it would have been asked
# is its recorded confidence against interpret_confidence, the decision the planner takes before
# it plans anything (--set interpret_confirm=unsure: the goals below it really end unconfirmed).
RUN_EVERY_GOAL = {"interpret_confirm": "never"}


def row_settings(row: str, model: Optional[str], every_goal: bool = True) -> dict:
    """A row's settings: RUN_EVERY_GOAL (unless ``every_goal`` is false: asking as shipped), the
    model's, then --set, then the row's own keys, each winning over the earlier."""
    return {**(RUN_EVERY_GOAL if every_goal else {}), **model_settings(model), **SETTINGS, **(ROWS[row] or {})}


_service: dict = {}


def _service_for(model: Optional[str], key: str, settings: dict):
    """The service of ``key`` (a row, or "beyond") with ``model``, built once per process. The jobs
    come model by model, so the services of another model are dropped (one model's LLMs in memory)."""
    from llm_planner_ros.wiring import ServiceConfig, compose

    if (model, key) not in _service:
        stale = [k for k in _service if k[0] != model]
        for k in stale:
            del _service[k]
        if stale:
            gc.collect()
        _service[model, key] = compose(ServiceConfig.from_flat(settings))
    return _service[model, key]


def _beyond(job: tuple[Optional[str], BeyondTask]) -> dict:
    """One task beyond EAI's titles through the service (the interpret row's settings with the
    model, but asking as shipped: an absent object's goal must not run), executed on scene 1 as
    it starts."""
    from llm_planner_ros.profiles.virtualhome.simulator import VirtualHomeExecutor

    model, case = job
    service = _service_for(model, "beyond", row_settings("interpret", model, every_goal=False))
    return {"model": model, **case.run(service, VirtualHomeExecutor())}


def _cannot_do(model: Optional[str]) -> list[dict]:
    """The cannot-do list (evaluation/cannot_do.py) with the shipped settings and ``model``: nobody
    answers a confirmation here, so an asked goal ends unconfirmed."""
    settings = row_settings("interpret", model, every_goal=False)
    return [{"model": model, "list": name, **r} for name, cases in CANNOT_LISTS.items()
            for r in run_cannot_do(settings, cases)]


def _run(job: tuple[str, str, Optional[str], int]) -> dict:
    """One program of one row; a program whose run raises is recorded as failed (stage "error: ..."),
    never dropped and never fatal to the other programs."""
    try:
        return _run_program(job)
    except Exception as exc:
        from llm_planner_ros.profiles.virtualhome.examples import eai_program_goals

        name, row, model, i = job
        task = eai_tasks()[i]
        head = dict(row=name, base_row=row, model=model, identifier=task.identifier, task=task.task)
        if ROWS[row] is not None:
            head.update(confidence=None, which=[], confidence_before_which=None, reported_success=False,
                        absent=[], evidence={})
        return dict(head, goal_met=False, executed=False, termination="error", stage=f"error: {type(exc).__name__}",
                    interpreted=[], truth=sorted(eai_program_goals()[i].literals),
                    detail=f"{type(exc).__name__}: {exc}"[:400], wall_s=0.0, seconds={})


def _run_program(job: tuple[str, str, Optional[str], int]) -> dict:
    from llm_planner_ros.core.errors import CancelToken
    from llm_planner_ros.core.request import parse_request
    from llm_planner_ros.profiles.virtualhome.examples import class_level, eai_program_goals
    from llm_planner_ros.profiles.virtualhome.simulator import VirtualHomeExecutor

    name, row, model, i = job
    task = eai_tasks()[i]
    executor = VirtualHomeExecutor(graph=task.graph, goal=task.goal)
    annotated = eai_program_goals()[i]     # the same order as eai_tasks()
    truth = set(annotated.literals)
    seconds: dict = {}
    head = dict(row=name, base_row=row, model=model, identifier=task.identifier, task=task.task)
    t0 = time.perf_counter()
    if ROWS[row] is None:
        from llm_planner_ros.interpretation.conditions import spec_of
        from llm_planner_ros.interpretation.interpreter import InstancePrior
        from llm_planner_ros.planning.goal_directed import GoalDirectedPlanner
        from llm_planner_ros.planning.worlds import load_world
        from llm_planner_ros.profiles.virtualhome.conditions import render_conditions
        from llm_planner_ros.safety.gate import SafetyGate, SafetySettings
        from llm_planner_ros.safety.policy import SkillPolicy

        world = executor.world_state()
        said = set(annotated.sentences)
        conditions = [c for c in render_conditions(world) if c.text in said]
        if not conditions:
            return dict(head, goal_met=False, executed=False, termination="empty", stage="empty goal",
                        interpreted=[], truth=sorted(truth), wall_s=0.0, seconds=seconds)
        prior = InstancePrior(eai_program_goals(), "inside_room", "character")
        spec = prior.bind(spec_of(conditions), world, [task.task])
        vh = load_world()
        gate = SafetyGate(executor, SkillPolicy(), SafetySettings(), vh.skill_problem)
        result = GoalDirectedPlanner(vh).plan(spec, gate, lambda e: None, CancelToken())
        interpreted, detail, fell_back = sorted(truth), result.detail, False
    else:
        service = _service_for(model, row, row_settings(row, model))
        said = PHRASINGS[phrasing(row)][task.task] if phrasing(row) else task.task
        request = parse_request(task=said, method="interpret", execute=True,
                                options={"hold_out_tasks": [task.task]})
        result, report = service.plan_with_report(request, lambda e: None, CancelToken(), executor)
        world = executor.world_state()
        interpreted = [class_level(line, world) if line.startswith("(") else line
                       for line in report.stats.get("interpreted", [])]
        detail, fell_back = result.detail, "fell back to" in result.detail
        seconds = {k: v for k, v in report.stats.items()   # interpret_llm_s, interpret_menu_s, planner_s, ...
                   if (k.startswith("interpret_") and k.endswith("_s")
                       or k in ("planner_s", "planner_translate_s", "world_s", "plans"))
                   and isinstance(v, (int, float))}
        head.update(confidence=report.stats.get("confidence"), which=report.stats.get("which", []),
                    confidence_before_which=report.stats.get("confidence_before_which", report.stats.get("confidence")),
                    reported_success=result.success, given_up=report.stats.get("given_up", []),
                    absent=report.stats.get("absent", []), evidence=report.stats.get("evidence", {}))
    met = bool(executor.goal_met())
    if met:
        stage = "reached"
    elif fell_back:
        stage = "interpretation: " + detail.split(";")[0].split(":")[0]
    elif result.termination_reason.value == "goal_reached":
        stage = "interpreted goal reached, not EAI's"
    elif result.termination_reason.value == "no_plan":
        stage = "planning: no plan"
    else:
        stage = f"execution: {result.termination_reason.value}"
    return dict(head, goal_met=met, executed=result.executed, termination=result.termination_reason.value,
                stage=stage, interpreted=sorted(set(interpreted)), truth=sorted(truth), detail=detail[:400],
                wall_s=time.perf_counter() - t0, seconds=seconds)


def threshold(row: str, model: Optional[str]) -> float:
    """The confidence below which the row's goals are asked (interpret_confidence as the row sets it)."""
    from llm_planner_ros.planning.interpreted import InterpretSettings

    return float(row_settings(row, model).get("interpret_confidence",
                                              InterpretSettings().interpret_confidence))


def plot_risk(summary: dict, records: list[dict], path: Path) -> None:
    import matplotlib

    from llm_planner_ros.evaluation.honesty import risk_coverage

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for name, s in summary.items():
        rs = [r for r in records if r["row"] == name]
        if any(r.get("confidence") is not None for r in rs):
            coverage, risk = risk_coverage(rs)
            ax.plot(coverage, risk, label=f"{name} (AUROC {s['honesty']['auroc']:.2f})")
            ax.plot([1 - s["honesty"]["asked"]], [s["honesty"]["wrong_unasked"] / max(1e-9, 1 - s["honesty"]["asked"])],
                    "o", color=ax.lines[-1].get_color())
    ax.set_xlabel("coverage (share of goals run unasked, most confident first)")
    ax.set_ylabel("wrong goal reached, among them")
    ax.set_title("Risk against coverage; dot: the shipped threshold")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def prf(records: list[dict]) -> dict:
    tp = sum(len(set(r["interpreted"]) & set(r["truth"])) for r in records)
    said = sum(len(r["interpreted"]) for r in records)
    true = sum(len(r["truth"]) for r in records)
    p = tp / said if said else 0.0
    rc = tp / true if true else 0.0
    return {"precision": p, "recall": rc, "f1": 2 * p * rc / (p + rc) if p + rc else 0.0}


def mean_of(records: list[dict], key: str) -> Optional[float]:
    """The mean of a figure each goal's record keeps under ``seconds`` (a stage's seconds, e.g.
    interpret_llm_s, or the plans) over the records that have it."""
    values = [r["seconds"][key] for r in records if key in r.get("seconds", {})]
    return statistics.mean(values) if values else None


def scorer_name(row: str) -> str:
    """A row's name as EAI's scorer takes it (a file name, <name>_outputs.json), e.g.
    "this_project_interpret_embeddings_only", "this_project_interpret_qwen2.5-coder-1.5b"."""
    return "this_project_" + re.sub(r"[^A-Za-z0-9.-]+", "_", row).strip("_")


def eai_scores(records: list[dict], rows: list[str], chosen: list, out: Path) -> dict:
    """EAI's goal-interpretation scorer on this project's interpreted goals of ``rows`` (by
    :func:`scorer_name`; only where every program of the chosen titles ran) and on the 15
    shipped answers to the same programs (scored once, cached)."""
    from llm_planner_ros.evaluation import eai
    from llm_planner_ros.profiles.virtualhome.resources import package_root

    ids = {t.identifier for t in chosen}
    titles = {t.task for t in chosen}
    if not rows or ids != {t.identifier for t in eai_tasks() if t.task in titles}:
        return {}
    names = {row: scorer_name(row) for row in rows}
    if len(set(names.values())) != len(names):
        raise ValueError(f"rows that EAI's scorer cannot tell apart: {sorted(names.values())}")
    responses = {names[row]: [{"identifier": r["identifier"], "llm_output": eai.goal_answer(r["interpreted"])}
                              for r in records if r["row"] == row] for row in rows}
    everything = len(ids) == len(eai_tasks())
    tag = "" if everything else "_" + hashlib.sha1("\n".join(sorted(ids)).encode()).hexdigest()[:12]
    cache = out / "cache" / f"goal_interpretation_anchors{tag}.json"
    if cache.exists():
        anchors = json.loads(cache.read_text())
    elif everything:
        anchors = eai.score_goal_interpretation({}, eai.shipped_goal_models())
    else:   # the shipped answers to the same programs
        shipped = package_root() / "llm_response" / "goal_interpretation"
        anchors = eai.score_goal_interpretation(
            {m: [a for a in json.loads((shipped / f"{m}_outputs.json").read_text()) if a["identifier"] in ids]
             for m in eai.shipped_goal_models()})
    if not cache.exists():
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_text(json.dumps(anchors, indent=1))
    return {**anchors, **eai.score_goal_interpretation(responses)}


def check_settings(parser: argparse.ArgumentParser, models: list[str], runs: list[tuple], beyond: bool) -> None:
    """Refuse what would make a row's name lie, a setting that does not exist, or a model that is
    not there, before any process starts."""
    from llm_planner_ros.core.errors import LLMError
    from llm_planner_ros.llm.models import model_file
    from llm_planner_ros.wiring import ServiceConfig, SettingsError

    if "llm_model" in SETTINGS:
        parser.error("--set llm_model: name the model with --model")
    if "llm_model_path" in SETTINGS and len(models) > 1:
        parser.error("--set llm_model_path gives one file for every row: give one --model with it, or fetch "
                     "the models (python -m llm_planner_ros model fetch NAME)")
    if SETTINGS.get("llm_backend", "embedded") != "embedded" and models != [DEFAULT_MODEL]:
        parser.error("--model picks the embedded backend's model; --set llm_backend is not embedded")
    used = {model for _, row, model in runs if ROWS[row] is not None} | (set(models) if beyond else set())
    for model in used:
        try:
            ServiceConfig.from_flat(row_settings("interpret", model))
            for _, row, m in runs:
                if m == model and ROWS[row] is not None:
                    ServiceConfig.from_flat(row_settings(row, model))
        except SettingsError as exc:
            parser.error(f"--set: {exc}")
    if "llm_model_path" not in SETTINGS and SETTINGS.get("llm_backend", "embedded") == "embedded":
        for model in sorted(m for m in used if m is not None):
            try:
                model_file(model)
            except LLMError as exc:
                parser.error(str(exc))


def model_label(row: str, model: Optional[str]) -> str:
    """The table's model column: the model the row's interpretation runs, or none (with its fallback's)."""
    path = SETTINGS.get("llm_model_path")

    def named(m: str) -> str:
        return f"{m} ({Path(path).name})" if path else m
    if ROWS[row] is None:
        return "none"
    if model is not None:
        return named(model)
    fallback = row_settings(row, None).get("interpret_fallback", "reprompt")
    return "none" if fallback == "none" else f"none (fallback: {named(DEFAULT_MODEL)})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="\n".join(__doc__.splitlines()[2:]))
    parser.add_argument("--per-task", type=int, default=None, help="programs per task (default: all 342)")
    parser.add_argument("--rows", nargs="*", default=list(ROWS), choices=list(ROWS), metavar="ROW",
                        help="the rows (default: all): " + "; ".join(f'"{r}"' for r in ROWS))
    parser.add_argument("--model", nargs="+", default=[DEFAULT_MODEL], choices=list(MODELS), metavar="NAME",
                        help=f"the planning models, each running every row that runs the LLM (choices: "
                             f"{', '.join(MODELS)}; default: {DEFAULT_MODEL})")
    parser.add_argument("--tasks-split", choices=SPLITS, default="all",
                        help="EAI's task titles sorted alphabetically: dev = those at even positions, test = "
                             "those at odd positions (choose settings on dev, report on test); default all")
    parser.add_argument("--paraphrase-per-task", type=int, default=3,
                        help="programs per task for the paraphrased rows "
                             "(compared with the same programs worded as EAI)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--no-beyond", dest="beyond", action="store_false",
                        help="skip the tasks beyond EAI's titles (BEYOND)")
    parser.add_argument("--no-cannot-do", dest="cannot_do", action="store_false",
                        help="skip the tasks the worlds cannot do (evaluation/cannot_do.py)")
    parser.add_argument("--out", type=Path, default=Path("bench/results"))
    parser.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE",
                        help="settings for every row, over the model's and under the row's own, "
                             "e.g. interpret_choose_beta=0.2 or llm_model_path=/path/model.gguf (one --model)")
    args = parser.parse_args()
    SETTINGS.update(kv.split("=", 1) for kv in args.set)
    models = list(dict.fromkeys(args.model))
    # what runs: (name, row, model); the rows without an LLM interpretation once, the others per model
    runs = [(row, row, None) for row in args.rows if not uses_llm(row)]
    runs += [(row_name(row, m, models), row, m) for m in models for row in args.rows if uses_llm(row)]
    check_settings(parser, models, runs, args.beyond)
    order = {row: k for k, row in enumerate(args.rows)}
    shown = sorted(runs, key=lambda run: order[run[1]])   # the table: each row's models side by side
    tasks = list(eai_tasks())
    titles = split_titles(tasks, args.tasks_split)
    names = titles if args.tasks_split != "all" else ()
    chosen = select_tasks(tasks, names, per_task=args.per_task) if args.per_task or names else tasks
    index = {t.identifier: i for i, t in enumerate(tasks)}
    fewer = select_tasks(tasks, names, per_task=args.paraphrase_per_task)
    jobs = [(name, row, model, index[t.identifier]) for name, row, model in runs   # model by model
            for t in (fewer if phrasing(row) else chosen)]
    t0 = time.perf_counter()
    with Pool(args.jobs) as pool:
        records = pool.map(_run, jobs, chunksize=1)
        beyond = pool.map(_beyond, [(m, case) for m in models for case in BEYOND],
                          chunksize=len(BEYOND)) if args.beyond else []
        cannot = [r for rs in pool.map(_cannot_do, models, chunksize=1) for r in rs] if args.cannot_do else []
    wall = time.perf_counter() - t0
    summary = {}
    for name, row, model in shown:
        rs = [r for r in records if r["row"] == name]
        summary[name] = {"row": row, "model": model,
                         "settings": row_settings(row, model) if ROWS[row] is not None else {},
                         "programs": len(rs), "success": statistics.mean(r["goal_met"] for r in rs),
                         "executable": statistics.mean(r["executed"] for r in rs),
                         "median_s": statistics.median(r["wall_s"] for r in rs),
                         "interpret_llm_s": mean_of(rs, "interpret_llm_s"),
                         "interpret_menu_s": mean_of(rs, "interpret_menu_s"),
                         "planner_s": mean_of(rs, "planner_s"),   # Fast Downward, every plan of the goal
                         "planner_translate_s": mean_of(rs, "planner_translate_s"),   # of it, its translator
                         "plans": mean_of(rs, "plans"),
                         "stages": dict(Counter(r["stage"] for r in rs).most_common()),
                         "per_task": {t: f"{sum(r['goal_met'] for r in rs if r['task'] == t)}/"
                                         f"{sum(1 for r in rs if r['task'] == t)}"
                                      for t in dict.fromkeys(r["task"] for r in rs)},
                         "honesty": honesty(rs, threshold(row, model)) if ROWS[row] is not None else None,
                         # the same goals judged without the factor for an instance chosen among several rooms'
                         "honesty_before_which": honesty([dict(r, confidence=r.get("confidence_before_which"))
                                                          for r in rs], threshold(row, model))
                         if any(r.get("which") for r in rs) else None,
                         **prf(rs)}
        if phrasing(row):   # the same programs as EAI words them (the same model)
            base = row[:-len(", " + phrasing(row))]
            ids = {r["identifier"] for r in rs}
            same = [r for r in records if r["base_row"] == base and r["model"] == model and r["identifier"] in ids]
            summary[name]["as_eai_words_it"] = statistics.mean(r["goal_met"] for r in same) if same else None
    args.out.mkdir(parents=True, exist_ok=True)
    scored = eai_scores(records, [name for name, row, _ in shown if not phrasing(row)], chosen, args.out)
    for name, s in summary.items():
        if scorer_name(name) in scored:
            s["eai_goal_scorer"] = scored[scorer_name(name)]
    (args.out / "interpret.json").write_text(json.dumps(
        {"wall_s": wall, "jobs": args.jobs, "models": models, "set": SETTINGS, "tasks_split": args.tasks_split,
         "titles": titles, "summary": summary, "eai_goal_scorer": scored, "records": records,
         "beyond_eai": beyond, "cannot_do": cannot}, indent=1))
    told = f" ({args.tasks_split} titles: {', '.join(titles)})" if args.tasks_split != "all" else ""
    lines = [f"# Task text only: {len(chosen)} programs{told}, {wall:.0f} s with {args.jobs} processes", ""]
    if SETTINGS:
        lines += ["--set " + " ".join(f"{k}={v}" for k, v in SETTINGS.items()), ""]
    lines += ["| row | model | programs | success | executable | condition P | R | F1 | median s/goal | "
              "LLM s (mean) | menu s (mean) | Fast Downward s (mean) | of it translating (mean) | plans (mean) |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, s in summary.items():
        same = (f" (same programs as EAI words them: {s['as_eai_words_it']:.1%})"
                if s.get("as_eai_words_it") is not None else "")
        llm_s, menu_s, fd_s, translate_s, plans = (
            f"{s[k]:.2f}" if s[k] is not None else "—"
            for k in ("interpret_llm_s", "interpret_menu_s", "planner_s", "planner_translate_s", "plans"))
        lines.append(f"| {name} | {model_label(s['row'], s['model'])} | {s['programs']} | {s['success']:.1%}{same} | "
                     f"{s['executable']:.1%} | {s['precision']:.2f} | {s['recall']:.2f} | {s['f1']:.2f} | "
                     f"{s['median_s']:.2f} | {llm_s} | {menu_s} | {fd_s} | {translate_s} | {plans} |")
    lines += ["", "## The asked goal, another goal, asked (at the threshold interpret_confidence)",
              "", "| row | threshold | asked goal reached, unasked | wrong goal reached, unasked | asked | "
              "of them naming an absent word | wrong goal without asking | confidence AUROC |",
              "|---|---|---|---|---|---|---|---|"]
    for name, s in summary.items():
        for label, h in ((name, s["honesty"]),
                         (f"{name}, without the factor for which room's instance", s.get("honesty_before_which"))):
            if h:
                lines.append(f"| {label} | {h['threshold']:.2f} | {h['reached_unasked']:.1%} | "
                             f"{h['wrong_unasked']:.1%} | {h['asked']:.1%} | {h['naming_absent']:.1%} | "
                             f"{h['wrong_never_asking']:.1%} | {h['auroc']:.3f} |")
    lines += ["", "No goal is refused outright: a task naming what the world lacks is asked, naming it "
                  "(wrongly refused phrasings: 0 by construction)."]
    plot_risk(summary, records, args.out / "interpret_risk.png")
    for name, s in summary.items():
        lines += ["", f"## {name}: where programs end", ""]
        lines += [f"- {stage}: {n}" for stage, n in s["stages"].items()]
        lines += ["", "per task: " + ", ".join(f"{t} {v}" for t, v in s["per_task"].items())]
    if scored:
        lines += ["", f"## Goal interpretation, EAI's scorer ({len(chosen)} programs; %; the 15 shipped answers "
                      "were given EAI's prompt, which lists the relevant objects; this project's rows see the task "
                      "text and the whole scene)", "",
                  "| answers | state F1 | relation F1 | action F1 | all P | all R | all F1 |",
                  "|---|---|---|---|---|---|---|"]
        for name, m in sorted(scored.items(), key=lambda kv: -kv[1]["all_f1"]):
            lines.append(f"| {name} | {m['node_f1']:.1f} | {m['edge_f1']:.1f} | {m['action_f1']:.1f} | "
                         f"{m['all_precision']:.1f} | {m['all_recall']:.1f} | {m['all_f1']:.1f} |")
    for model in models if beyond else []:
        ran = [b for b in beyond if b["model"] == model]
        lines += ["", f"## Tasks beyond EAI's titles (scene 1 as it starts){row_name('', model, models)}: "
                      f"{sum(b['passed'] for b in ran)} of {len(ran)} pass", "",
                  "| task | passes | interpreted goal | why not |", "|---|---|---|---|"]
        for b in ran:
            why = (f"does not name the absent {b['absent']} ({b['termination']})" if b["absent"] and not b["passed"]
                   else "; ".join([f"lacks {m}" for m in b["missing"]] + [f"has {w}" for w in b["wrong"]]))
            lines.append(f"| {b['task']} | {'yes' if b['passed'] else 'no'} | {', '.join(b['goal'])} | {why} |")
    for model, kind in [(m, k) for m in models for k in CANNOT_LISTS] if cannot else []:
        ran = [c for c in cannot if c["model"] == model and c.get("list", "first") == kind]
        lines += ["", f"## Tasks the worlds cannot do, the {kind} list{row_name('', model, models)}: "
                      f"{sum(c['passed'] for c in ran)} of "
                      f"{len(ran)} end without running, naming the missing thing; {sum(c['ran'] for c in ran)} ran "
                      "a substitute", "", "| world | task | passes | words found absent | end |",
                  "|---|---|---|---|---|"]
        for c in ran:
            lines.append(f"| {c['world']} | {c['task']} | {'yes' if c['passed'] else 'no'} | "
                         f"{', '.join(c['absent']) or '—'} | {c['termination']}: {c['detail'][:120]} |")
    (args.out / "interpret.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
