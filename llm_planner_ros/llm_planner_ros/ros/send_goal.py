"""Send one PlanTask goal, stream its feedback and print the result.

Usage: ``ros2 run llm_planner_ros send_goal "make breakfast" [--namespace /robot1] [--method M] [--execute]``
or, goal-directed: ``send_goal "Watch TV" --method pddl --goal "(on tv)" --action-goal "LOOKAT|WATCH" --execute``
An interpreted goal that the planner asks to confirm (interpret_confirm) is shown with its
alternatives; a terminal prompts for yes or no, ``--yes`` confirms it. Ctrl-C cancels the goal
(before the planner accepted it: once it does); a second Ctrl-C quits at once.
Exit codes: 0 the goal succeeded; 1 it did not; 2 a goal ROS cannot
carry (a NUL character); 3 no action server; 4 the server rejected the goal; 5 the planner did not
accept the goal or end it in time; 6 the planner went away before it answered.
"""
from __future__ import annotations

import argparse
import math
import signal
import sys
import threading
from collections.abc import Callable
from typing import Optional

import rclpy

from llm_planner_msgs.action import PlanTask
from llm_planner_msgs.msg import ApprovalRequest, MethodOptions
from llm_planner_ros.ros.client import STATUS_NAMES, GoalRun, PlannerClient, PlannerGone, PlanOutcome
from llm_planner_ros.ros.liveness import CONFIRM_S, LOST_AFTER_S


def format_feedback(fb: PlanTask.Feedback) -> str:
    if fb.awaiting:
        return f"  waiting for {fb.awaiting}"
    line = f"  goal: {', '.join(fb.goal_conditions)}\n" if fb.goal_conditions and fb.step_index == 1 else ""
    line += f"  step {fb.step_index:2d}  {fb.script:<40s} score={fb.score:+.3f}"
    if fb.generated_text:   # a planner action reads "(verb args)"; an LLM's step is free text
        line += f"  ({'plan' if fb.generated_text.startswith('(') else 'LLM'}: {fb.generated_text!r})"
    if fb.last_error.type:
        line += f"  FAILED: {fb.last_error.cause}"
    elif fb.executed:
        line += "  executed"
    return line


def format_result(status: int, result: PlanTask.Result) -> str:
    lines = [f"status: {STATUS_NAMES.get(status, status)}  reason: {result.termination_reason}"
             + (f"  ({result.detail})" if result.detail else "")]
    if result.goal_conditions:
        sure = "" if math.isnan(result.confidence) else f" (confidence {result.confidence:.2f})"
        lines.append(f"goal (what done means): {', '.join(result.goal_conditions)}{sure}")
    lines += [f"hazard: {h}" for h in result.hazards]
    for step in result.steps:
        mark = ("executed" if step.executed else f"FAILED: {step.error.cause}") if step.error.type or \
            step.executed else ""
        lines.append(f"  {step.index:2d}. {step.script:<40s} {step.skill.text:<28s} {mark}")
    goal = {1: "met", 0: "not met"}.get(result.goal_status, "unknown")
    lines.append(f"steps={len(result.program)} executed={result.executed} goal={goal} "
                 f"corrections={result.num_corrections} llm_calls={result.num_llm_calls} "
                 f"wall={result.wall_time_s:.2f}s")
    return "\n".join(lines)


def no_server_hint(client: PlannerClient, waited_s: float) -> str:
    """What to try when no planner answers: the PlanTask actions that are up, if any."""
    from rclpy.action.graph import get_action_server_names_and_types_by_node

    node = client.node

    def served(remote: str, ns: str) -> list[str]:
        try:
            return [name for name, types in get_action_server_names_and_types_by_node(node, remote, ns)
                    if "llm_planner_msgs/action/PlanTask" in types]
        except Exception:   # rclpy's NodeNameNonExistentError: the node left since it was listed
            return []
    found = sorted({name for remote, ns in node.get_node_names_and_namespaces() for name in served(remote, ns)})
    lines = [f"no action server {client.action_name} after {waited_s:.0f}s."]
    if found:
        ns = found[0].rpartition("/")[0] or "/"
        lines.append(f"PlanTask actions that are up: {', '.join(found)}; e.g. --namespace {ns}")
    else:
        lines.append("No PlanTask action is up: start the stack (ros2 launch llm_planner_ros sim_stack_launch.py), "
                     "check ROS_DOMAIN_ID, and 'ros2 action list -t'.")
    return "\n".join(lines)


