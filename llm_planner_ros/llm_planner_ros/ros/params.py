"""Declare a node's ROS parameters from a pydantic model and validate them once.

A parameter is either live or read-only, never accepted and ignored: a model's ``LIVE`` fields
(a ``ClassVar``) may be changed with ``ros2 param set``; the change is validated by the same
model and refused with the reason when invalid. Every other field is declared read-only, so ROS
refuses a change to it.
"""
from __future__ import annotations

import re
import sys
import threading
from collections.abc import Callable, Sequence
from typing import TypeVar

from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo
from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor, SetParametersResult
from rclpy.exceptions import InvalidParameterTypeException, InvalidParameterValueException
from rclpy.node import Node
from rclpy.parameter import Parameter

from llm_planner_ros.core.request import describe_validation_error

ModelT = TypeVar("ModelT", bound=BaseModel)


class ParameterError(ValueError):
    """An invalid parameter value; the message names the parameter."""


def live_fields(model: type[BaseModel]) -> frozenset[str]:
    return frozenset(getattr(model, "LIVE", ()))


def ranges(info: FieldInfo) -> dict:
    """The ParameterDescriptor range of a bounded int or float field (``ros2 param describe``
    shows it, and ROS refuses a value outside it), from the field's own bounds."""
    low = high = None
    for bound in info.metadata:
        low = getattr(bound, "ge", getattr(bound, "gt", low))
        high = getattr(bound, "le", getattr(bound, "lt", high))
    if low is None and high is None or info.annotation not in (int, float):
        return {}
    if info.annotation is int:
        lo, hi = -2**63, 2**63 - 1
        return {"integer_range": [IntegerRange(from_value=int(lo if low is None else low),
                                               to_value=int(hi if high is None else high), step=0)]}
    big = sys.float_info.max
    return {"floating_point_range": [FloatingPointRange(from_value=float(-big if low is None else low),
                                                        to_value=float(big if high is None else high), step=0.0)]}


def declare_and_validate(node: Node, model: type[ModelT]) -> ModelT:
    """Declare every field of ``model`` as a parameter (default = field default), then validate.

    Values come from ``--params-file`` / launch ``parameters=[...]`` overrides. Fields outside
    ``model.LIVE`` are read-only."""
    live = live_fields(model)
    for name, info in model.model_fields.items():
        default = list(info.default) if isinstance(info.default, tuple) else info.default
        what = info.description or ""
        descriptor = ParameterDescriptor(
            description=what + ("" if name in live else " (read-only: restart the node to change it)"),
            read_only=name not in live, **ranges(info))
        if node.has_parameter(name):   # declared by an earlier configure (a managed node's)
            continue
        try:
            node.declare_parameter(name, default, descriptor)
        except InvalidParameterValueException as exc:   # an override outside the declared range
            raise ParameterError(f"invalid parameter on node '{node.get_name()}': {name}: {exc}") from None
        except InvalidParameterTypeException as exc:   # e.g. 5.0 for an integer, or 1 for a float
            hint = " (write a float with a decimal point, e.g. 1.0)" if info.annotation is float else ""
            raise ParameterError(f"invalid parameter on node '{node.get_name()}': {name}: {exc}{hint}") from None
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


_command_line: list[str] = []   # the process's ROS arguments, as spin_node started it


def use_command_line(argv: Sequence[str]) -> None:
    """Remember the process's command line, whose ``--params-file`` arguments
    :func:`refuse_unknown_parameters` checks."""
    _command_line[:] = argv


def refuse_unknown_parameters(node: Node) -> None:
    """Raise :class:`ParameterError` for a parameter given to ``node`` (params file, launch,
    command line) that it never declared, e.g. a misspelt key, or for a parameter file that sets
    nothing for it; call after every declaration."""
    import difflib

    check_params_files(node, _command_line)
    declared = list(node._parameters)
    unknown = sorted(name for name in node._parameter_overrides
                     if not node.has_parameter(name) and not name.startswith("qos_overrides."))
    if unknown:
        hints = [f"{u!r}" + (f" (did you mean {m[0]!r}?)" if (m := difflib.get_close_matches(u, declared, 1)) else "")
                 for u in unknown]
        raise ParameterError(f"unknown parameter(s) on node '{node.get_name()}': {', '.join(hints)}")


def params_files(argv: Sequence[str]) -> list[str]:
    """The ``--params-file`` arguments among ROS command-line arguments (``--ros-args`` blocks)."""
    files, in_ros = [], False
    for i, arg in enumerate(argv):
        if arg == "--ros-args":
            in_ros = True
        elif arg == "--":
            in_ros = False
        elif in_ros and arg == "--params-file" and i + 1 < len(argv):
            files.append(argv[i + 1])
    return files


def key_matches(key: str, fully_qualified_name: str) -> bool:
    """Whether a params-file key names the node, by rcl's rules: ``/**`` is any number of
    namespace parts, ``/*`` one; a key without a leading slash is under the root."""
    key = key if key.startswith("/") else "/" + key
    pattern = "".join("(/[^/]+)*" if part == "**" else "/[^/]+" if part == "*" else "/" + re.escape(part)
                      for part in key.strip("/").split("/"))
    return re.fullmatch(pattern or "/", fully_qualified_name) is not None


def check_params_files(node: Node, argv: Sequence[str]) -> None:
    """Raise :class:`ParameterError` for a ``--params-file`` that sets nothing for ``node``: a
    file keyed by the bare node name applies only at the root namespace, and silently dropping
    its settings (approval, the backend) under ``/robot1`` is worse than not starting."""
    import yaml

    from llm_planner_ros.core.yaml_files import load_yaml

    name = node.get_fully_qualified_name()
    for path in params_files(argv):
        try:
            with open(path, encoding="utf-8") as f:
                keys = [k for k, v in (load_yaml(f) or {}).items()
                        if isinstance(v, dict) and "ros__parameters" in v]
        except (OSError, yaml.YAMLError, AttributeError) as exc:
            raise ParameterError(f"cannot read the parameter file {path}: {exc}") from None
        if not any(key_matches(str(k), name) for k in keys):
            raise ParameterError(
                f"the parameter file {path} sets nothing for node '{name}' (its keys: "
                f"{', '.join(repr(str(k)) for k in keys) or 'none'}); key it '/**/{node.get_name()}' "
                f"for any namespace, '{name}' for this one, or '/**' for every node")
