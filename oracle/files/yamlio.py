"""Reading YAML and JSON Schema validation with errors that name the file, line and field."""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from sm5.oracle.errors import SpecError, bounded

#: libyaml's safe loader where present (ten times faster), else PyYAML's: the same nodes and marks.
SAFE_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _UniqueKeyLoader(SAFE_LOADER):  # type: ignore[valid-type,misc]
    """A safe loader (libyaml's when present, ten times faster) that rejects duplicate mapping
    keys instead of silently keeping the last."""


def _construct_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode,
                       deep: bool = False) -> dict[Any, Any]:
    seen: dict[Any, yaml.Node] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        try:
            duplicate = key in seen
        except TypeError:  # an unhashable key: construct_mapping reports it as a YAML error
            continue
        if duplicate:
            mark = key_node.start_mark
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r}", mark)
        seen[key] = key_node
    mapping: dict[Any, Any] = loader.construct_mapping(node, deep=deep)
    return mapping


_UniqueKeyLoader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)

MAX_YAML_BYTES = 16 * 1024 * 1024
"""Largest YAML file read (spec and expectations files are a few hundred kilobytes)."""
MAX_SCHEMA_ERRORS = 100
"""Schema errors collected before the best one is chosen and reported."""
MAX_YAML_DEPTH = 64
"""Deepest nesting of mappings and lists accepted (the schemas need fewer than ten levels)."""
def _check_graph(root: yaml.Node) -> None:
    """Refuse what lets a small file expand into a huge document: an alias that refers to a
    mapping or list (the "billion laughs" bomb; aliases of scalars expand only linearly), and
    nesting deeper than :data:`MAX_YAML_DEPTH`. Walks the node graph once, without recursion."""
    seen: set[int] = set()
    stack: list[tuple[yaml.Node, int]] = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        if not isinstance(node, yaml.CollectionNode):
            continue
        line = node.start_mark.line + 1
        if id(node) in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"an alias refers to the mapping or list at line {line}: only "
                "scalars may be aliased", node.start_mark)
        seen.add(id(node))
        if depth > MAX_YAML_DEPTH:
            raise yaml.constructor.ConstructorError(
                None, None, f"nested deeper than {MAX_YAML_DEPTH} levels", node.start_mark)
        children: list[yaml.Node] = []
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                children += (key, value)
        else:
            children = list(node.value)
        stack.extend((child, depth + 1) for child in reversed(children))


def _get_single_data(self: _UniqueKeyLoader) -> Any:
    node = self.get_single_node()
    if node is None:
        return None
    _check_graph(node)
    return self.construct_document(node)


_UniqueKeyLoader.get_single_data = _get_single_data


def load_yaml(path: Path) -> Any:
    """Parse one YAML file; a syntax error becomes a SpecError naming file, line and column."""
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_YAML_BYTES + 1)
    except OSError as exc:
        raise SpecError(f"cannot read: {exc.strerror or exc}", where=str(path)) from None
    if len(raw) > MAX_YAML_BYTES:
        raise SpecError(f"larger than {MAX_YAML_BYTES} bytes; not read", where=str(path))
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise SpecError(f"not UTF-8: byte 0x{raw[exc.start]:02x}",
                        where=f"{path}:{line}") from None
    try:
        return yaml.load(text, Loader=_UniqueKeyLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = bounded(getattr(exc, "problem", None) or str(exc))
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
        raise SpecError(f"YAML syntax error: {problem}", where=where) from None


@cache
def schema(name: str) -> dict[str, Any]:
    """The JSON Schema ``spec/schema/<name>.schema.json``."""
    text = resources.files("sm5.spec").joinpath("schema", f"{name}.schema.json").read_text("utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def inline_refs(node: Any, docs: Mapping[str, Any], base: str, refs: int = 0) -> Any:
    """``node`` with every ``$ref`` (``URI#/$defs/NAME``, or ``#/$defs/NAME`` in the document
    ``base``; ``docs`` maps each schema's ``$id`` to it) replaced by its target: the same schema
    without a registry look-up per value, about twice as fast to validate with. The schemas are
    not recursive; ``refs`` counts the references followed to get here."""
    if refs > 32:
        raise SpecError("$ref chain too long (a recursive definition?)", where=base)
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            uri, _, fragment = ref.partition("#")
            where = uri or base
            target = inline_refs(docs[where]["$defs"][fragment.removeprefix("/$defs/")], docs,
                                 where, refs + 1)
            rest = {k: v for k, v in node.items() if k != "$ref"}
            return {"allOf": [target, inline_refs(rest, docs, base, refs)]} if rest else target
        return {k: inline_refs(v, docs, base, refs) for k, v in node.items()}
    if isinstance(node, list):
        return [inline_refs(x, docs, base, refs) for x in node]
    return node


def field_path(parts: Any) -> str:
    """``['operands', 2, 'files']`` -> ``operands[2].files``."""
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def validate(document: Any, schema_name: str, where: str) -> None:
    """Validate against a schema; the first error (by path) becomes one clear SpecError."""
    validator = jsonschema.Draft202012Validator(schema(schema_name))
    # The first errors only: a document of a million bad items must not become a million errors.
    found = itertools.islice(validator.iter_errors(document), MAX_SCHEMA_ERRORS)
    errors = sorted(found, key=lambda e: list(map(str, e.absolute_path)))
    if errors:
        best = jsonschema.exceptions.best_match(errors)
        assert best is not None
        raise SpecError(f"field {bounded(field_path(best.absolute_path))}: "
                        f"{bounded(best.message)}", where=where)