def format_confirmation(request: ApprovalRequest) -> str:
    """An interpreted goal waiting for confirmation, as the terminal shows it."""
    sure = "unknown" if math.isnan(request.confidence) else f"{request.confidence:.2f}"
    lines = [f"confirm the goal for {request.task!r} (confidence {sure}, up to {request.timeout_s:.0f} s):"]
    lines += [f"    {text}  {script}" for text, script in zip(request.texts, request.scripts)]
    lines += [f"    {script}" for script in request.scripts[len(request.texts):]]
    if request.alternatives:
        lines.append("  or did you mean: " + "; ".join(request.alternatives))
    if request.why:
        lines.append(f"  asked because {request.why}")
    return "\n".join(lines)


def confirm_when_asked(client: PlannerClient, run: GoalRun, yes: bool, timeout_s: float = 3600.0) -> None:
    """Answer the goal's confirmation when the planner asks: yes with ``yes``; else a prompt when
    standard input is a terminal; else the operator answers elsewhere (console, approve service)."""
    try:
        request = client.wait_confirmation(run, timeout_s)
    except (RuntimeError, TimeoutError, PlannerGone):
        return
    print(format_confirmation(request), flush=True)
    if yes:
        approve, reason = True, "--yes"
    elif sys.stdin is not None and sys.stdin.isatty():
        try:
            said = input("run this goal? [y/N] ").strip().lower()
        except EOFError:
            said = ""
        approve, reason = said in ("y", "yes"), "" if said in ("y", "yes") else "declined at the terminal"
    else:
        print("  (no terminal: answer in the operator console or on the approve service, or pass --yes)",
              flush=True)
        return
    try:
        accepted, message = client.answer(request, approve, reason)
    except (RuntimeError, TimeoutError, PlannerGone) as exc:
        print(f"  the answer did not reach the planner: {exc}", file=sys.stderr, flush=True)
        return
    print(f"  {'confirmed' if approve else 'declined'}" + ("" if accepted else f" (refused: {message})"), flush=True)


def send_interruptible(send_goal: Callable[[], GoalRun]) -> tuple[GoalRun, bool]:
    """``send_goal()`` (the client's send, which waits for the planner's answer) in a thread: (the
    run, whether Ctrl-C came meanwhile). A goal interrupted there may still be accepted and run, so
    Ctrl-C waits for the answer, for the caller to cancel the goal; a second Ctrl-C is raised."""
    sent: list = []   # the run, or what the send raised
    done = threading.Event()

    def target() -> None:
        try:
            sent.append(send_goal())
        except BaseException as exc:   # raised again in the main thread
            sent.append(exc)
        finally:
            done.set()
    threading.Thread(target=target, daemon=True).start()
    interrupted = False
    while not done.is_set():
        try:
            done.wait(0.25)   # in slices: Ctrl-C reaches the main thread
        except KeyboardInterrupt:
            if interrupted:
                raise
            interrupted = True
            print("interrupted: waiting for the planner to answer the goal, to cancel it "
                  "(Ctrl-C again to quit; the goal may then still run)", file=sys.stderr, flush=True)
    if isinstance(sent[0], BaseException):
        raise sent[0]
    return sent[0], interrupted


