"""Siblings: the kernels a real implementation could compute instead of an instruction's.

A sibling is data beside the instruction (``siblings:`` in its file or template): an id, what
the confusion is, and the expressions it replaces in the instruction's semantics:

* ``memory.kernel``: the value a read-modify-write leaves in memory (``old ^ value`` for an OR);
* ``derived.<name>``: a derived value (``f64_to_i32_nearest(x)`` for a truncation);
* ``inputs.<name>``: an input read as a fixed expression everywhere the semantics reads it
  (``'active'`` for ``invocation``: the instruction performed in every invocation).

The sibling's semantics is the instruction's with those replacements, built by the same loader:
the interpreter runs it like any instruction, and z3 looks for an input where the two differ
(``sm5.oracle.proofs.theorems.siblings``). ``visible`` (optional) is a condition, over the
instruction's names, that the difference must meet to show in the final state (a store
performed where it should be skipped is invisible when it writes the word already there).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sm5.oracle.errors import SpecError

if TYPE_CHECKING:
    from sm5.oracle.model.spec import InstructionSpec, Model

#: What a replacement may address: ``memory.kernel``, ``derived.<name>``, ``inputs.<name>``.
_KEY = re.compile(r"^(memory\.kernel|derived\.[a-z_][a-z0-9_]*|inputs\.[a-z_][a-z0-9_]*)$")
#: The expression fields of a semantics document an input replacement rewrites.
_EXPRESSION_FIELDS = ("scope", "when", "expr", "kernel", "assume")


@dataclass(frozen=True)
class Sibling:
    """A kernel the instruction could be confused with; ``spec``: its semantics as an
    instruction of its own (the instruction's, with ``replace`` applied)."""

    id: str
    text: str
    replace: Mapping[str, str]
    visible: str | None
    spec: InstructionSpec


Builder = Callable[[Mapping[str, Any], Path, "Model"], "InstructionSpec"]


def build_siblings(doc: Mapping[str, Any], path: Path, model: Model,
                   build: Builder) -> tuple[Sibling, ...]:
    """The siblings an expanded instruction document lists, each built by ``build``."""
    out = []
    seen: set[str] = set()
    for k, entry in enumerate(doc.get("siblings", ())):
        where = f"{path}: siblings[{k}] ({entry['id']})"
        if entry["id"] in seen:
            raise SpecError(f"sibling id {entry['id']!r} is listed twice", where=str(path))
        seen.add(entry["id"])
        variant = variant_document(doc, entry["replace"], where)
        try:
            spec = build(variant, path, model)
        except SpecError as exc:
            raise SpecError(f"the sibling's semantics does not load: {exc.message}",
                            where=where) from None
        out.append(Sibling(entry["id"], entry["text"], dict(entry["replace"]),
                           entry.get("visible"), spec))
    return tuple(out)


def variant_document(doc: Mapping[str, Any], replace: Mapping[str, str],
                     where: str) -> dict[str, Any]:
    """``doc`` with each replacement made, without its siblings."""
    variant = copy.deepcopy(dict(doc))
    variant.pop("siblings", None)
    semantics = variant["semantics"]
    for key, expr in replace.items():
        if not _KEY.match(key):
            raise SpecError(f"replace key {key!r}: expected memory.kernel, derived.<name> or "
                            "inputs.<name>", where=where)
        part, _, name = key.partition(".")
        if part == "memory":
            memory = semantics.get("memory")
            if not isinstance(memory, dict) or "kernel" not in memory:
                raise SpecError(f"replace key {key!r}: the instruction has no memory kernel",
                                where=where)
            memory["kernel"] = expr
        elif part == "derived":
            entries = [d for d in semantics.get("derived", ()) if d["name"] == name]
            if not entries:
                raise SpecError(f"replace key {key!r}: no derived value {name!r}", where=where)
            entries[0]["expr"] = expr
        else:
            if not any(i["name"] == name for i in semantics.get("inputs", ())):
                raise SpecError(f"replace key {key!r}: no input {name!r}", where=where)
            _rewrite_reads(semantics, name, f"({expr})")
    return variant


def _rewrite_reads(node: Any, name: str, expr: str) -> None:
    """Every expression field under ``node`` reads ``expr`` where it read ``name``."""
    pattern = re.compile(rf"(?<![\w'\"]){re.escape(name)}(?![\w'\"(])")
    if isinstance(node, dict):
        for key, value in node.items():
            if key in _EXPRESSION_FIELDS and isinstance(value, str):
                node[key] = pattern.sub(expr, value)
            else:
                _rewrite_reads(value, name, expr)
    elif isinstance(node, list):
        for item in node:
            _rewrite_reads(item, name, expr)
