"""Planning time and memory as the world grows (issue 41), on buildings from bench/building.py:
method pddl with the goals given (with the relevance cut, and with the whole world) and method
interpret from the task text alone, in-process and through the nodes, side by side.

    python bench/scale.py [--sizes 100 1000 10000 50000] [--tasks 20] [--whole-tasks 5]
                          [--whole-up-to 10000] [--nodes-up-to 50000] [--memory-goals 100]
                          [--out bench/results]

Each (size, setting) runs in its own process, so that its resident memory is its own. Per goal:
time (the first goal's apart, as it calibrates method interpret's confidence on a new world; the
median and p90 of the others), Fast Downward's time, the problem's objects (the cut's size), and the outcome:
reached as asked (it ended goal_reached with the task's goal among the goal it reached), a wrong
goal reached (goal_reached, without the task's goal), or not reached. A goal that interpret is
unsure of waits for an operator through the nodes: the bench declines it at once (in-process,
nobody can be asked: it ends unconfirmed), so that neither counts as reached. Through the nodes, the
planner's resident memory after ``--memory-goals`` goals (the tasks again, untimed, after the
timed ones). Writes scale.json and scale.png (log-log time against objects) and prints a table.
"""
from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "llm_planner_ros"))   # the package folder
sys.path.insert(0, str(ROOT / "bench"))

SETTINGS = {"cut": "pddl, goals given, in-process", "whole": "pddl, goals given, the whole world (no cut)",
            "nodes": "pddl, goals given, through the nodes", "interpret": "interpret, task text alone, in-process",
            "interpret_nodes": "interpret, task text alone, through the nodes"}
METHOD = {"cut": "pddl", "whole": "pddl", "nodes": "pddl", "interpret": "interpret", "interpret_nodes": "interpret"}


def outcome(reason: str, asked: list[str], reached_goal: list[str]) -> dict:
    """Reached as asked, or a wrong goal reached (the goal reached does not include the task's)."""
    done = reason in ("goal_reached", "already_done")
    asked_in = set(asked) <= set(reached_goal)
    return {"reached": done and asked_in, "wrong": done and not asked_in}


def p90(values: list[float]) -> float:
    return sorted(values)[max(0, round(0.9 * len(values)) - 1)] if values else float("nan")


def one(size: int, setting: str, tasks: int, seed: int, precision: str = "fp32",
        llm_model: str = "smollm2-135m") -> dict:
    """One size and setting, in this process: the goals, then this process's peak memory."""
    import building

    from llm_planner_ros.core.errors import CancelToken
    from llm_planner_ros.core.request import parse_request
    from llm_planner_ros.executors.pddl_world import PddlWorldExecutor
    from llm_planner_ros.pddl.problem import ReachableCut
    from llm_planner_ros.profiles.loader import load_profile
    from llm_planner_ros.wiring import BackendSettings, ServiceConfig, compose

    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        path, goals = building.write(Path(tmp) / "building", size, seed)
        profile = load_profile(path)
        if setting == "whole":   # the same profile, its cut never cutting
            cut = ReachableCut(profile.spec.agent or "", whole_up_to=sys.maxsize, widens=False)
            profile.__dict__["relevant_objects"] = cut
        load_s = time.perf_counter() - t0
        executor = PddlWorldExecutor(profile)

        def reset(scene: str, task: str) -> PddlWorldExecutor:
            executor.reset()
            return executor
        service = compose(ServiceConfig.of(BackendSettings(embedding_precision=precision, llm_model=llm_model)),
                          executor_factory=reset,
                          robot_world=lambda executes: executor)
        rows = []
        for task in goals[:tasks]:
            t1 = time.perf_counter()
            given = task["goal"] if METHOD[setting] == "pddl" else []
            result, report = service.plan_with_report(
                parse_request(task=task["task"], method=METHOD[setting], execute=True, goal_conditions=given),
                lambda e: None, CancelToken())
            stats = report.stats
            rows.append({"task": task["task"], "kind": task["kind"], "goal": task["goal"],
                         "seconds": time.perf_counter() - t1, "fast_downward_s": stats.get("planner_s", 0.0),
                         "world_s": stats.get("world_s", 0.0), "problem_objects": stats.get("problem_objects", 0),
                         "widened": bool(stats.get("widened")), "reason": result.termination_reason.value,
                         **outcome(result.termination_reason.value, task["goal"], list(result.goal_conditions)),
                         "reached_goal": list(result.goal_conditions),
                         "steps": len(result.steps), "detail": result.detail[:200]})
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"size": size, "setting": setting, "load_s": load_s, "rows": rows, "peak_rss_mb": peak_mb,
            "embedding_precision": precision, "llm_model": llm_model}


