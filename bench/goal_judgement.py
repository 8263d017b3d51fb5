"""Does the model's own judgement of (task, interpreted goal) tell right goals from wrong ones?

    python bench/goal_judgement.py bench/results/interpret.json [--model smollm2-135m]

Offline, from a ``bench/interpret.py`` run's records: for each row, each goal's interpreted
literals are put in words (a plain rendering of the predicate, not the world's sentences) and the
model is asked two ways, through the product's own backend:
- "yes": p(yes) against p(no) (``yes_probability``) after "Task: ... When the robot is done: ...
  Is the task done?";
- "channel": the mean token log-prob of the task text after "The robot made this true: <goal>.
  So it did the task:", less the same without the goal (how much the goal explains the task).
Each score's AUROC for "the asked goal was reached" sits beside the run's shipped confidence.
A goal with the same task text and interpreted goal as one already asked reuses its answer.
Writes nothing; a measurement of evidence, not a method.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm_planner_ros"))   # the package folder
os.environ.setdefault("OMP_NUM_THREADS", "1")

from llm_planner_ros.interpretation.confidence import auroc  # noqa: E402

SAID_OF_ME = {"next_to": "I am next to", "facing": "I am facing", "holds_rh": "I hold", "holds_lh": "I hold",
              "inside": "I am in", "sitting": "I am sitting on", "lying": "I am lying on"}


def in_words(literal: str) -> str:
    """``(holds_rh character cup)`` as "I hold the cup"; a plain rendering of any predicate."""
    name, *args = literal.strip("()").split()
    args = [a.replace("_", " ") for a in args]
    if args[:1] == ["character"]:
        return f"{SAID_OF_ME.get(name, 'I am ' + name.replace('_', ' '))} the {' '.join(args[1:])}"
    if name.startswith("did_"):
        return f"I did {name[4:]} the {' '.join(args)}"
    if len(args) == 2:
        return f"the {args[0]} is {dict(ontop='on', inside='in').get(name, name.replace('_', ' '))} the {args[1]}"
    return f"the {' '.join(args)} is {name.replace('_', ' ')}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("records", type=Path, help="a bench/interpret.py run's interpret.json")
    ap.add_argument("--model", default="smollm2-135m")
    args = ap.parse_args()
    from llm_planner_ros.llm.base import user_turn, yes_probability
    from llm_planner_ros.llm.models import MODELS
    from llm_planner_ros.wiring import ServiceConfig, compose

    llm = compose(ServiceConfig.from_flat({"llm_model": args.model, "llm_context": MODELS[args.model].context})) \
        .parts.interpreted().interpreter.llm
    asked: dict = {}

    def judged(task: str, literals: tuple[str, ...]) -> tuple[float, float]:
        if (task, literals) not in asked:
            goal = "; ".join(in_words(x) for x in literals) or "nothing"
            yes = yes_probability(llm, user_turn(llm, f"Task: {task}.\nWhen the robot is done: {goal}.\n"
                                                      "Is the task done? Answer yes or no."))
            given, alone = (llm.continuation_logprobs(prefix, [" " + task])[0] for prefix in
                            (f"The robot made this true: {goal}.\nSo it did the task:", "The robot did the task:"))
            asked[task, literals] = (yes, (sum(given) - sum(alone)) / max(len(given), 1))
        return asked[task, literals]

    rows: dict[str, list[dict]] = defaultdict(list)
    for record in json.loads(args.records.read_text())["records"]:
        rows[record["row"]].append(record)
    print("| row | goals | asked goal reached | shipped confidence | yes | channel |")
    print("|---|---|---|---|---|---|")
    for row, records in rows.items():
        if not any("confidence" in r for r in records):   # a row nothing asks for (the oracle goal)
            continue
        labels = [bool(r["goal_met"]) for r in records]
        scores = [judged(r["task"], tuple(r["interpreted"])) for r in records]
        known = [(r["confidence"], label) for r, label in zip(records, labels) if r.get("confidence") is not None]
        shipped = auroc([c for c, _ in known], [label for _, label in known])   # as the run's: the known ones
        print(f"| {row} | {len(records)} | {sum(labels)} | {shipped:.3f} "
              f"| {auroc([s[0] for s in scores], labels):.3f} | {auroc([s[1] for s in scores], labels):.3f} |")


if __name__ == "__main__":
    main()
