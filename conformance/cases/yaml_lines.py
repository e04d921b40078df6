"""YAML loading that remembers where every value came from.

Case-file errors must name the file, line and field; PyYAML's plain loaders
forget positions, and silently keep the last of two duplicate keys. This
loader returns dicts and lists that carry the line of each key and item, and
refuses duplicate keys.
"""

from __future__ import annotations

from collections.abc import Iterable

import yaml


class LineDict(dict):
    """A mapping whose ``line`` is where it starts and ``key_lines[k]`` where key k is."""

    line: int
    key_lines: dict


class LineList(list):
    """A sequence whose ``line`` is where it starts and ``item_lines[i]`` where item i is."""

    line: int
    item_lines: list


class DuplicateKey(yaml.MarkedYAMLError):
    pass


class LineLoader(yaml.SafeLoader):
    def construct_mapping(self, node, deep=False):
        mapping = LineDict()
        mapping.line = node.start_mark.line + 1
        mapping.key_lines = {}
        self.flatten_mapping(node)
        for key_node, value_node in node.value:
            key = self.construct_object(key_node, deep=True)
            if key in mapping:
                raise DuplicateKey(
                    "while reading a mapping",
                    node.start_mark,
                    f"duplicate key {key!r}",
                    key_node.start_mark,
                )
            mapping[key] = self.construct_object(value_node, deep=True)
            mapping.key_lines[key] = key_node.start_mark.line + 1
        return mapping

    def construct_sequence(self, node, deep=False):
        items = LineList(self.construct_object(child, deep=True) for child in node.value)
        items.line = node.start_mark.line + 1
        items.item_lines = [child.start_mark.line + 1 for child in node.value]
        return items


LineLoader.add_constructor("tag:yaml.org,2002:map", LineLoader.construct_mapping)
LineLoader.add_constructor("tag:yaml.org,2002:seq", LineLoader.construct_sequence)


def load(text: str):
    return yaml.load(text, Loader=LineLoader)


def line_of(root, path: Iterable) -> int | None:
    """The line of the value at ``path`` (keys and list positions) below ``root``."""
    line = getattr(root, "line", None)
    node = root
    for step in path:
        if isinstance(node, LineDict) and step in node:
            line = node.key_lines[step]
        elif isinstance(node, LineList) and isinstance(step, int) and step < len(node):
            line = node.item_lines[step]
        else:
            break
        node = node[step]
    return line