def over_ros(size: int, setting: str, tasks: int, seed: int, memory_goals: int, precision: str = "fp32",
             llm_model: str = "smollm2-135m") -> dict:
    """The goals through the nodes: the building's reference robot (pddl_robot), the executor
    bridge (robot backend) and the planner node, each started here in its own namespace, sent
    with PlannerClient; the planner's peak memory is its own (VmHWM)."""
    import os
    import threading
    import uuid

    import building
    import rclpy

    from llm_planner_ros.ros.client import PlannerClient

    lib = ROOT / "install" / "llm_planner_ros" / "lib" / "llm_planner_ros"
    ns = f"/scale_{uuid.uuid4().hex[:6]}"
    with tempfile.TemporaryDirectory() as tmp:
        path, goals = building.write(Path(tmp) / "building", size, seed)
        argv = [[str(lib / "pddl_robot"), "--ros-args", "-r", f"__ns:={ns}/robot", "-p", f"profile:={path}"],
                [str(lib / "executor_bridge"), "--ros-args", "-r", f"__ns:={ns}", "-p", "backend:=robot",
                 "-p", "robot_action:=robot/execute_skill"],
                [str(lib / "planner_node"), "--ros-args", "-r", f"__ns:={ns}", "-p", "world:=none",
                 "-p", "trace_log:=''", "-p", f"embedding_precision:={precision}", "-p", f"llm_model:={llm_model}"]]
        t0 = time.perf_counter()
        nodes = [subprocess.Popen(a, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for a in argv]
        lines: list[str] = []
        readers = [threading.Thread(target=lambda n=n: lines.extend(iter(n.stdout.readline, "")), daemon=True)
                   for n in nodes]
        for r in readers:
            r.start()
        rows = []
        try:
            while not any("planner ready" in line for line in lines):
                if any(n.poll() is not None for n in nodes) or time.perf_counter() - t0 > 600:
                    raise SystemExit("the nodes did not start:\n" + "".join(lines[-30:]))
                time.sleep(0.1)
            ready_s = time.perf_counter() - t0
            rclpy.init()
            with PlannerClient(ns) as client:
                client.wait_until_ready(120)
                method = METHOD[setting]
                sent = 0
                while sent < max(memory_goals, len(goals[:tasks])):
                    task = goals[:tasks][sent % len(goals[:tasks])]
                    t1 = time.perf_counter()
                    given = task["goal"] if method == "pddl" else []
                    run = client.send(task["task"], method, True, goal_conditions=given, timeout_s=60)
                    if method == "interpret":   # unsure, it asks an operator: the bench declines at once
                        try:
                            client.answer(client.wait_confirmation(run, 600), approve=False,
                                          reason="the bench declines a goal the planner is unsure of")
                        except RuntimeError:    # it ended without asking
                            pass
                    r = client.result(run, 600).result
                    if sent < len(goals[:tasks]):   # timed: each task once; then untimed, for the memory
                        rows.append({"task": task["task"], "kind": task["kind"], "goal": task["goal"],
                                     "seconds": time.perf_counter() - t1, "fast_downward_s": float("nan"),
                                     "world_s": float("nan"), "problem_objects": 0,
                                     "widened": "widened" in r.detail, "reason": r.termination_reason,
                                     **outcome(r.termination_reason, task["goal"], list(r.goal_conditions)),
                                     "reached_goal": list(r.goal_conditions), "steps": len(r.program),
                                     "detail": r.detail[:200]})
                    sent += 1
            rclpy.shutdown()
            status = dict(x.split(":", 1) for x in Path(f"/proc/{nodes[2].pid}/status").read_text().splitlines())
            peak_mb = int(status["VmHWM"].split()[0]) / 1024
            rss_mb = int(status["VmRSS"].split()[0]) / 1024
        finally:
            for n in nodes:
                if n.poll() is None:
                    os.kill(n.pid, 2)
            for n in nodes:
                n.wait(30)
    return {"size": size, "setting": setting, "load_s": ready_s, "rows": rows, "peak_rss_mb": peak_mb,
            "rss_after_mb": rss_mb, "goals_sent": sent, "embedding_precision": precision,
            "llm_model": llm_model}


def summary(run: dict) -> dict:
    rows = run["rows"]
    secs = [r["seconds"] for r in rows[1:]] or [r["seconds"] for r in rows]   # the first goal apart: set-up
    return {"size": run["size"], "setting": run["setting"], "goals": len(rows),
            "reached": sum(r["reached"] for r in rows), "wrong_goal": sum(r.get("wrong", False) for r in rows),
            "by_kind": {k: [sum(r["reached"] for r in rows if r["kind"] == k), sum(r["kind"] == k for r in rows)]
                        for k in dict.fromkeys(r["kind"] for r in rows)},
            "first_goal_s": rows[0]["seconds"] if rows else None, "rss_after_mb": run.get("rss_after_mb"),
            "goals_sent": run.get("goals_sent", len(rows)),
            "median_s": statistics.median(secs) if secs else None,
            "p90_s": p90(secs), "fast_downward_median_s": statistics.median(r["fast_downward_s"] for r in rows)
            if rows else None, "world_median_s": statistics.median(r["world_s"] for r in rows) if rows else None,
            "problem_objects_median": statistics.median(r["problem_objects"] for r in rows) if rows else None,
            "ready_or_load_s": run["load_s"],
            "widened": sum(r["widened"] for r in rows), "peak_rss_mb": run["peak_rss_mb"], "load_s": run["load_s"]}


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9.6, 4.2))
    for setting, style in (("cut", "o-"), ("whole", "s--"), ("nodes", "^-."), ("interpret", "D-"),
                           ("interpret_nodes", "v-.")):
        pts = [(r["size"], r["median_s"], r["p90_s"]) for r in rows if r["setting"] == setting and r["goals"]]
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], style, label=f"{SETTINGS[setting]}, median")
            ax.plot([p[0] for p in pts], [p[2] for p in pts], style, alpha=0.35, label=f"{setting}, p90")
    for r in rows:
        if r["goals"] and not r["reached"]:
            ax.annotate(f"{r['reached']}/{r['goals']} reached (time limit)", (r["size"], r["median_s"]),
                        textcoords="offset points", xytext=(-20, -14), fontsize=7)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("objects in the world")
    ax.set_ylabel("seconds per goal, executed (median; p90 pale)")
    ax.set_title("Planning time against world size (bench/scale.py)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 10000, 50000])
    p.add_argument("--tasks", type=int, default=20)
    p.add_argument("--whole-tasks", type=int, default=5, help="goals per size on the whole world (slow)")
    p.add_argument("--whole-up-to", type=int, default=10000, help="the largest size run on the whole world")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--nodes-up-to", type=int, default=50000, help="the largest size run through the nodes")
    p.add_argument("--interpret-up-to", type=int, default=50000, help="the largest size run with interpret")
    p.add_argument("--memory-goals", type=int, default=100, help="goals sent through the nodes before the "
                                                                 "planner's memory is read")
    p.add_argument("--settings", nargs="+", default=list(SETTINGS), choices=list(SETTINGS))
    p.add_argument("--embedding-precision", choices=("fp32", "int8"), default="fp32",
                   help="the MiniLM embedder's weights (int8: quantised at set-up)")
    p.add_argument("--llm-model", default="smollm2-135m", help="the planning model's registry line (llm_model)")
    p.add_argument("--out", type=Path, default=ROOT / "bench" / "results")
    p.add_argument("--replot", action="store_true", help="only draw scale.png again from --out's scale.json")
    p.add_argument("--one", nargs=2, metavar=("SIZE", "SETTING"), help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.one:
        size, setting = int(args.one[0]), args.one[1]
        run = over_ros(size, setting, args.tasks, args.seed, args.memory_goals, args.embedding_precision,
                       args.llm_model) \
            if setting.endswith("nodes") else one(size, setting, args.whole_tasks if setting == "whole" else args.tasks,
                                                   args.seed, args.embedding_precision, args.llm_model)
        print(json.dumps(run))
        return
    if args.replot:
        plot(json.loads((args.out / "scale.json").read_text())["summary"], args.out / "scale.png")
        return
    runs = []
    for size in args.sizes:
        for setting in args.settings:
            if setting == "whole" and size > args.whole_up_to or setting.endswith("nodes") and \
                    size > args.nodes_up_to or setting.startswith("interpret") and size > args.interpret_up_to:
                continue
            done = subprocess.run([sys.executable, __file__, "--one", str(size), setting, "--tasks", str(args.tasks),
                                   "--whole-tasks", str(args.whole_tasks), "--seed", str(args.seed),
                                   "--memory-goals", str(args.memory_goals),
                                   "--embedding-precision", args.embedding_precision, "--llm-model", args.llm_model],
                                  capture_output=True, text=True, timeout=7200)
            if done.returncode:
                raise SystemExit(f"{size} {setting}: {done.stderr[-2000:]}")
            runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
            s = summary(runs[-1])
            print(f"{size:>6} {setting:15s} reached {s['reached']}/{s['goals']} (wrong goal {s['wrong_goal']})  "
                  f"median {s['median_s']:.2f}s "
                  f"p90 {s['p90_s']:.2f}s  FD {s['fast_downward_median_s']:.2f}s  objects "
                  f"{s['problem_objects_median']:.0f}  widened {s['widened']}  planner peak rss "
                  f"{s['peak_rss_mb']:.0f} MB" + (f", {s['rss_after_mb']:.0f} MB after {s['goals_sent']} goals"
                                            if s["rss_after_mb"] else ""), flush=True)
    rows = [summary(r) for r in runs]
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "scale.json").write_text(json.dumps({"summary": rows, "runs": runs}, indent=1))
    plot(rows, args.out / "scale.png")
    print(f"wrote {args.out / 'scale.json'} and {args.out / 'scale.png'}")


if __name__ == "__main__":
    main()
