"""Benchmark on the Embodied Agent Interface's VirtualHome action-sequencing set.

    python bench/eai.py                          # every method, both settings, all 342 programs
    python bench/eai.py --per-task 2 --limit 20  # a quick run
    python bench/eai.py --tasks "Wash hands" "Drink" --methods translated "reprompt cause"
    python bench/eai.py --backend openai --openai-base-url http://localhost:8080/v1 --openai-model m

Rows: each method (see --list) in setting ``text`` (the task text only: the product's case),
``task`` (task text and the annotator's description) and ``eai`` (EAI's prompt: objects, initial
state and goals given), plus EAI's 15 shipped model answers as anchors.
Columns: this project's scoring (every program, repeated verbs kept, no hash-seed dependence)
and EAI's own scorer (PYTHONHASHSEED=0, with its known defects), the papers' metrics, the
wrong-goal rate (the planner's result said success, as its action status would, and EAI's goal
does not hold) and the per-goal time split. Speed of every stage is measured in the same run
(--no-speed to skip).
Writes eai.json, eai.md and eai.png under --out; per-goal records go to a resumable cache.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from tqdm import tqdm  # noqa: E402

from llm_planner_ros.core.settings import PlannerSettings  # noqa: E402
from llm_planner_ros.evaluation import eai  # noqa: E402
from llm_planner_ros.evaluation.benchmark import (  # noqa: E402
    EAI_JSON,
    EAI_PDDL,
    METHODS,
    SETTING_NAMES,
    BenchmarkRunner,
    RunCache,
    anchor_records,
    eai_summary,
    summarise,
)
from llm_planner_ros.planning.heuristic import HeuristicSettings  # noqa: E402
from llm_planner_ros.planning.translated import TranslatedPlanner  # noqa: E402
from llm_planner_ros.profiles.virtualhome import bank as banks  # noqa: E402
from llm_planner_ros.profiles.virtualhome.tasks import EaiTask, eai_tasks  # noqa: E402
from llm_planner_ros.translation.translator import SkillIndex  # noqa: E402
from llm_planner_ros.wiring import BackendSettings, ServiceConfig, compose  # noqa: E402


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--methods", nargs="*", default=[m for m in METHODS if not m.startswith("heuristic")],
                   help="rows to run (default: all but the slow heuristic rows; see --list)")
    p.add_argument("--settings", nargs="*", default=["text", "task", "eai"], choices=["text", "task", "eai"],
                   help="what the planner is given: text (the task text only: the product's case), task (text + "
                        "the annotator's description), eai (EAI's prompt: objects, initial state, goal)")
    p.add_argument("--tasks", nargs="*", default=[], help="EAI task names (default: all 26)")
    p.add_argument("--per-task", type=int, default=None, help="programs per task (default: all)")
    p.add_argument("--limit", type=int, default=None, help="at most N programs")
    p.add_argument("--eai-json-limit", type=int, default=None,
                   help="at most N programs for the eai-json row (its 2.6k-token prompt is slow on a CPU)")
    p.add_argument("--anchors", nargs="*", default=list(eai.SHIPPED_MODELS), help="shipped models to score")
    p.add_argument("--no-eai-scorer", action="store_true", help="skip EAI's own scorer")
    p.add_argument("--no-speed", action="store_true", help="skip the speed measurements")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1, help="LLM threads")
    p.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE", help="planner settings, e.g. epsilon=0.2")
    p.add_argument("--backend", choices=["embedded", "openai"], default="embedded")
    p.add_argument("--openai-base-url", default="")
    p.add_argument("--openai-model", default="")
    p.add_argument("--openai-api", choices=["completions", "chat"], default="completions")
    p.add_argument("--out", default="bench/results")
    p.add_argument("--cache", default=None, help="per-goal record cache (default: <out>/cache)")
    p.add_argument("--heuristic-max-length", type=int, default=20, help="step limit of the heuristic rows (paper: 20)")
    p.add_argument("--progprompt", action="store_true",
                   help="run the ProgPrompt household tasks of Borro et al. that TrimmedTestScene1 allows "
                        "(setting 'task', own goal conditions, no anchors) instead of EAI's set")
    p.add_argument("--list", action="store_true", help="list the methods and tasks, then exit")
    return p.parse_args(argv)


def pct(x) -> str:
    return "-" if x is None or x != x else f"{100 * x:.1f}"


def markdown(report: dict) -> str:
    head = ("| row | setting | n | success | reported done, goal not met | executable | EAI success | EAI executable "
            "| EAI n | state / relation / action goals | LCS | length | corrections "
            "| s/goal (LLM / translation / planner / execution) |\n"
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
    lines = []
    for row in report["rows"]:
        ours, theirs = row["ours"], row.get("eai") or {}
        goals = " / ".join(pct(theirs.get(k)) for k in ("state_goal", "relation_goal", "action_goal")) \
            if theirs else "-"
        timing = (f"{ours['wall_s']:.2f} ({ours['llm_s']:.2f} / {ours['translation_s']:.3f} / "
                  f"{ours.get('planner_s', 0.0):.3f} / {ours['execution_s']:.3f}); median "
                  f"{ours.get('median_wall_s', float('nan')):.2f}") if row["kind"] == "method" else "-"
        lines.append(f"| {row['name']} | {SETTING_NAMES[row['setting']]} | {ours['programs']} "
                     f"| {pct(ours['success'])} | {pct(ours.get('done_not_met'))} | "
                     f"{pct(ours['executability'])} | {pct(theirs.get('success'))} | "
                     f"{pct(theirs.get('executability'))} | {theirs.get('programs_counted', '-')} | {goals} | "
                     f"{ours['lcs']:.3f} | {ours['length']:.1f} | {ours['corrections']:.2f} | {timing} |")
    pet_rows = [r for r in report["rows"] if r["kind"] == "method" and "bank_reduction" in r["ours"]
                or "tracker_precision" in r["ours"]]
    if pet_rows:
        lines.append("\n| PET row | setting | subtasks / goal | tracker precision | tracker recall | "
                     "finished / goals met | bank removed | recall of the human program's objects |")
        lines.append("|---|---|---|---|---|---|---|---|")
        for row in pet_rows:
            o = row["ours"]
            lines.append(f"| {row['name']} | {SETTING_NAMES[row['setting']]} | {o.get('subtasks', float('nan')):.1f} | "
                         f"{pct(o.get('tracker_precision'))} | {pct(o.get('tracker_recall'))} | "
                         f"{o.get('tracker_finished', '-')} / {o.get('goals_met', '-')} | "
                         f"{pct(o.get('bank_reduction'))} | {pct(o.get('eliminate_recall'))} |")
    return head + "\n".join(lines) + "\n"


def plot(report: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 5.5))
    for row in report["rows"]:
        o = row["ours"]
        style = {"method": ("o", {"text": "#e73", "task": "#2a7"}.get(row["setting"], "#27a")), "anchor": ("s", "#aaa")}
        marker, color = style[row["kind"]]
        ax.scatter(100 * o["executability"], 100 * o["success"], marker=marker, color=color)
        label = row["name"] if row["kind"] == "method" else row["name"].split("-2")[0]
        ax.annotate(f"{label} ({SETTING_NAMES[row['setting']]})" if row["kind"] == "method" else label,
                    (100 * o["executability"], 100 * o["success"]), fontsize=6, xytext=(3, 2),
                    textcoords="offset points")
    ax.set_xlabel("executability (%)")
    ax.set_ylabel("success: EAI goals met (%)")
    ax.set_title("EAI VirtualHome: success vs executability (grey: shipped answers of 15 LLMs)")
    ax.set_xlim(-2, 102)
    ax.set_ylim(-2, 102)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def speed(embedder, llm) -> dict:
    import numpy as np
    import speed as speed_bench

    large = banks.large_bank()
    texts = [large.texts[i] for i in np.random.default_rng(1).choice(len(large), 1000, replace=False)]
    emb, agreement = speed_bench.bench_embedding(texts, speed_bench.queries(200), large)
    out = {"embedding": emb, "top1_agreement_vs_pytorch": agreement,
           "translation": speed_bench.bench_translation(large, embedder, 5, 20)}
    if hasattr(llm, "llm"):   # the embedded model
        out["llm"] = speed_bench.bench_llm(llm, 3)
    return out


def print_speed(s: dict) -> None:
    base = s["embedding"]["sentence-transformers (PyTorch)"]["texts_per_s"]
    print("\nEmbedding throughput (1 thread)")
    for name, v in s["embedding"].items():
        print(f"  {name:34s} {v['texts_per_s']:7.0f} texts/s  {v['texts_per_s'] / base:5.2f}x  "
              f"1 query {v['single_query_ms']:5.1f} ms  top-1 agreement {s['top1_agreement_vs_pytorch'][name]:.0%}")
    print("Translation per step (k=5, ONNX fp32)")
    for v in s["translation"].values():
        print(f"  {v['skills']:6d} skills: {v['per_step_ms']:6.2f} ms (embed {v['embed_ms']:.2f}, search "
              f"{v['search_ms']:.2f}; brute force fp32 search {v['brute_force_fp32_search_ms']:.2f})")
    if "llm" in s:
        print(f"LLM: {s['llm']['tokens_per_s']:.1f} tokens/s (1 thread)")


def main(argv=None) -> dict:
    args = parse_args(argv)
    unknown = [m for m in args.methods if m not in METHODS]
    if unknown:
        raise SystemExit(f"unknown method(s) {unknown}; choose from {list(METHODS)}")
    unknown = [m for m in args.anchors if m not in eai.SHIPPED_MODELS]
    if unknown:
        raise SystemExit(f"unknown anchor(s) {unknown}; choose from {list(eai.SHIPPED_MODELS)}")
    if args.list:
        print("methods:", *METHODS, sep="\n  ")
        print("tasks:", *sorted({t.task for t in eai_tasks()}), sep="\n  ")
        return {}
    try:
        if args.progprompt:
            from llm_planner_ros.evaluation.progprompt import NOT_RUNNABLE, PROGPROMPT_TASKS

            tasks = eai.select_tasks(PROGPROMPT_TASKS, args.tasks, args.per_task, args.limit)
            args.settings, args.anchors, args.no_eai_scorer = ["task"], [], True
            for name, why in NOT_RUNNABLE.items():
                print(f"not run: {name}: {why}")
        else:
            tasks = eai.select_tasks(eai_tasks(), args.tasks, args.per_task, args.limit)
    except ValueError as exc:
        raise SystemExit(str(exc)) from None
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    cache_dir = Path(args.cache) if args.cache else out / "cache"

    started = time.perf_counter()
    backend = BackendSettings(llm_backend=args.backend, openai_base_url=args.openai_base_url,
                              openai_model=args.openai_model, openai_api=args.openai_api, llm_threads=args.threads,
                              llm_context=5120)
    settings = PlannerSettings(**{**dict(kv.split("=", 1) for kv in args.set), "seed": args.seed})
    heuristic = HeuristicSettings(heuristic_max_length=args.heuristic_max_length,   # as Borro et al.:
                                  heuristic_max_revisits=0, heuristic_answer="free")   # no cycle check, free replies
    service = compose(ServiceConfig.of(backend, settings, heuristic))   # the planner node's own root
    parts = service.parts
    llm, pet = parts.llm, parts.pet
    indexes: dict[str, SkillIndex] = {}

    def planner_for(task: EaiTask) -> TranslatedPlanner:
        """Algorithm 1 over the task's own graph (EAI starts each program from its graph)."""
        bank = banks.scene_bank(task.graph)
        index = indexes.setdefault(bank.digest, SkillIndex(bank, parts.embedder))
        return TranslatedPlanner(llm, parts.demos, lambda scene, kind, objects=None: index, parts.world, settings,
                                 pet)

    config = {"llm": llm.name, "planner": settings.model_dump(mode="json"), "seed": args.seed}
    cache = RunCache(cache_dir / "records.jsonl")
    runner = BenchmarkRunner(llm, planner_for, cache, config, pet_config=pet.settings.model_dump(mode="json"),
                             heuristic=parts.heuristic, service=service)

    jobs = [(METHODS[m], s, t) for s in args.settings for m in args.methods if s in METHODS[m].settings
            for t in (tasks[:args.eai_json_limit] if METHODS[m].method == "eai_json" and args.eai_json_limit
                      else tasks)]
    records: dict[tuple[str, str], list] = {}
    fresh = 0
    with tqdm(jobs, desc="goals", unit="goal", file=sys.stderr, dynamic_ncols=True) as bar:
        for spec, setting, task in bar:
            bar.set_postfix_str(f"{spec.name} / {setting} / {task.task}"[:60])
            record, hit = runner.run(spec, setting, task)
            fresh += not hit
            records.setdefault((spec.name, setting), []).append(record)
    plan_seconds = time.perf_counter() - started

    rows = []
    for (name, setting), rs in records.items():
        rows.append({"kind": "method", "name": name, "setting": setting, "ours": summarise(rs), "eai": None,
                     "records": [r.model_dump() for r in rs]})
    for model in args.anchors:
        rows.append({"kind": "anchor", "name": model, "setting": "eai",
                     "ours": summarise(anchor_records(model, tasks)), "eai": None})
    if not args.no_eai_scorer:
        ids = {t.identifier for t in tasks}
        responses = {}
        for i, row in enumerate(rows):
            if row["kind"] == "method":
                # a plan's own steps, untranslated ones included (EAI counts them as hallucinations);
                # the eai-json row's answer as the LLM wrote it
                as_written = METHODS[row["name"]].method in (EAI_JSON, EAI_PDDL)
                responses[str(i)] = [{"identifier": r["identifier"], "llm_output": r["llm_output"] if as_written
                                      else eai.eai_output(r["program"])} for r in row["records"]]
            else:
                responses[str(i)] = [r for r in eai.shipped_responses(row["name"]) if r["identifier"] in ids]
        for key, recs in tqdm(responses.items(), desc="EAI scorer", unit="row", file=sys.stderr):
            try:
                rows[int(key)]["eai"] = eai_summary(eai.score_cached({key: recs}, cache_dir)[key])
            except RuntimeError as exc:   # e.g. a subset without one goal kind (EAI divides by zero)
                rows[int(key)]["eai_error"] = str(exc)

    report = {"machine": {"cpu_count": os.cpu_count(), "platform": platform.platform(),
                          "python": platform.python_version()},
              "command": "python bench/eai.py " + " ".join(argv if argv is not None else sys.argv[1:]),
              "llm": llm.name, "settings": settings.model_dump(mode="json"), "programs": len(tasks),
              "tasks": sorted({t.task for t in tasks}), "goals_run": fresh, "goals_cached": len(jobs) - fresh,
              "planning_seconds": plan_seconds, "rows": rows}
    if not args.no_speed:
        report["speed"] = speed(parts.embedder, llm)
    report["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    report["total_seconds"] = time.perf_counter() - started

    table = markdown(report)
    print(f"\n{len(tasks)} EAI programs over {len(report['tasks'])} tasks, {llm.name}; "
          f"{fresh} goals planned, {len(jobs) - fresh} from the cache; {plan_seconds:.0f}s planning, "
          f"{report['total_seconds']:.0f}s in all; peak RSS {report['peak_rss_mb']:.0f} MB\n")
    print(table)
    if "speed" in report:
        print_speed(report["speed"])
    (out / "eai.json").write_text(json.dumps(report, indent=1, default=str))
    (out / "eai.md").write_text(f"`{report['command']}` on {report['machine']['cpu_count']} CPUs "
                                f"({report['machine']['platform']}), {llm.name}; {fresh} goals planned in this run, "
                                f"{len(jobs) - fresh} from the cache ({cache_dir})\n\n{table}")
    plot(report, out / "eai.png")
    print(f"\nwrote {out / 'eai.json'}, {out / 'eai.md'} and {out / 'eai.png'}")
    return report


if __name__ == "__main__":
    main()
