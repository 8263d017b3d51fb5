"""The EAI VirtualHome benchmark: any planner configuration over EAI's programs, scored by EAI's
own evaluator and by this project's executor, with the papers' metrics and a per-goal time split.

Three input settings (``SETTING_NAMES``); goals are used for scoring alone except in ``eai``:

- ``text``: the task name alone (the product's case, the headline);
- ``task``: the task name and the human description;
- ``eai``: the planner sees EAI's objects, initial states and goal conditions (as the anchor
  rows' models did).

Per-goal records are appended to a JSONL cache keyed by the configuration, so interrupted runs
resume and re-scoring never calls the LLM again.
"""
from __future__ import annotations

import hashlib
import json
import math
import statistics
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Optional

from pydantic import BaseModel, ConfigDict

from llm_planner_ros.core.errors import CancelToken
from llm_planner_ros.core.request import MAX_DESCRIPTION_CHARS, parse_request
from llm_planner_ros.core.types import GoalReport
from llm_planner_ros.evaluation import eai
from llm_planner_ros.evaluation.metrics import as_steps, executable, lcs_ratio
from llm_planner_ros.llm.base import LLMBackend, SamplingParams
from llm_planner_ros.planning.heuristic import HeuristicPlanner
from llm_planner_ros.planning.methods import llm_loop
from llm_planner_ros.planning.translated import TranslatedPlanner
from llm_planner_ros.profiles.virtualhome.simulator import VirtualHomeExecutor
from llm_planner_ros.profiles.virtualhome.tasks import EaiTask

if TYPE_CHECKING:
    from llm_planner_ros.planning.service import PlanningService

Setting = Literal["eai", "task", "text"]
# what each setting gives the planner
SETTING_NAMES = {"text": "task text only", "task": "task text + description", "eai": "EAI's prompt"}
EAI_JSON = "eai_json"   # the LLM answers EAI's own prompt with a JSON program (as the anchor rows)
EAI_PDDL = "eai_pddl"   # no LLM: Fast Downward on EAI's own PDDL problem files (the anchor of method pddl)


class MethodSpec(BaseModel):
    """One row of the table: a planning method with its options."""

    model_config = ConfigDict(frozen=True)

    name: str
    method: str                        # a method's name (planning.methods), or EAI_JSON
    options: dict = {}
    closed_loop: bool = False          # executes while planning (re-sampling, re-prompting)
    settings: tuple[Setting, ...] = ("eai", "task", "text")


METHODS: dict[str, MethodSpec] = {m.name: m for m in (
    MethodSpec(name="eai-json", method=EAI_JSON, settings=("eai",)),
    MethodSpec(name="vanilla", method="vanilla"),
    MethodSpec(name="translated", method="translated"),
    MethodSpec(name="translated -translation", method="translated", options={"no_translation": True}),
    MethodSpec(name="translated -dynamic example", method="translated",
               options={"fixed_example": True}),
    MethodSpec(name="translated -trajectory correction", method="translated",
               options={"no_trajectory_correction": True}),
    MethodSpec(name="resample", method="resample", closed_loop=True),
    MethodSpec(name="reprompt notion", method="reprompt", options={"correction_level": "notion"},
               closed_loop=True),
    MethodSpec(name="reprompt inference", method="reprompt",
               options={"correction_level": "inference"}, closed_loop=True),
    MethodSpec(name="reprompt cause", method="reprompt", options={"correction_level": "cause"},
               closed_loop=True),
    MethodSpec(name="reprompt cause +plan +track", method="reprompt", closed_loop=True,
               options={"correction_level": "cause", "plan_subtasks": True, "track_subtasks": True}),
    MethodSpec(name="reprompt cause +eliminate", method="reprompt", closed_loop=True,
               options={"correction_level": "cause", "eliminate_objects": True}),
    MethodSpec(name="heuristic NG", method="heuristic", closed_loop=True, options={"guide": "none"}),
    MethodSpec(name="heuristic HLG", method="heuristic", closed_loop=True,
               options={"guide": "high_level"}),
    MethodSpec(name="heuristic LLG", method="heuristic", closed_loop=True,
               options={"guide": "low_level"}),
    MethodSpec(name="reprompt cause +PET", method="reprompt", closed_loop=True,
               options={"correction_level": "cause", "plan_subtasks": True, "track_subtasks": True,
                        "eliminate_objects": True}),
    MethodSpec(name="pddl, goals given", method="pddl", closed_loop=True, settings=("eai",)),
    MethodSpec(name="fast-downward on EAI's PDDL", method=EAI_PDDL, settings=("eai",)),
)}


