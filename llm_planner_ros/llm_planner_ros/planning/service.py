"""The per-goal pipeline, the same for every method and world: resolve the request once, with
the one world it plans in; build its safety gate; check a given goal against the world's
hazards; run the method (or, under approval 'plan', plan, approve and execute); check a
plan-only plan on a model of the world; report. Its parts come made from the composition root
(``wiring.compose``)."""
from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Optional

from llm_planner_ros.core.errors import CancelToken, ExecutorError, HazardStopped, InvalidGoal, PlanningError
from llm_planner_ros.core.executor import Executor
from llm_planner_ros.core.planner import PlanCallback, StepCallback, no_preview
from llm_planner_ros.core.request import PlanRequest
from llm_planner_ros.core.types import (
    ErrorType,
    GoalReport,
    GoalStatus,
    NoteKind,
    PlanPreview,
    PlanResult,
    PlanStep,
    PreconditionFailure,
    StepEvent,
    TerminationReason,
)
from llm_planner_ros.planning.methods import Goal, GoalRun, MethodRunner
from llm_planner_ros.planning.parts import PlannerParts
from llm_planner_ros.planning.plan_check import check_plan
from llm_planner_ros.planning.resolve import resolve
from llm_planner_ros.safety.gate import Approver, SafetyGate, SafetySettings
from llm_planner_ros.safety.policy import ClassOf, SkillPolicy
from llm_planner_ros.trace.log import TraceLog


