"""Declare a node's ROS parameters from a pydantic model and validate them once."""
from __future__ import annotations

from typing import TypeVar

from pydantic import BaseModel, ValidationError
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.node import Node

from llm_planner_ros.core.request import describe_validation_error

ModelT = TypeVar("ModelT", bound=BaseModel)


class ParameterError(ValueError):
    """An invalid parameter value; the message names the parameter."""


def declare_and_validate(node: Node, model: type[ModelT]) -> ModelT:
    """Declare every field of ``model`` as a parameter (default = field default), then validate.

    Values come from ``--params-file`` / launch ``parameters=[...]`` overrides.
    """
    for name, info in model.model_fields.items():
        default = list(info.default) if isinstance(info.default, tuple) else info.default
        node.declare_parameter(name, default, ParameterDescriptor(description=info.description or ""))
    values = {name: node.get_parameter(name).value for name in model.model_fields}
    try:
        return model(**values)
    except ValidationError as exc:
        raise ParameterError(f"invalid parameter on node '{node.get_name()}': "
                             f"{describe_validation_error(exc)}") from None


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
