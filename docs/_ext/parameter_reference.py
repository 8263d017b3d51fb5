"""Sphinx extension: the parameter reference, generated at build time from the pydantic models
that the nodes declare their ROS parameters from (one declaration per option: its type, default,
bounds, live or read-only, and description)."""
from __future__ import annotations

import typing
from pathlib import Path

from pydantic import BaseModel
from pydantic.fields import FieldInfo

OUT = "_generated/parameters.md"


def nodes() -> list[tuple[str, str, list[type[BaseModel]]]]:
    from llm_planner_ros.core.settings import ManagedNodeParams
    from llm_planner_ros.pet.session import PetSettings
    from llm_planner_ros.ros.console_node import ConsoleParams
    from llm_planner_ros.ros.executor_bridge import BridgeParams
    from llm_planner_ros.ros.recorder import RecorderParams
    from llm_planner_ros.safety.policy import SkillPolicy
    from llm_planner_ros.wiring import BackendSettings, PlannerNodeParams, service_models
    return [("planner", "config/planner.yaml, config/policy.yaml", [PlannerNodeParams, *service_models()]),
            ("executor_bridge", "config/executor_bridge.yaml, config/policy.yaml", [BridgeParams, SkillPolicy]),
            ("tracker", "", [ManagedNodeParams, PetSettings, BackendSettings]),
            ("console", "config/console.yaml", [ConsoleParams]),
            ("mcap_recorder", "", [RecorderParams])]


def _type(info: FieldInfo) -> str:
    ann = info.annotation
    if typing.get_origin(ann) is typing.Literal:
        return " / ".join(f"`{a}`" for a in typing.get_args(ann))
    return getattr(ann, "__name__", str(ann)).replace("|", "or")


def _bounds(info: FieldInfo) -> str:
    marks = {"ge": "≥", "gt": ">", "le": "≤", "lt": "<"}
    return ", ".join(f"{marks[k]} {getattr(m, k)}" for m in info.metadata for k in marks if hasattr(m, k))


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def render() -> str:
    lines = ["# Parameter reference", "",
             "Generated from the pydantic models the nodes declare their parameters from; the same "
             "models validate a value at start-up and on `ros2 param set`. *live*: may be changed "
             "while the node runs; every other parameter is read-only.", ""]
    for node, files, models in nodes():
        lines += [f"## `{node}`", ""]
        if files:
            lines += [f"Files: `{files}`.", ""]
        lines += ["| parameter | type | default | bounds | | description |", "|---|---|---|---|---|---|"]
        seen: set[str] = set()
        for model in models:
            live = set(getattr(model, "LIVE", ()))
            for name, info in model.model_fields.items():
                if name in seen:
                    continue
                seen.add(name)
                default = info.default if not callable(info.default_factory) else info.default_factory()
                lines.append(f"| `{name}` | {_cell(_type(info))} | `{_cell(repr(default))}` | {_cell(_bounds(info))} "
                             f"| {'live' if name in live else ''} | {_cell(info.description or '')} |")
        lines.append("")
    return "\n".join(lines)


def _write(app) -> None:   # noqa: ANN001 (sphinx.application.Sphinx)
    path = Path(app.srcdir) / OUT
    path.parent.mkdir(exist_ok=True)
    text = render()
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def setup(app) -> dict:   # noqa: ANN001
    app.connect("builder-inited", _write)
    return {"parallel_read_safe": True}
