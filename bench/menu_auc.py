"""How well a model's score ranks EAI's annotated goal conditions among the menu's candidates.

    python bench/menu_auc.py [--model NAME ...] [--per-task 1] [--out bench/results]

For each program (EAI's, task text only, its own task's demonstrations held out), the candidates
are the conditions the free-text route kept, the 12 nearest the task text and those of the shown
examples' goals; a candidate is "right" when one of its literals is in the annotated goal (class
level). For each model: the AUC (the chance that a right candidate outranks a wrong one, per
program, averaged) of the cosine to the task text, of the model's mean token log-prob of the
candidate as the end state, and of cos + beta * log-prob for several beta. A model that ranks
better helps the choice more (method interpret, interpret_choose). Writes menu_auc.json.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm_planner_ros"))   # the package folder
os.environ.setdefault("OMP_NUM_THREADS", "1")

BETAS = (0.0, 0.05, 0.1, 0.2, 0.3, 0.5, 1.0)


def auc(right: list[float], wrong: list[float]) -> float:
    if not right or not wrong:
        return float("nan")
    return float(np.mean([(r > w) + 0.5 * (r == w) for r in right for w in wrong]))


def candidates_of(model: str, per_task: int) -> list[dict]:
    from llm_planner_ros.evaluation.eai import select_tasks
    from llm_planner_ros.interpretation.menu import candidates
    from llm_planner_ros.llm.models import MODELS
    from llm_planner_ros.profiles.virtualhome.examples import eai_program_goals
    from llm_planner_ros.profiles.virtualhome.simulator import VirtualHomeExecutor
    from llm_planner_ros.profiles.virtualhome.tasks import eai_tasks
    from llm_planner_ros.wiring import ServiceConfig, compose

    service = compose(ServiceConfig.from_flat({"llm_model": model, "llm_context": MODELS[model].context,
                                                     "interpret_choose": False}))
    interpreter = service.parts.interpreted().interpreter
    tasks, goals = list(eai_tasks()), eai_program_goals()
    position = {t.identifier: i for i, t in enumerate(tasks)}
    out = []
    for task in select_tasks(tasks, per_task=per_task):
        world = VirtualHomeExecutor(graph=task.graph, goal=task.goal).world_state()
        truth = set(goals[position[task.identifier]].literals)
        found = interpreter.interpret(task.task, world, [task.task])
        index = interpreter.index(world)
        examples = interpreter.examples(task.task, [task.task])
        menu = {c.text: c for c in candidates(found.conditions, index, task.task, 12,
                                               [d.sentences for d in examples], [])}
        texts = list(menu)
        prompt = interpreter.prompt(task.task, examples)
        scored = interpreter.llm.continuation_logprobs(prompt, [" " + t for t in texts])
        cosines = index.similarity(task.task, [menu[t] for t in texts])
        out.append({"task": task.task, "identifier": task.identifier, "rows": [
            {"text": t, "right": any(lit in truth for lit in menu[t].literals), "cos": cos,
             "logprob": float(np.mean(lp)) if lp else 0.0}
            for t, cos, lp in zip(texts, cosines, scored)]})
    return out


def main() -> None:
    from llm_planner_ros.llm.models import DEFAULT_MODEL, MODELS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", nargs="+", default=[DEFAULT_MODEL], choices=list(MODELS))
    parser.add_argument("--per-task", type=int, default=1)
    parser.add_argument("--out", type=Path, default=Path("bench/results"))
    args = parser.parse_args()
    results = {}
    for model in args.model:
        t0 = time.perf_counter()
        programs = candidates_of(model, args.per_task)

        def mean_auc(key) -> float:
            return float(np.nanmean([auc([key(r) for r in p["rows"] if r["right"]],
                                         [key(r) for r in p["rows"] if not r["right"]]) for p in programs]))
        results[model] = {"programs": len(programs), "seconds": time.perf_counter() - t0,
                          "candidates": sum(len(p["rows"]) for p in programs),
                          "right": sum(r["right"] for p in programs for r in p["rows"]),
                          "auc_cosine": mean_auc(lambda r: r["cos"]),
                          "auc_logprob": mean_auc(lambda r: r["logprob"]),
                          "auc_score": {b: mean_auc(lambda r, b=b: r["cos"] + b * r["logprob"]) for b in BETAS},
                          "programs_detail": programs}
        r = results[model]
        print(f"{model}: {r['programs']} programs, {r['candidates']} candidates ({r['right']} right); AUC cosine "
              f"{r['auc_cosine']:.3f}, log-prob {r['auc_logprob']:.3f}, score "
              + ", ".join(f"beta {b}: {v:.3f}" for b, v in r["auc_score"].items()), flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "menu_auc.json").write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