class GoalRecord(BaseModel):
    """What one method did on one EAI program; enough to re-score without the LLM."""

    key: str
    method: str
    setting: Setting
    identifier: str
    task: str
    program: list[str]                 # script lines (untranslated steps as their text)
    generated: list[str]               # the LLM's own text per step (or its whole answer)
    llm_output: str                    # the program in EAI's answer format
    executable: bool                   # every step executes (this project's executor)
    goal_met: bool                     # EAI's goal conditions hold at the end
    lcs: float
    length: int
    corrections: int
    llm_calls: int
    termination: str
    detail: str
    llm_s: float
    translation_s: float
    execution_s: float
    wall_s: float
    planner_s: float = 0.0             # the classical planner (method pddl and its anchor)
    error: str = ""                    # the planner raised: the goal counts as failed
    reported_success: Optional[bool] = None   # what the planner told its caller (its result's success);
    #                                         None: an anchor's answer, which reports nothing
    pet: dict = {}                     # PET rows: subtasks, tracker outcome, Eliminate's effect


class RunCache:
    """Append-only JSONL of :class:`GoalRecord`; the last record of a key wins."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.records: dict[str, GoalRecord] = {}
        if path.exists():
            for line in path.read_text().splitlines():
                if line.strip():
                    try:
                        r = GoalRecord.model_validate_json(line)
                    except ValueError:
                        continue   # a line cut by an interrupted run
                    self.records[r.key] = r

    def get(self, key: str) -> Optional[GoalRecord]:
        return self.records.get(key)

    def add(self, record: GoalRecord) -> None:
        self.records[record.key] = record
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a") as f:
            f.write(record.model_dump_json() + "\n")


def _goal_directed_digest() -> str:
    """The domain and the code of goal-directed planning: a change re-runs its rows."""
    root = Path(__file__).resolve().parents[1]
    files = sorted((root / "pddl").rglob("*.p*")) + [root / "planning" / "goal_directed.py",
                                                      root / "evaluation" / "eai_pddl.py"]
    digest = hashlib.sha256()
    for f in files:
        if f.suffix in (".py", ".pddl"):
            digest.update(f.read_bytes())
    return digest.hexdigest()[:16]


RECORD_VERSION = 2   # 2: records hold reported_success; a record of an earlier version is planned again


def record_key(config: dict, spec: MethodSpec, setting: str, identifier: str) -> str:
    blob = json.dumps([config, spec.model_dump(), setting, identifier, RECORD_VERSION], sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


class BenchmarkRunner:
    """Runs method x setting x program, using the cache. ``planner_for(task)`` gives a planner
    whose translation uses the objects of that program's initial graph."""

    def __init__(self, llm: LLMBackend, planner_for: Callable[[EaiTask], TranslatedPlanner],
                 cache: RunCache, config: dict, eai_max_tokens: int = 256, pet_config: Optional[dict] = None,
                 heuristic: Optional[HeuristicPlanner] = None, service: Optional[PlanningService] = None) -> None:
        """``service`` runs the goal-directed rows through the same path as the planner node
        (request validation, safety gate, trace)."""
        self.service = service
        self.llm = llm
        self.heuristic = heuristic
        self.pet_config = pet_config or {}
        self.planner_for = planner_for
        self.cache = cache
        self.config = config
        self.eai_max_tokens = eai_max_tokens

    def run(self, spec: MethodSpec, setting: Setting, task: EaiTask) -> tuple[GoalRecord, bool]:
        """(record, whether it came from the cache)."""
        if spec.method in ("pddl", EAI_PDDL):   # no LLM: the planner's settings and the domain matter
            config = {"code": _goal_directed_digest(),
                      "goal_directed": self.service.parts.goal_directed.settings.model_dump() if self.service else {}}
        else:   # the LLM planner's settings, and those beyond them that the row depends on
            config = dict(self.config)
            if spec.method == "heuristic" and self.heuristic is not None:
                config["heuristic"] = self.heuristic.settings.model_dump()
            if any(spec.options.get(k) for k in ("plan_subtasks", "track_subtasks", "eliminate_objects")):
                config["pet"] = self.pet_config
        key = record_key(config, spec, setting, task.identifier)
        cached = self.cache.get(key)
        if cached is not None:
            return cached, True
        t0 = time.perf_counter()
        try:
            if spec.method == EAI_JSON:
                fields = self._eai_json(task)
            elif spec.method == EAI_PDDL:
                fields = self._eai_pddl(task)
            elif spec.method == "pddl":
                fields = self._goal_directed(task)
            else:
                fields = self._plan(spec, setting, task)
        except Exception as exc:   # one goal's failure is recorded, never fatal to the run
            fields = dict(program=[], generated=[], llm_output="{}", executable=False, goal_met=False,
                          corrections=0, llm_calls=0, termination="error", detail="", llm_s=0.0,
                          translation_s=0.0, execution_s=0.0, error=f"{type(exc).__name__}: {exc}",
                          reported_success=None if spec.method in (EAI_JSON, EAI_PDDL) else False)
        record = GoalRecord(key=key, method=spec.name, setting=setting, identifier=task.identifier,
                            task=task.task, lcs=lcs_ratio(fields["program"], task.references),
                            length=len(fields["program"]), wall_s=time.perf_counter() - t0, **fields)
        self.cache.add(record)
        return record, False

    def _plan(self, spec: MethodSpec, setting: Setting, task: EaiTask) -> dict:
        description = {"eai": eai.eai_context(task.identifier), "task": task.description, "text": ""}[setting]
        request = parse_request(task=task.task, description=description[:MAX_DESCRIPTION_CHARS],
                                method=spec.method, execute=spec.closed_loop, options=spec.options)
        executor = VirtualHomeExecutor(graph=task.graph, goal=task.goal) if spec.closed_loop else None
        report = GoalReport()
        if spec.method == "heuristic":
            if self.heuristic is None:
                raise ValueError(f"method {spec.method} needs a planner this benchmark was not given")
            result = self.heuristic.plan(request, lambda event: None, CancelToken(), executor, report)
        else:   # an LLM-step method, run as its registry line says
            result = self.planner_for(task).plan(request, lambda event: None, CancelToken(), executor, report,
                                                 loop=llm_loop(spec.method))
        times = report.times
        program = [st.skill.script() if st.skill.action else st.generated_text for st in result.steps]
        goal: Optional[bool]
        if executor is not None:
            ok, goal = result.executed, bool(executor.goal_met())
            execution_s = times.extra.get("execution_s", 0.0)
        else:   # open loop: the planned program is executed afterwards, as Huang et al. measure it
            t0 = time.perf_counter()
            ok, met = executable([st.skill if st.skill.action else st.generated_text for st in result.steps],
                                 task.graph, task.goal)
            execution_s, goal = time.perf_counter() - t0, bool(met)
        pet = pet_stats(report.stats["pet"], task) if "pet" in report.stats else {}
        return dict(pet=pet, program=program, generated=[st.generated_text for st in result.steps],
                    llm_output=eai.eai_output(program),   # untranslated steps stay, as EAI hallucinations
                    executable=ok, goal_met=goal, corrections=result.num_corrections,
                    llm_calls=result.num_llm_calls, termination=result.termination_reason.value,
                    detail=result.detail, llm_s=times.llm_s, translation_s=times.translation_s,
                    execution_s=execution_s, reported_success=result.success)

    def _goal_directed(self, task: EaiTask) -> dict:
        """Method pddl with EAI's goal conditions, through the planning service."""
        from llm_planner_ros.profiles.virtualhome.goals import eai_goal_spec

        if self.service is None:
            raise RuntimeError("the goal-directed rows need the planning service")
        spec = eai_goal_spec(task.goal, task.graph)
        request = parse_request(task=task.task, method="pddl", execute=True,
                                goal_conditions=tuple(str(lit) for lit in spec.literals),
                                action_goals=tuple("|".join(group) for group in spec.actions),
                                objects=tuple(f"{name}.{i}" for name, i in eai.relevant_ids(task.identifier).items()))
        executor = VirtualHomeExecutor(graph=task.graph, goal=task.goal)
        result, report = self.service.plan_with_report(request, lambda event: None, CancelToken(), executor)
        timings = report.timings()
        program = [st.skill.script() for st in result.steps]
        planner_s = timings.get("planner_s", 0.0)
        return dict(program=program, generated=[st.generated_text for st in result.steps],
                    llm_output=eai.eai_output(program), executable=result.executed,
                    goal_met=bool(executor.goal_met()), corrections=result.num_corrections, llm_calls=0,
                    termination=result.termination_reason.value, detail=result.detail, llm_s=0.0,
                    translation_s=0.0, planner_s=planner_s,
                    execution_s=max(0.0, timings.get("wall_s", 0.0) - planner_s), reported_success=result.success)

    def _eai_pddl(self, task: EaiTask) -> dict:
        from llm_planner_ros.evaluation.eai_pddl import plan_with_eai_pddl

        answer, outcome = plan_with_eai_pddl(task)
        t0 = time.perf_counter()
        skills, scored = eai.score_answer(task, answer)
        return dict(program=[s.script() for s in skills], generated=[answer], llm_output=answer,
                    executable=scored["executable"], goal_met=scored["goal_met"], corrections=0, llm_calls=0,
                    termination=outcome.status, detail=outcome.detail or scored["error"], llm_s=0.0,
                    translation_s=0.0, planner_s=outcome.seconds, execution_s=time.perf_counter() - t0)

    def _eai_json(self, task: EaiTask) -> dict:
        params = SamplingParams(temperature=0.0, max_tokens=self.eai_max_tokens, stop=("<|im_end|>",),
                                seed=self.config.get("seed", 0))
        t0 = time.perf_counter()
        answer = self.llm.chat(eai.helm_prompts()[task.identifier], 1, params)[0].text
        llm_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        skills, scored = eai.score_answer(task, answer)
        return dict(program=[s.script() for s in skills], generated=[answer], llm_output=answer,
                    executable=scored["executable"], goal_met=scored["goal_met"], corrections=0, llm_calls=1,
                    termination="end_of_plan", detail=scored["error"], llm_s=llm_s, translation_s=0.0,
                    execution_s=time.perf_counter() - t0)


