"""Does the PDDL domain agree with the simulator? Every executable human program, replayed in both.

    python bench/domain_agreement.py [--limit N] [--out bench/results]

Per step: the simulator executes it; the domain (through unified-planning) must allow it and
must predict no fact the simulator lacks. Writes domain_agreement.json and .md: counts per kind
and per verb, and every disagreement.
"""
from __future__ import annotations

import argparse
import collections
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm_planner_ros"))   # the package folder

from llm_planner_ros.evaluation.domain_agreement import replay  # noqa: E402
from llm_planner_ros.profiles.virtualhome import resources  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=0, help="first N programs (0 = all)")
    parser.add_argument("--out", default="bench/results")
    args = parser.parse_args()
    programs = resources.human_programs()
    programs = programs[:args.limit] if args.limit else programs
    t0 = time.perf_counter()
    reports = []
    for i, p in enumerate(programs, 1):
        reports.append(replay(p.program_id, p.script, resources.scene_graphs(p.program_id)[0]))
        if i % 25 == 0:
            print(f"{i}/{len(programs)} programs, {time.perf_counter() - t0:.0f}s", flush=True)
    steps = sum(r.steps for r in reports)
    checked = sum(r.checked for r in reports)
    kinds = collections.Counter(d.kind for r in reports for d in r.disagreements)
    verbs = collections.Counter((d.kind, d.line.split("]")[0] + "]") for r in reports for d in r.disagreements)
    clean = sum(1 for r in reports if not r.disagreements and not r.simulator_failed)
    summary = {"programs": len(reports), "programs_without_disagreement": clean, "steps": steps,
               "steps_checked": checked, "precondition_disagreements": kinds["precondition"],
               "effect_disagreements": kinds["effect"],
               "simulator_refused": [r.simulator_failed for r in reports if r.simulator_failed],
               "seconds": round(time.perf_counter() - t0, 1)}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "domain_agreement.json").write_text(json.dumps({
        "summary": summary, "by_verb": {f"{k}:{v}": n for (k, v), n in verbs.items()},
        "disagreements": [{"program": r.program_id, **d.__dict__} for r in reports for d in r.disagreements]},
        indent=1))
    lines = ["| programs | without disagreement | steps | steps checked | precondition | effect |",
             "|---|---|---|---|---|---|",
             f"| {len(reports)} | {clean} | {steps} | {checked} | {kinds['precondition']} | {kinds['effect']} |",
             "", "| kind | verb | count |", "|---|---|---|"]
    lines += [f"| {k} | {v} | {n} |" for (k, v), n in verbs.most_common()]
    (out / "domain_agreement.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
