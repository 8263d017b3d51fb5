"""Time per goal, split by stage, for one configuration; prints JSON. bench/speed.py runs it for
each configuration side by side (this tree, a baseline revision, the OpenAI-compatible path,
each weight type), so each runs in a fresh process.

    python bench/goal_times.py [--root TREE] [--backend embedded|openai] [--model-path GGUF]
        [--openai-base-url URL] [--prompt-cache-mb N] [--ros] [--method M] [--again N] [--tasks ...]

Goals: method reprompt (or --method), executed, task text only. The first goal is the fresh
planner's; the rest of --tasks are new tasks, warm; --again N goals more repeat the tasks from
the first (a soak, with the resident memory after it). ``--root`` imports llm_planner_ros from
another checkout (a baseline revision). ``--ros`` sends the same goals to the nodes instead
(planner_node and executor_bridge started here, over DDS, through the PlannerClient facade): the
time per goal as a client sees it, the planner's own time, and the rest (transport, action round
trips, the bridge).
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

STAGES = {"interpret": ("reset_s", "interpret_index_s", "interpret_llm_s", "interpret_orient_s", "planner_s",
                         "world_s", "interpret_relax_s"),
          "pddl": ("reset_s", "planner_s", "world_s")}
LLM_STAGES = ("reset_s", "example_s", "bank_s", "llm_s", "translation_s", "execution_s")
TASKS = ["Watch TV", "Browse internet", "Brush teeth", "Change TV channel", "Cook some food", "Drink",
         "Get some water", "Go to sleep", "Go to toilet", "Listen to music", "Make coffee", "Pet cat", "Pick up phone",
         "Put groceries in Fridge", "Read book", "Relax on sofa", "Set up table", "Take shower", "Turn on light",
         "Wash clothes", "Wash dishes by hand", "Wash dishes with dishwasher", "Wash hands", "Wash teeth", "Work",
         "Write an email"]   # EAI's 26 tasks, each from its first program


def composed(llm, embedder, planner_settings):
    """The service, built as the revision under test builds it: through its composition root
    (``wiring.compose``), or for a revision before it, ``PlanningService`` itself. Every goal
    runs unasked (interpret_confirm never), as before issue 37."""
    try:
        from llm_planner_ros.wiring import ServiceConfig, compose
    except ImportError:   # a revision before issue 39's composition root
        from llm_planner_ros.planning.goal_directed import GoalDirectedSettings
        from llm_planner_ros.planning.service import PlanningService

        never = {"goal_directed": GoalDirectedSettings(interpret_confirm="never")} \
            if "interpret_confirm" in GoalDirectedSettings.model_fields else {}
        return PlanningService(llm, embedder, planner_settings(), **never)
    return compose(ServiceConfig.from_flat({"interpret_confirm": "never"}), llm=llm, embedder=embedder)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--root", default="")
    p.add_argument("--backend", choices=["embedded", "openai"], default="embedded")
    p.add_argument("--model-path", default="")
    p.add_argument("--openai-base-url", default="")
    p.add_argument("--prompt-cache-mb", type=int, default=None)
    p.add_argument("--ros", action="store_true", help="through the planner and bridge nodes over DDS")
    p.add_argument("--method", default="reprompt", help="the planning method of every goal")
    p.add_argument("--tasks", nargs="*", default=TASKS)
    p.add_argument("--goals-from", default="", help="a JSON this script wrote (e.g. with --method interpret): "
                   "each task's goal conditions are given (method pddl: goals given)")
    p.add_argument("--again", type=int, default=0,
                   help="then N goals more, the tasks again from the first (repeated goals; a soak)")
    args = p.parse_args()
    given = goals_given(args.goals_from)
    if args.ros:
        print(json.dumps(over_ros(args.tasks, args.method, args.again, given)))
        return
    if args.root:   # the package folder; before the side-by-side layout, the tree itself
        package = Path(args.root) / "llm_planner_ros"
        sys.path.insert(0, str(package if (package / "llm_planner_ros").is_dir() else Path(args.root)))
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from llm_planner_ros.core.errors import CancelToken
    from llm_planner_ros.core.request import parse_request
    from llm_planner_ros.core.settings import PlannerSettings
    from llm_planner_ros.translation.onnx_embedder import OnnxSentenceEmbedder

    if args.backend == "openai":
        from llm_planner_ros.llm.openai_backend import OpenAIBackend

        llm = OpenAIBackend(args.openai_base_url, "smollm2")
    else:
        from llm_planner_ros.llm.llama_cpp_backend import LlamaCppBackend, smollm2_path

        extra = {} if args.prompt_cache_mb is None else {"prompt_cache_mb": args.prompt_cache_mb}
        llm = LlamaCppBackend(Path(args.model_path) if args.model_path else smollm2_path(), **extra)
    t0 = time.perf_counter()
    service = composed(llm, OnnxSentenceEmbedder(), PlannerSettings)
    setup_s = time.perf_counter() - t0
    goals = []
    for task in args.tasks + again(args.tasks, args.again):
        before = (getattr(llm.stats, "prompt_tokens", None), getattr(llm.stats, "prompt_evaluated", None))
        t0 = time.perf_counter()
        request = parse_request(task=task, method=args.method, execute=True, **given.get(task, {}))
        result, report = service.plan_with_report(request, lambda e: None, CancelToken())
        wall = time.perf_counter() - t0
        timings = report.timings()
        stages = {k: float(timings.get(k, 0.0)) for k in STAGES.get(args.method, LLM_STAGES)}
        stages["untimed_s"] = wall - sum(stages.values())
        after = (getattr(llm.stats, "prompt_tokens", None), getattr(llm.stats, "prompt_evaluated", None))
        goals.append({"task": task, "wall_s": wall, **stages, "goal_met": int(result.goal_status) == 1,
                      "program": result.program, "llm_calls": result.num_llm_calls,
                      "goal_conditions": list(result.goal_conditions),
                      "prompt_tokens": None if before[0] is None else after[0] - before[0],
                      "prompt_evaluated": None if before[1] is None else after[1] - before[1]})
    print(json.dumps({"setup_s": setup_s, "llm": llm.name, "method": args.method, "goals": goals,
                      **summary(goals, len(args.tasks)), "rss_mb": rss_mb()}))


def goals_given(path: str) -> dict[str, dict[str, list[str]]]:
    """Task -> the goal its first goal had in the JSON at ``path`` (goal_conditions and
    action_goals, as PlanTask.Goal's fields); none: {}."""
    if not path:
        return {}
    with open(path) as f:
        goals = json.load(f)["goals"]
    out: dict[str, dict[str, list[str]]] = {}
    for g in goals:
        lines = g["goal_conditions"]
        out.setdefault(g["task"], {"goal_conditions": [x for x in lines if x.startswith("(")],
                                   "action_goals": [x for x in lines if not x.startswith("(")]})
    return out


def again(tasks: list[str], n: int) -> list[str]:
    """``n`` goals, the tasks again from the first."""
    return [tasks[i % len(tasks)] for i in range(n)]


def summary(goals: list[dict], new: int) -> dict:
    """First goal, the other new tasks (warm) and the repeated ones, by median wall time."""
    repeated = [g["wall_s"] for g in goals[new:]]
    return {"first_s": goals[0]["wall_s"], "warm_median_s": statistics.median(g["wall_s"] for g in goals[1:new]),
            "repeated_median_s": statistics.median(repeated) if repeated else None,
            "goals_met": sum(g["goal_met"] for g in goals[:new])}


def rss_mb(pid: str = "self") -> float:
    """Resident memory now, from /proc."""
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:")) / 1024


def _goals_over_ros(ns: str, tasks: list[str], method: str, nodes: list, logs: list,
                    given: dict[str, dict[str, list[str]]]) -> tuple[float, list[dict]]:
    """The goals one after another; each with the planner node's resident memory after it."""
    from llm_planner_ros.ros.client import PlannerClient

    with PlannerClient(ns, node_name="bench_goal_times") as planner:
        t0 = time.perf_counter()
        while not planner.wait_until_ready(1.0):
            for node, log in zip(nodes, logs):
                if node.poll() is not None:
                    log.seek(0)
                    raise RuntimeError(f"{node.args[0]} exited: {log.read().decode()[-2000:]}")
            if time.perf_counter() - t0 > 300:
                raise RuntimeError("the planner node did not start within 300 s")
        setup_s = time.perf_counter() - t0
        goals: list[dict] = [{"task": "", "planner_rss_mb": rss_mb(str(nodes[1].pid))}]   # when ready
        for task in tasks:
            t0 = time.perf_counter()
            outcome = planner.plan(task, method=method, execute=True, **given.get(task, {}))
            wall = time.perf_counter() - t0
            r = outcome.result
            goals.append({"task": task, "wall_s": wall, "planner_s": r.wall_time_s,
                          "ros_s": wall - r.wall_time_s, "goal_met": r.goal_status == 1,
                          "program": list(r.program), "llm_calls": r.num_llm_calls,
                          "goal_conditions": list(r.goal_conditions),
                          "prompt_tokens": None, "prompt_evaluated": None,
                          "planner_rss_mb": rss_mb(str(nodes[1].pid))})
    return setup_s, goals


def over_ros(tasks: list[str], method: str = "reprompt", repeats: int = 0,
             given: Optional[dict[str, dict[str, list[str]]]] = None) -> dict:
    """The goals through planner_node and executor_bridge (embedded defaults), each started here
    in its own namespace, sent with the PlannerClient facade."""
    import subprocess
    import tempfile
    import uuid

    lib = Path(__file__).resolve().parents[1] / "install" / "llm_planner_ros" / "lib" / "llm_planner_ros"
    ns = f"/bench_{uuid.uuid4().hex[:6]}"
    common = ["--ros-args", "-r", f"__ns:={ns}"]
    with tempfile.TemporaryFile() as bridge_log, tempfile.TemporaryFile() as planner_log:
        logs = [bridge_log, planner_log]
        nodes = [subprocess.Popen([str(lib / "executor_bridge"), *common], stdout=bridge_log,
                                  stderr=subprocess.STDOUT),
                 subprocess.Popen([str(lib / "planner_node"), *common, "-p", "trace_log:=''",
                                   "-p", "interpret_confirm:=never"],
                                  stdout=planner_log, stderr=subprocess.STDOUT)]
        try:
            setup_s, goals = _goals_over_ros(ns, tasks + again(tasks, repeats), method, nodes, logs, given or {})
            ready = goals.pop(0)["planner_rss_mb"]
        finally:
            for node in nodes:
                node.terminate()
            for node in nodes:
                node.wait(30)
    return {"setup_s": setup_s, "llm": "planner_node (embedded defaults)", "over_ros": True, "method": method,
            "goals": goals, **summary(goals, len(tasks)), "planner_rss_mb_ready": ready,
            "planner_rss_mb": goals[-1]["planner_rss_mb"]}


if __name__ == "__main__":
    main()