def pet_stats(session, task: EaiTask) -> dict:
    """What Plan, Track and Eliminate did on one goal."""
    used = {o for _, objects in as_steps(task.script) for o in objects}
    out: dict = {"subtasks": list(session.subtasks)}
    if session.tracker is not None:
        out["pointer"] = session.tracker.pointer
        out["questions"] = sum(1 for h in session.tracker.history if h.answer is not None)
        out["tracker_finished"] = bool(session.subtasks) and session.tracker.exhausted
    if session.eliminations:
        out["bank_reduction"] = statistics.fmean(e.bank_reduction for e in session.eliminations)
        out["eliminate_recall"] = statistics.fmean(e.recall(used) for e in session.eliminations)
    return out


def pet_summary(records: list[GoalRecord]) -> dict:
    """Tracker precision and recall of "the last subtask is finished" against the simulator's
    goal check (as Wu et al. measure Track), and Eliminate's bank reduction and recall."""
    out: dict = {}
    tracked = [r for r in records if "tracker_finished" in r.pet]
    if tracked:
        finished = [r for r in tracked if r.pet["tracker_finished"]]
        met = [r for r in tracked if r.goal_met]
        both = [r for r in finished if r.goal_met]
        out.update(tracker_precision=len(both) / len(finished) if finished else math.nan,
                   tracker_recall=len(both) / len(met) if met else math.nan,
                   tracker_finished=len(finished), goals_met=len(met),
                   subtasks=statistics.fmean(len(r.pet["subtasks"]) for r in tracked))
    eliminated = [r for r in records if "bank_reduction" in r.pet]
    if eliminated:
        out.update(bank_reduction=statistics.fmean(r.pet["bank_reduction"] for r in eliminated),
                   eliminate_recall=statistics.fmean(r.pet["eliminate_recall"] for r in eliminated))
    return out


