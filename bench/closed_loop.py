"""Open loop vs re-sampling vs corrective re-prompting, on EAI VirtualHome tasks.

    python bench/closed_loop.py [--tasks 20] [--out bench/results]

Each task is one human program of the EAI set: its task name is the goal and its recorded
initial graph is the simulator's start state (and the skill bank's objects). Every method runs
on the embedded defaults with execute=true. Prints a table and writes closed_loop.json / .png.
Executability: the plan has at least one step and every step of its program executed. Goal met:
EAI's goal conditions for that program hold in the final state (the planner never sees them).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from llm_planner_ros.core.errors import CancelToken  # noqa: E402
from llm_planner_ros.core.request import parse_request  # noqa: E402
from llm_planner_ros.executors.virtualhome import VirtualHomeExecutor  # noqa: E402
from llm_planner_ros.llm.llama_cpp_backend import LlamaCppBackend, smollm2_path  # noqa: E402
from llm_planner_ros.planning.examples import DemonstrationBank  # noqa: E402
from llm_planner_ros.planning.settings import PlannerSettings  # noqa: E402
from llm_planner_ros.planning.translated import TranslatedPlanner  # noqa: E402
from llm_planner_ros.skills import bank as banks  # noqa: E402
from llm_planner_ros.skills import resources  # noqa: E402
from llm_planner_ros.skills.vocabulary import SkillParser  # noqa: E402
from llm_planner_ros.translation.onnx_embedder import OnnxSentenceEmbedder  # noqa: E402
from llm_planner_ros.translation.translator import SkillIndex  # noqa: E402

METHODS = [("open loop (translated)", "translated", None), ("re-sampling", "resample", None),
           ("re-prompt: notion", "reprompt", "notion"), ("re-prompt: inference", "reprompt", "inference"),
           ("re-prompt: cause", "reprompt", "cause")]


def eai_programs(n: int) -> list[resources.HumanProgram]:
    """One EAI program per task (the first by id), for ``n`` tasks."""
    ids = json.loads((resources.package_root() / "resources" / "virtualhome" / "id2task.json").read_text())
    by_id = {p.program_id: p for p in resources.human_programs()}
    chosen: dict[str, resources.HumanProgram] = {}
    for eai_id in sorted(ids):
        program = by_id.get(f"file{eai_id}")
        if program is not None and program.task not in chosen:
            chosen[program.task] = program
    return list(chosen.values())[:n]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=20)
    parser.add_argument("--out", default="bench/results")
    parser.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE",
                        help="planner settings to override, e.g. epsilon=0.2 num_samples=10")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    embedder = OnnxSentenceEmbedder()
    llm = LlamaCppBackend(smollm2_path(), n_threads=1)
    demos = DemonstrationBank.from_scene(embedder)
    parser_ = SkillParser(resources.object_properties())
    defaults = PlannerSettings(**dict(kv.split("=", 1) for kv in args.set))
    programs = eai_programs(args.tasks)
    rows = {name: [] for name, _, _ in METHODS}
    started = time.perf_counter()
    for k, program in enumerate(programs, 1):
        graph = resources.scene_graphs(program.program_id)[0]
        index = SkillIndex(banks.scene_bank(graph), embedder)
        planner = TranslatedPlanner(llm, demos, lambda scene, kind, objects=None: index, parser_, defaults)
        for name, method, level in METHODS:
            options = {"correction_level": level} if level else {}
            request = parse_request(task=program.task, method=method, execute=True, options=options)
            t0 = time.perf_counter()
            executor = VirtualHomeExecutor(graph=graph, goal=resources.eai_goal(program.program_id))
            result = planner.plan(request, lambda e: None, CancelToken(), executor)
            rows[name].append({"task": program.task, "program_id": program.program_id,
                               "executable": result.executed, "goal_met": bool(executor.goal_met()),
                               "length": len(result.steps),
                               "corrections": result.num_corrections,
                               "termination": result.termination_reason.value,
                               "program": result.program, "seconds": time.perf_counter() - t0})
        print(f"[{k}/{len(programs)}] {program.task}", flush=True)

    summary = {}
    for name, results in rows.items():
        summary[name] = {"tasks": len(results),
                         "executability": sum(r["executable"] for r in results) / len(results),
                         "goal_success": sum(r["goal_met"] for r in results) / len(results),
                         "mean_corrections": statistics.mean(r["corrections"] for r in results),
                         "mean_length": statistics.mean(r["length"] for r in results),
                         "mean_seconds": statistics.mean(r["seconds"] for r in results)}
    print(f"\n{len(programs)} EAI tasks (TrimmedTestScene1), {llm.name}, defaults "
          f"k={defaults.num_samples} T={defaults.temperature} eps={defaults.epsilon}; "
          f"limits {defaults.max_corrections_per_step}/step, {defaults.max_corrections_per_plan}/plan; "
          f"{time.perf_counter() - started:.0f}s in all")
    print(f"{'method':24s} {'executability':>13s} {'goal met':>9s} {'corrections':>12s} {'length':>7s} "
          f"{'s/goal':>7s}")
    for name, v in summary.items():
        print(f"{name:24s} {v['executability']:13.0%} {v['goal_success']:9.0%} {v['mean_corrections']:12.2f} "
              f"{v['mean_length']:7.2f} {v['mean_seconds']:7.1f}")
    stem = "closed_loop" + "".join(f"_{kv}" for kv in args.set)
    (out / f"{stem}.json").write_text(json.dumps({"settings": defaults.model_dump(), "summary": summary,
                                                  "runs": rows}, indent=2))

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 3.5))
    ax.bar(list(summary), [v["executability"] * 100 for v in summary.values()], color="#2a7")
    ax.set_ylabel("executability (%)")
    ax.set_title(f"{len(programs)} EAI tasks, SmolLM2-135M, embedded defaults")
    ax.tick_params(axis="x", rotation=20)
    fig.tight_layout()
    fig.savefig(out / f"{stem}.png", dpi=110)
    print(f"wrote {out / (stem + '.json')} and {out / (stem + '.png')}")


if __name__ == "__main__":
    main()