class PlanningService:
    """One goal at a time from request to result, for every method; the methods' runners, by
    name, and the parts they and the goal's world are built from come made."""

    def __init__(self, parts: PlannerParts, runners: Mapping[str, MethodRunner],
                 safety: SafetySettings = SafetySettings(), policy: SkillPolicy = SkillPolicy(),
                 approver: Optional[Approver] = None, trace: Optional[TraceLog] = None,
                 robot_world: Optional[Callable[[bool], Optional[Executor]]] = None,
                 executor_factory: Optional[Callable[[str, str], Executor]] = None) -> None:
        """``executor_factory(scene_id, task)`` gives the executor, reset, for goals with
        ``execute=True``; by default the in-process one of the world given in code (and always
        under ``dry_run``). ``robot_world(executes)`` gives the executor as it is now, not reset,
        when its world is a profile's (its skills, objects and words; None: the world given in
        code): goals are checked against it, and plan-only goals plan from its state."""
        self.parts, self.runners = parts, dict(runners)
        self.safety = safety   # safety and policy may be replaced while the node runs; each goal
        self.policy = policy   # reads them once, when its gate is built
        self.approver, self.trace, self.robot_world = approver, trace, robot_world
        self._executor_factory = None if safety.dry_run else executor_factory

    def status(self) -> dict[str, str]:
        """What the service runs, for a health report: the LLM and the world given in code."""
        return self.parts.status()

    @property
    def executor_factory(self) -> Callable[[str, str], Executor]:
        return self._executor_factory or self.parts.world.executor

    def record_unplanned(self, goal_id: str, request: dict, termination: str, detail: str) -> None:
        """Trace a goal that the node ended before it reached :meth:`plan` (see ``TraceLog.unplanned``)."""
        if self.trace is not None:
            self.trace.unplanned(goal_id, request, termination, detail)

    def live_settings(self) -> list[tuple[type, Callable]]:
        """Settings a running node may change: each goal reads them once, when its gate is built."""
        return [(SafetySettings, lambda s: setattr(self, "safety", s)),
                (SkillPolicy, lambda p: setattr(self, "policy", p))]

    def plan(self, request: PlanRequest, on_step: StepCallback, cancel: CancelToken,
             goal_id: str = "", on_plan: PlanCallback = no_preview) -> PlanResult:
        return self.plan_with_report(request, on_step, cancel, goal_id=goal_id, on_plan=on_plan)[0]

    def plan_with_report(self, request: PlanRequest, on_step: StepCallback, cancel: CancelToken,
                         executor: Optional[Executor] = None, goal_id: str = "",
                         on_plan: PlanCallback = no_preview) -> tuple[PlanResult, GoalReport]:
        """The result and this goal's report (time per stage, what the method did). ``executor``,
        already reset, replaces the configured factory for this goal (the benchmark starts each
        program from its own graph). ``goal_id`` (the ROS goal id) names the goal in the trace,
        which records each step as it is decided, so a goal that ends early loses none.
        ``on_plan`` gets the whole plan where the method makes one before it executes."""
        report = GoalReport()
        steps: dict[int, PlanStep] = {}
        if self.trace is not None:
            self.trace.begin(request, goal_id)
        trace, outer = self.trace, on_step

        def recorded(event: StepEvent) -> None:
            steps[event.step.index] = event.step
            if trace is not None:
                trace.step(event)
            outer(event)
        on_step = recorded
        t0 = time.perf_counter()
        try:
            with cancel.active():   # long loops below that take no token stop with the goal too
                result = self._plan(request, on_step, cancel, report, executor, on_plan)
        except HazardStopped as exc:   # a result like any other: the stopped skill is its last step
            stopped = exc.interrupted_skill
            if stopped is not None:
                on_step(StepEvent(step=PlanStep(
                    index=max(steps, default=0) + 1, generated_text=stopped.text, skill=stopped, executed=False,
                    error=PreconditionFailure(ErrorType.HAZARD, str(exc), "; ".join(exc.hazards) or str(exc))),
                    num_corrections=0))
            result = PlanResult(TerminationReason.HAZARD_STOPPED, ending=str(exc),
                                steps=[steps[i] for i in sorted(steps)], executing=request.execute,
                                hazards=exc.hazards)
        except BaseException as exc:
            skill = getattr(exc, "interrupted_skill", None)
            if skill is not None:   # the skill that ran when the goal ended is one of its steps
                on_step(StepEvent(step=PlanStep(
                    index=max(steps, default=0) + 1, generated_text=skill.text, skill=skill, executed=False,
                    error=PreconditionFailure(ErrorType.EXECUTOR_ERROR, str(exc), "it was stopped while it ran")),
                    num_corrections=0))
            if self.trace is not None:
                reason = exc.reason if isinstance(exc, PlanningError) else TerminationReason.INTERNAL_ERROR
                self.trace.end(None, error=f"{type(exc).__name__}: {exc}", termination=reason.value,
                               timings={"wall_s": time.perf_counter() - t0}, steps=list(steps.values()))
            raise
        report.times.extra["wall_s"] = time.perf_counter() - t0
        if self.trace is not None:
            self.trace.end(result, timings=report.timings())
        return result, report

    def _plan(self, request: PlanRequest, on_step: StepCallback, cancel: CancelToken,
              report: GoalReport, given: Optional[Executor] = None, on_plan: PlanCallback = no_preview) -> PlanResult:
        robot = self.robot_world(request.execute) if self.robot_world is not None else None
        world = self.parts.world_for(robot.profile if robot is not None else None, robot)
        goal = resolve(request, world, self.runners, self.safety.approval)
        req = goal.request
        policy = self.policy   # one policy for the whole goal: its gate and what its plan may use
        misfit = policy.unknown_names(world.skill_names, world.object_names)
        if misfit:   # a misspelt entry would silently allow or deny nothing
            raise InvalidGoal(misfit)
        executor = given
        if req.execute and executor is None:
            t0 = time.perf_counter()
            try:
                executor = self.executor_factory(req.scene_id, req.task)
            except PlanningError:
                raise
            except Exception as exc:
                raise ExecutorError(f"cannot start the executor for scene {req.scene_id!r}: {exc}") from exc
            report.times.extra["reset_s"] = time.perf_counter() - t0
        gate = SafetyGate(executor, policy, self.safety, world.skill_problem, self.approver, cancel,
                          world.hazards, world.class_of) if executor is not None else None
        if goal.spec.literals and goal.method != "pddl":   # pddl checks it as it plans
            refused = world.goal_directed.hazardous(goal.spec, gate if gate is not None else
                                                   world.plan_only_world(req))
            if refused is not None:   # a given goal that makes a hazard hold: whatever the method, nothing runs
                refused.executing = req.execute
                return refused
        if gate is not None and self.safety.approval == "plan":
            result = self._approved_plan(goal, on_step, cancel, gate, report, policy, on_plan)
        else:
            result = self.runners[goal.method].plan(GoalRun(goal, on_step, cancel, gate, report, policy, on_plan))
        if req.execute and result.steps and result.termination_reason.is_success \
                and result.goal_status is GoalStatus.UNKNOWN:   # steps ran: that is all that is known
            result.note(NoteKind.GOAL_UNKNOWN, "whether the task's goal holds is unknown (nothing in this world "
                                               "checks it)")
        if not req.execute:
            t0 = time.perf_counter()
            result = withhold_refused(result, policy, world.class_of)
            result = check_plan(result, lambda: world.plan_model(req), world.hazards)
            report.times.extra["check_s"] = time.perf_counter() - t0
        if self.safety.dry_run and request.execute:
            result.note(NoteKind.DRY_RUN, "dry run: executed in the in-process simulator, nothing sent to the bridge")
        return result

    def _approved_plan(self, goal: Goal, on_step: StepCallback, cancel: CancelToken, gate: SafetyGate,
                       report: GoalReport, policy: SkillPolicy, on_plan: PlanCallback) -> PlanResult:
        """approval 'plan': the goal's method plans the whole program without executing (a method
        that confirms its goal with an operator, interpret, confirms it as the executing goal
        would), the program waits for approval, then it executes as approved; a failed step ends
        the goal."""
        plan_only = replace(goal, request=goal.request.model_copy(update={"execute": False}))
        runner = self.runners[goal.method]
        run = GoalRun(plan_only, lambda event: None, cancel, None, report, policy)
        confirming = getattr(runner, "plan_to_approve", None)
        planned = confirming(run, gate) if confirming is not None else runner.plan(run)
        planned.executing = True
        skills = [st.skill for st in planned.steps]
        if not skills and not planned.termination_reason.is_success:
            return planned   # it ended before a plan: unconfirmed, declined, no plan, ...
        if skills:
            on_plan(PlanPreview(tuple(skills), tuple(planned.goal_conditions)))
            gate.approve(skills, "plan")
        for step in planned.steps:
            cancel.check()
            result = gate.execute(step.skill)
            step.executed, step.error = result.success, result.failure
            on_step(StepEvent(step=step, num_corrections=0))
            if not result.success:
                planned.steps = planned.steps[:step.index]
                planned.termination_reason = TerminationReason.CORRECTIONS_EXHAUSTED
                planned.ending = f"step {step.index} failed after approval: {result.failure.message}"
                break
        planned.executed = all(st.executed for st in planned.steps)
        # the goal is judged as the method judges it without approval: its own conditions where
        # it has them (given or interpreted), else the executor's; a goal the method says may not
        # be the goal asked (interpret's, unconfirmed) is not reported reached
        lines = planned.goal_conditions
        met = goal.world.goal_directed.holds(lines, gate) if lines else gate.goal_met()
        planned.goal_status = GoalStatus.UNKNOWN if met is None else (GoalStatus.MET if met else GoalStatus.NOT_MET)
        reached = TerminationReason.GOAL_REACHED if met and not planned.noted(NoteKind.UNCONFIRMED) else None
        if not skills:   # nothing to approve: the method's end, unless the goal does not hold
            if met is False:
                planned.termination_reason = TerminationReason.END_OF_PLAN
                planned.ending = f"the goal does not hold in the world executed (planned: {planned.ending})"
        elif planned.termination_reason is not TerminationReason.CORRECTIONS_EXHAUSTED:
            ran = f"{len(planned.steps)} approved steps executed"
            planned.termination_reason = reached or TerminationReason.END_OF_PLAN
            said = {True: f"{ran}; the goal holds", False: f"{ran}, but the goal does not hold after them",
                    None: f"{ran}; whether the goal holds is unknown"}[met]
            planned.ending = f"{said} (planned: {planned.ending.replace('; not executed', '')})"
        elif reached:
            planned.termination_reason = reached
        return planned


def withhold_refused(result: PlanResult, policy: SkillPolicy, class_of: Optional[ClassOf] = None) -> PlanResult:
    """A plan-only answer passes the policy's lists as an executed one does: a skill on an action
    or object the policy refuses is never handed back as the plan. The plan ends before it, and
    the goal ends ``no_plan`` naming it (admissibility is the plan check's: ``check_plan``)."""
    for step in result.steps:
        why = policy.list_refusal(step.skill, class_of)
        if why:
            result.steps = result.steps[:step.index - 1]
            result.termination_reason = TerminationReason.NO_PLAN
            result.note(NoteKind.WITHHELD, f"step {step.index} {step.skill.script() or step.skill.text!r} is withheld: "
                                           f"{why}; the plan stops before it")
            break
    return result