def summarise(records: Iterable[GoalRecord]) -> dict:
    """The papers' metrics over one row's records (corrected scoring: every program counts)."""
    rs = list(records)
    if not rs:
        return {}

    def mean(xs: Iterable[float]) -> float:
        xs = list(xs)
        return statistics.fmean(xs) if xs else math.nan

    return {"programs": len(rs), "success": mean(r.goal_met for r in rs),
            # the wrong-goal rate: the planner said done, and EAI's goal does not hold (nan for the
            # anchors, which report nothing)
            "done_not_met": mean(bool(r.reported_success and not r.goal_met) for r in rs
                                 if r.reported_success is not None),
            "executability": mean(r.executable for r in rs), "lcs": mean(r.lcs for r in rs),
            "length": mean(r.length for r in rs), "corrections": mean(r.corrections for r in rs),
            "llm_calls": mean(r.llm_calls for r in rs), "errors": sum(bool(r.error) for r in rs),
            "llm_s": mean(r.llm_s for r in rs), "translation_s": mean(r.translation_s for r in rs),
            "execution_s": mean(r.execution_s for r in rs), "wall_s": mean(r.wall_s for r in rs),
            "planner_s": mean(r.planner_s for r in rs),
            "median_wall_s": statistics.median(r.wall_s for r in rs),
            **pet_summary(rs)}


