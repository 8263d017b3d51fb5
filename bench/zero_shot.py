"""A profile's world interpreted zero-shot: its example goals removed, each example task given
as the task text alone, executed on the profile's reference world.

    python bench/zero_shot.py [--profile mobile_manipulator] [--model NAME ...] [--set KEY=VALUE ...]
        [--out bench/results]

Rows: method interpret (the model adds scored candidates to what it said), the same with the
free-text route only (``interpret_choose: false``, before issue 36), and the embeddings only.
Per task: whether the interpreted goal, at class level, equals the example's goal (nothing
missing, nothing extra), whether the example's goal holds at the end, and whether the planner
reported done while it does not (another goal reached: the wrong goal). Nothing here is tuned:
the examples are the profile's own, and none is shown to the planner. Writes zero_shot.json and
zero_shot.md.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm_planner_ros"))   # the package folder
os.environ.setdefault("OMP_NUM_THREADS", "1")

ROWS = {"interpret": {}, "interpret, free text (before issue 36)": {"interpret_choose": False},
        "interpret, embeddings only": {"interpret_from": "text"}}


def without_examples(profile: str, folder: Path) -> Path:
    """A copy of the shipped ``profile`` with its example goals cut off."""
    from llm_planner_ros.profiles.loader import shipped

    shutil.copytree(shipped(profile).parent, folder / profile)
    path = folder / profile / "profile.yaml"
    text = path.read_text()
    path.write_text(text[:text.index("examples:")] if "examples:" in text else text)
    return path


def class_lines(lines, classes) -> set[str]:
    """Goal lines with each instance said as its class: "(in mug_14 fridge_7)" -> "(in mug fridge)"."""
    out = set()
    for line in lines:
        negated = line.startswith("(not ")
        atom = line[5:-1] if negated else line
        words = atom.strip("()").split()
        atom = "(" + " ".join([words[0]] + [classes.get(w, w) for w in words[1:]]) + ")"
        out.add(f"(not {atom})" if negated else atom)
    return out


def run(profile: str, settings: dict, row: str) -> list[dict]:
    from llm_planner_ros.core.errors import CancelToken
    from llm_planner_ros.core.request import parse_request
    from llm_planner_ros.executors.pddl_world import PddlWorldExecutor
    from llm_planner_ros.pddl.goals import ground_goal, parse_goal
    from llm_planner_ros.profiles.loader import load_profile, shipped
    from llm_planner_ros.wiring import ServiceConfig, compose

    full = load_profile(shipped(profile))
    examples, vocabulary = full.spec.examples, full.goal_vocabulary()
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        executor = PddlWorldExecutor(load_profile(without_examples(profile, Path(tmp))))
        # every goal runs (without examples nothing calibrates the confidence: each would be asked)
        service = compose(ServiceConfig.from_flat({"interpret_confirm": "never", **settings, **ROWS[row]}),
                                executor_factory=lambda scene, task: executor, robot_world=lambda executes: executor)
        for example in examples:
            executor.reset()
            t0 = time.perf_counter()
            request = parse_request(task=example.task, method="interpret", execute=True)
            result, report = service.plan_with_report(request, lambda e: None, CancelToken(), executor)
            world = executor.world_state()
            wanted = set(example.goal)
            said = class_lines(report.stats.get("interpreted", result.goal_conditions), world.classes)
            held = ground_goal(parse_goal(list(example.goal), [], vocabulary), world, vocabulary).holds(world)
            out.append(dict(row=row, task=example.task, wanted=sorted(wanted), interpreted=sorted(said),
                            exact=said == wanted, missing=sorted(wanted - said), extra=sorted(said - wanted),
                            held=held, reported_success=result.success,   # done, said the planner
                            termination=result.termination_reason.value, detail=result.detail[:300],
                            wall_s=time.perf_counter() - t0))
    return out


def main() -> None:
    from llm_planner_ros.llm.models import DEFAULT_MODEL, MODELS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="mobile_manipulator")
    parser.add_argument("--model", nargs="*", default=[DEFAULT_MODEL], choices=list(MODELS))
    parser.add_argument("--rows", nargs="*", default=list(ROWS), choices=list(ROWS))
    parser.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE")
    parser.add_argument("--out", type=Path, default=Path("bench/results"))
    args = parser.parse_args()
    given = dict(kv.split("=", 1) for kv in args.set)
    records, summary = [], {}
    for model in args.model:
        for row in args.rows:
            if row.endswith("embeddings only") and model != args.model[0]:
                continue
            name = row if model == DEFAULT_MODEL else f"{row} [{model}]"
            settings = {"llm_model": model, "llm_context": MODELS[model].context, **given}
            rs = run(args.profile, settings, row)
            for r in rs:
                r["row"] = name
            records += rs
            summary[name] = {"tasks": len(rs), "exact": sum(r["exact"] for r in rs), "held": sum(r["held"] for r in rs),
                             # another goal reached: reported done, the example's goal not holding
                             "wrong_goal": sum(r["reported_success"] and not r["held"] for r in rs),
                             "median_s": statistics.median(r["wall_s"] for r in rs)}
            print(name, summary[name], flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "zero_shot.json").write_text(json.dumps({"profile": args.profile, "summary": summary,
                                                          "records": records}, indent=1))
    lines = [f"# Zero-shot: {args.profile} with its example goals removed", "",
             "| row | tasks | interpreted goal = example goal | example goal holds at the end | "
             "wrong goal (reported done, the example goal not holding) | median s/goal |",
             "|---|---|---|---|---|---|"]
    lines += [f"| {row} | {s['tasks']} | {s['exact']} | {s['held']} | {s['wrong_goal']} | {s['median_s']:.2f} |"
              for row, s in summary.items()]
    lines += ["", "| row | task | exact | holds | interpreted | missing | extra |", "|---|---|---|---|---|---|---|"]
    lines += [f"| {r['row']} | {r['task']} | {'yes' if r['exact'] else 'no'} | {'yes' if r['held'] else 'no'} | "
              f"{' '.join(r['interpreted'])} | {' '.join(r['missing'])} | {' '.join(r['extra'])} |" for r in records]
    (args.out / "zero_shot.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines[:4 + len(summary)]))


if __name__ == "__main__":
    main()
