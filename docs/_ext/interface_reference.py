"""Sphinx extension: writes _generated/interfaces.md, a table of every field and constant of each
message, service and action of llm_planner_msgs, read from llm_planner_msgs/ with rosidl_adapter's parser
(as `ros2 interface show` reads them), and the topics the nodes publish with their QoS
(llm_planner_ros.ros.qos.TOPICS)."""
from __future__ import annotations

from pathlib import Path

OUT = "_generated/interfaces.md"
PACKAGE = "llm_planner_msgs"


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _comment(annotations: dict) -> str:
    return " ".join(annotations.get("comment", []))


def _section(title: str, spec) -> list[str]:   # noqa: ANN001 (rosidl_adapter.parser.MessageSpecification)
    lines = [f"**{title}**", ""] if title else []
    if spec.constants:
        lines += ["| constant | type | value | meaning |", "|---|---|---|---|"]
        lines += [f"| `{c.name}` | `{c.type}` | `{_cell(repr(c.value) if isinstance(c.value, str) else c.value)}` "
                  f"| {_cell(_comment(c.annotations))} |" for c in spec.constants]
        lines.append("")
    if spec.fields:
        lines += ["| field | type | default | meaning |", "|---|---|---|---|"]
        lines += [f"| `{f.name}` | `{_cell(f.type)}` | {'' if f.default_value is None else f'`{f.default_value}`'} "
                  f"| {_cell(_comment(f.annotations))} |" for f in spec.fields]
        lines.append("")
    if not spec.constants and not spec.fields:
        lines += ["(empty)", ""]
    return lines


def _qos(profile) -> str:   # noqa: ANN001 (rclpy.qos.QoSProfile)
    return (f"{profile.reliability.name.lower()}, {profile.durability.name.lower().replace('_', ' ')}, "
            f"depth {profile.depth}")


def render(root: Path) -> str:
    from rosidl_adapter.parser import parse_action_string, parse_message_string, parse_service_string

    from llm_planner_ros.ros import qos

    lines = ["# Interface reference", "",
             "Generated from the interface files in `llm_planner_msgs/` (read as `ros2 interface show` reads them) "
             "and from the QoS profiles the nodes publish with (`llm_planner_ros/ros/qos.py`).", "",
             "## Topics", "", "| topic | type | published by | QoS | what |", "|---|---|---|---|---|"]
    for t in qos.TOPICS:
        lines.append(f"| `{t.name}` | `{t.type}` | {t.publishers} | {_qos(getattr(qos, t.qos))} | {_cell(t.what)} |")
    lines.append("")
    for kind, suffix in (("msg", ".msg"), ("srv", ".srv"), ("action", ".action")):
        lines += [f"## {dict(msg='Messages', srv='Services', action='Actions')[kind]}", ""]
        for path in sorted((root / "llm_planner_msgs" / kind).glob(f"*{suffix}")):
            text, name = path.read_text(), path.stem
            lines += [f"### `{PACKAGE}/{kind}/{name}`", ""]
            if kind == "msg":
                spec = parse_message_string(PACKAGE, name, text)
                about = _comment(spec.annotations)
                lines += ([about, ""] if about else []) + _section("", spec)
            elif kind == "srv":
                spec = parse_service_string(PACKAGE, name, text)
                about = _comment(spec.request.annotations)
                lines += ([about, ""] if about else []) + _section("Request", spec.request) \
                    + _section("Response", spec.response)
            else:
                spec = parse_action_string(PACKAGE, name, text)
                about = _comment(spec.goal.annotations)
                lines += ([about, ""] if about else []) + _section("Goal", spec.goal) \
                    + _section("Result", spec.result) + _section("Feedback", spec.feedback)
    return "\n".join(lines)


def _write(app) -> None:   # noqa: ANN001 (sphinx.application.Sphinx)
    path = Path(app.srcdir) / OUT
    path.parent.mkdir(exist_ok=True)
    text = render(Path(app.srcdir).parent)
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def setup(app) -> dict:   # noqa: ANN001
    app.connect("builder-inited", _write)
    return {"parallel_read_safe": True}