def send(client: PlannerClient, goal: PlanTask.Goal, server_timeout: float, accept_timeout: float = 30.0,
         yes: bool = False) -> int:
    action = client.action_name
    print(f"waiting for the action server {action} ...", file=sys.stderr, flush=True)
    if not client.wait_until_ready(server_timeout):
        print(no_server_hint(client, server_timeout), file=sys.stderr)
        return 3
    print(f"goal: {goal.task!r} method={goal.method or '(default)'} execute={goal.execute}")
    fields = {name: getattr(goal, name) for name in ("description", "scene_id", "goal_conditions",
                                                      "action_goals", "objects")}
    try:
        run, interrupted = send_interruptible(lambda: client.send(
            goal.task, goal.method, goal.execute, options=goal.options, timeout_s=accept_timeout,
            on_feedback=lambda fb: print(format_feedback(fb), flush=True), **fields))
        if run.result_future is None:
            print("goal rejected by the server (see its log for the reason)", file=sys.stderr)
            return 4

        def cancelled() -> PlanOutcome:
            print(f"cancelling goal {bytes(run.handle.goal_id.uuid).hex()[:8]}...", file=sys.stderr, flush=True)
            client.cancel(run)
            return client.result(run)
        if interrupted:
            outcome = cancelled()
        else:
            threading.Thread(target=confirm_when_asked, args=(client, run, yes), daemon=True).start()
            try:
                outcome = client.result(run)
            except KeyboardInterrupt:
                outcome = cancelled()
    except PlannerGone as exc:
        print(f"{exc} (no heartbeat for {LOST_AFTER_S + CONFIRM_S:g}s); the goal has no result", file=sys.stderr)
        return 6
    except ValueError as exc:
        print(f"not sent: {exc}", file=sys.stderr)
        return 2
    except TimeoutError as exc:
        print(f"{exc} (action '{action}'); the planner may be stuck or overloaded: check its log, and "
              f"'ros2 action info {action}'", file=sys.stderr)
        return 5
    print(format_result(outcome.status, outcome.result), flush=True)
    return 0 if outcome.succeeded else 1


def main(argv: Optional[list[str]] = None) -> None:
    # Ctrl-C cancels the goal, even where this was started with SIGINT ignored (a script's
    # background job inherits that, and Python then raises no KeyboardInterrupt)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    args_all = sys.argv[1:] if argv is None else argv
    ros_args = rclpy.utilities.remove_ros_args(["send_goal", *args_all])[1:]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("task")
    parser.add_argument("--description", default="")
    parser.add_argument("--scene", default="")
    parser.add_argument("--method", default="", metavar="METHOD",
                        help="planning method, by its name in the planner's registry (the planner refuses an "
                             "unknown one, naming the known); empty: the planner node's default_method")
    parser.add_argument("--execute", action="store_true", help="execute the skills, not only plan")
    parser.add_argument("--goal", action="append", default=[], metavar="LITERAL",
                        help="goal condition for --method pddl, e.g. '(on tv)'; repeat for more")
    parser.add_argument("--action-goal", action="append", default=[], metavar="VERBS",
                        help="action goal for --method pddl, e.g. 'LOOKAT|WATCH'")
    parser.add_argument("--object", action="append", default=[], dest="objects", metavar="NAME",
                        help="--method pddl plans only with these objects")
    parser.add_argument("--namespace", default="", help="the stack's namespace, e.g. /robot1 (as launched with "
                        "namespace:=/robot1); default: this node's (--ros-args -r __ns:=/robot1)")
    parser.add_argument("--action", default="plan_task",
                        help="the action's name, relative to the namespace, or absolute (/robot1/plan_task)")
    parser.add_argument("--server-timeout", type=float, default=30.0, help="seconds to wait for the action server")
    parser.add_argument("--accept-timeout", type=float, default=30.0,
                        help="seconds to wait for the planner to accept the goal")
    parser.add_argument("--time-limit", type=float, default=-1.0, help="seconds for the goal; default: the node's")
    parser.add_argument("--yes", action="store_true", help="confirm the interpreted goal if the planner asks "
                        "(interpret_confirm); without it, a terminal prompts")
    args = parser.parse_args(ros_args)
    goal = PlanTask.Goal(task=args.task, description=args.description, scene_id=args.scene,
                         method=args.method, execute=args.execute, goal_conditions=args.goal,
                         action_goals=args.action_goal, objects=args.objects,
                         options=MethodOptions(time_limit_s=args.time_limit))
    client = PlannerClient(args.namespace, action=args.action, node_name="send_goal", args=["send_goal", *args_all])
    try:
        code = send(client, goal, args.server_timeout, args.accept_timeout, args.yes)
    except KeyboardInterrupt:
        print("interrupted; the goal may still run", file=sys.stderr)
        code = 130
    finally:
        client.close()
    raise SystemExit(code)
