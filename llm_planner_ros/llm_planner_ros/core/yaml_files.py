"""YAML as the project's files read it: PyYAML's safe loader, except that a key given twice in
one mapping is an error (PyYAML keeps the last silently, so a profile's second ``pick:`` or a
config's second ``num_samples:`` would drop the first unseen)."""
from __future__ import annotations

from typing import Any

import yaml


class _StrictLoader(yaml.SafeLoader):
    pass


def _mapping(loader: _StrictLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    seen: dict[Any, yaml.Node] = {}
    for key_node, _ in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":
            continue   # '<<: *base': its keys may be given again, to override them
        key = loader.construct_object(key_node, deep=True)
        try:
            hash(key)
        except TypeError:
            continue   # PyYAML's own error follows
        if key in seen:
            raise yaml.constructor.ConstructorError(
                "while reading a mapping", node.start_mark,
                f"the key {key!r} is given twice (first on line {seen[key].start_mark.line + 1}, then on line "
                f"{key_node.start_mark.line + 1})", key_node.start_mark)
        seen[key] = key_node
    return loader.construct_mapping(node, deep=deep)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)


def load_yaml(stream: Any) -> Any:
    """``yaml.safe_load``, refusing a key given twice in one mapping (a ``yaml.YAMLError``)."""
    return yaml.load(stream, Loader=_StrictLoader)   # noqa: S506 (a SafeLoader subclass)
