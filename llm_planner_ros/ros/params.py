"""Declare a node's ROS parameters from a pydantic model and validate them once.

A parameter is either live or read-only, never accepted and ignored: a model's ``LIVE`` fields
(a ``ClassVar``) may be changed with ``ros2 param set``; the change is validated by the same
model and refused with the reason when invalid. Every other field is declared read-only, so ROS
refuses a change to it.
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

from pydantic import BaseModel, ValidationError
from rcl_interfaces.msg import ParameterDescriptor, SetParametersResult
from rclpy.node import Node
from rclpy.parameter import Parameter

from llm_planner_ros.core.request import describe_validation_error

ModelT = TypeVar("ModelT", bound=BaseModel)


class ParameterError(ValueError):
    """An invalid parameter value; the message names the parameter."""


def live_fields(model: type[BaseModel]) -> frozenset[str]:
    return frozenset(getattr(model, "LIVE", ()))


def declare_and_validate(node: Node, model: type[ModelT]) -> ModelT:
    """Declare every field of ``model`` as a parameter (default = field default), then validate.

    Values come from ``--params-file`` / launch ``parameters=[...]`` overrides. Fields outside
    ``model.LIVE`` are read-only."""
    live = live_fields(model)
    for name, info in model.model_fields.items():
        default = list(info.default) if isinstance(info.default, tuple) else info.default
        what = info.description or ""
        node.declare_parameter(name, default, ParameterDescriptor(
            description=what + ("" if name in live else " (read-only: restart the node to change it)"),
            read_only=name not in live))
    values = {name: node.get_parameter(name).value for name in model.model_fields}
    try:
        return model(**values)
    except ValidationError as exc:
        raise ParameterError(f"invalid parameter on node '{node.get_name()}': "
                             f"{describe_validation_error(exc)}") from None


class LiveParameters:
    """Applies changes of live parameters: each model whose fields changed is rebuilt from the
    current values and the new ones, validated, and handed to its ``apply``; an invalid change
    is refused with the reason and nothing is applied."""

    def __init__(self, node: Node) -> None:
        self.node = node
        self._models: list[tuple[type[BaseModel], Callable[[BaseModel], None]]] = []
        self._lock = threading.Lock()
        node.add_on_set_parameters_callback(self._on_set)

    def add(self, model: type[ModelT], apply: Callable[[ModelT], None]) -> None:
        self._models.append((model, apply))   # type: ignore[arg-type]

    def _on_set(self, changes: list[Parameter]) -> SetParametersResult:
        new = {p.name: p.value for p in changes}
        updates = []
        with self._lock:
            for model, apply in self._models:
                if not new.keys() & model.model_fields.keys():
                    continue
                values = {name: new[name] if name in new else self.node.get_parameter(name).value
                          for name in model.model_fields}
                try:
                    updates.append((apply, model(**values)))
                except ValidationError as exc:
                    return SetParametersResult(successful=False, reason=describe_validation_error(exc))
            for apply, value in updates:
                apply(value)
        if updates:
            self.node.get_logger().info(f"parameters changed: {', '.join(sorted(new))}")
        return SetParametersResult(successful=True)


def refuse_unknown_parameters(node: Node) -> None:
    """Raise :class:`ParameterError` for a parameter given to ``node`` (params file, launch,
    command line) that it never declared, e.g. a misspelt key; call after every declaration."""
    import difflib

    declared = list(node._parameters)
    unknown = sorted(name for name in node._parameter_overrides
                     if not node.has_parameter(name) and not name.startswith("qos_overrides."))
    if unknown:
        hints = [f"{u!r}" + (f" (did you mean {m[0]!r}?)" if (m := difflib.get_close_matches(u, declared, 1)) else "")
                 for u in unknown]
        raise ParameterError(f"unknown parameter(s) on node '{node.get_name()}': {', '.join(hints)}")