def eai_summary(scored: dict) -> dict:
    """The figures of EAI's scorer output that the table shows (percentages as fractions)."""
    s = scored["summary"]
    goal, traj = s["goal_evaluation"], s["trajectory_evaluation"]
    return {"success": goal["task_success_rate"] / 100, "executability": traj["execution_success_rate"] / 100,
            "state_goal": goal["state_goal"] / 100, "relation_goal": goal["relation_goal"] / 100,
            "action_goal": goal["action_goal"] / 100, "total_goal": goal["total_goal"] / 100,
            "errors": {k: v for k, v in traj.items() if k != "execution_success_rate"},
            "programs_counted": len(scored["programs"])}


def anchor_records(model: str, tasks: Iterable[EaiTask]) -> list[GoalRecord]:
    """A shipped model's answers as records, scored by this project's executor."""
    answers = {r["identifier"]: r["llm_output"] for r in eai.shipped_responses(model)}
    out = []
    for t in tasks:
        answer = answers.get(t.identifier, "")
        skills, scored = eai.score_answer(t, answer)
        program = [s.script() for s in skills]
        out.append(GoalRecord(key=f"{model}:{t.identifier}", method=model, setting="eai", identifier=t.identifier,
                              task=t.task, program=program, generated=[answer], llm_output=answer,
                              executable=scored["executable"], goal_met=scored["goal_met"],
                              lcs=lcs_ratio(program, t.references), length=len(program), corrections=0,
                              llm_calls=1, termination="shipped", detail=scored["error"], llm_s=0.0,
                              translation_s=0.0, execution_s=0.0, wall_s=0.0))
    return out
