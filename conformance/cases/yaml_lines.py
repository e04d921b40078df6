"""YAML loading that remembers where every value came from, and refuses
what YAML allows but no file of this project means.

Case-file errors must name the file, line and field; PyYAML's plain loaders
forget positions, and silently keep the last of two duplicate keys. This
loader returns dicts and lists that carry the line of each key and item, and
refuses duplicate keys.

It is also the one strict reader of every YAML input (case files, baselines,
targets files): a value that YAML's types allow but that nothing here can
mean raises :class:`RefusedValue`, which carries the value's line and field path,
so a reader reports ``file:line: field: message`` instead of failing later:

* an integer of more digits than Python converts (``sys.get_int_max_str_digits``,
  4300; in decimal, whatever base it is written in): PyYAML would raise a
  bare ValueError with no line, and such a number cannot even be shown;
* a number written finite that a float cannot hold (``1.0e+400`` would
  silently become inf; ``.inf`` and ``.nan`` are written as such);
* the YAML types no format here has: ``!!binary``, ``!!set``, ``!!omap``,
  ``!!pairs``, ``!!timestamp``. A plain date (``2026-04-01``) is read as the
  string it is written as, never a ``datetime.date``.

What each format allows beyond that (bools are never integers, non-finite
floats only where a tensor value is meant) is its reader's schema: every
reader refuses a ``bool`` where it means an integer (:func:`is_int`).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterable
from typing import ClassVar

import yaml

from conformance.messages import shortened


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


class RefusedValue(yaml.MarkedYAMLError):
    """A value no file of this project means; ``path`` is where it is (keys and
    list positions from the document's root), ``problem`` says why."""

    def __init__(self, node, path: tuple, message: str) -> None:
        super().__init__(problem=message, problem_mark=node.start_mark)
        self.path = path
        self.message = message  # problem and problem_mark, never None here
        self.line: int = node.start_mark.line + 1


def is_int(value) -> bool:
    """An integer, as every format here means one: ``true`` is not 1."""
    return isinstance(value, int) and not isinstance(value, bool)


_SPECIAL_FLOATS = {".inf", "+.inf", "-.inf", ".nan"}
_UNUSED_TYPES = ("binary", "timestamp", "omap", "pairs", "set")
_TIMESTAMP = "tag:yaml.org,2002:timestamp"


class LineLoader(yaml.SafeLoader):
    # A plain 2026-04-01 stays a string: no format here has a date.
    # (types-PyYAML declares it an instance variable; PyYAML's resolvers are per class.)
    yaml_implicit_resolvers: ClassVar[dict] = {  # type: ignore[misc]
        first: [(tag, regexp) for tag, regexp in resolvers if tag != _TIMESTAMP]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }

    def __init__(self, stream) -> None:
        super().__init__(stream)
        self._path: list = []  # where the value being built is

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
            self._path.append(key)
            mapping[key] = self.construct_object(value_node, deep=True)
            self._path.pop()
            mapping.key_lines[key] = key_node.start_mark.line + 1
        return mapping

    def construct_sequence(self, node, deep=False):
        items = LineList()
        for index, child in enumerate(node.value):
            self._path.append(index)
            items.append(self.construct_object(child, deep=True))
            self._path.pop()
        items.line = node.start_mark.line + 1
        items.item_lines = [child.start_mark.line + 1 for child in node.value]
        return items

    def construct_yaml_int(self, node):
        text = str(node.value)
        limit = sys.get_int_max_str_digits()
        try:
            value = super().construct_yaml_int(node)
        except ValueError:
            value = None  # over the limit in decimal, or not an integer at all
        if value is None or (limit and abs(value) >= 10**limit):
            if value is not None or sum(ch.isdigit() for ch in text) > limit > 0:
                message = (
                    f"{shortened(text)}: an integer of more than {limit} digits, over the "
                    "limit of Python's int conversion (no field takes one)"
                )
            else:
                message = f"{shortened(text)!r} is not an integer"
            raise RefusedValue(node, tuple(self._path), message)
        return value

    def construct_yaml_float(self, node):
        value = super().construct_yaml_float(node)
        text = str(node.value).replace("_", "").lower()
        if not math.isfinite(value) and text not in _SPECIAL_FLOATS:
            raise RefusedValue(
                node,
                tuple(self._path),
                f"{shortened(str(node.value))} is out of range for a float (it would become "
                f"{value}; write .inf or -.inf for an infinity)",
            )
        return value

    def construct_unused(self, node):
        name = node.tag.rpartition(":")[2]
        raise RefusedValue(
            node, tuple(self._path), f"the YAML type !!{name} is not used in these files"
        )


LineLoader.add_constructor("tag:yaml.org,2002:map", LineLoader.construct_mapping)
LineLoader.add_constructor("tag:yaml.org,2002:seq", LineLoader.construct_sequence)
LineLoader.add_constructor("tag:yaml.org,2002:int", LineLoader.construct_yaml_int)
LineLoader.add_constructor("tag:yaml.org,2002:float", LineLoader.construct_yaml_float)
for _name in _UNUSED_TYPES:
    LineLoader.add_constructor(f"tag:yaml.org,2002:{_name}", LineLoader.construct_unused)


def load(text: str):
    """The document's values, lines remembered; raises yaml.YAMLError, and
    :class:`RefusedValue` (a YAMLError with a field path) for what no file means."""
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
