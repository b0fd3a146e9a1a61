"""Expanding the shared definitions an instruction file references, before it is validated.

Two kinds of sharing, both plain document transformations (YAML in, YAML out):

* ``extends: <template>``: an instruction takes every field of ``spec/templates/<template>.yaml``
  it does not set itself; lists of rules, errata, semantic inputs and groups are concatenated
  (the template's first). A template may extend another.
* ``semantics.memory``: the memory-access block is expanded from ``spec/shared/memory.yaml``
  into the instruction's inputs, assumption, address formula, clause groups and errata.

Local ids (``in_bounds``, ``legal.typed_return_type``, an erratum ``tgsm_rule_missing``) are
prefixed with the instruction's name, so shared text never names an instruction.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from sm5.oracle.errors import SpecError

Doc = dict[str, Any]

#: Fields whose lists a template and its instruction concatenate.
CONCATENATED = ("rules", "errata")
#: Semantic fields concatenated likewise.
CONCATENATED_SEMANTICS = ("inputs", "derived", "groups")
#: The memory-access modes of shared/memory.yaml and what each needs from the block.
MODES = ("read", "write", "rmw", "rmw_return")


def apply_template(doc: Mapping[str, Any], templates: Mapping[str, Mapping[str, Any]],
                   where: str, depth: int = 0) -> Doc:
    """``doc`` with the fields of its ``extends`` template (recursively) filled in."""
    out: Doc = copy.deepcopy(dict(doc))
    name = out.pop("extends", None)
    if name is None:
        return out
    if not isinstance(name, str) or name not in templates:
        known = ", ".join(sorted(templates)) or "none"
        raise SpecError(f"extends: unknown template {name!r}; expected one of {known}",
                        where=where)
    if depth > 8:
        raise SpecError("extends: templates nested more than 8 deep", where=where)
    base = apply_template(templates[name], templates, where, depth + 1)
    for key, value in base.items():
        if key == "semantics" and isinstance(out.get(key), dict) and isinstance(value, dict):
            out[key] = _merge_semantics(value, out[key])
        elif key in CONCATENATED and isinstance(out.get(key), list):
            out[key] = list(value) + out[key]
        elif key not in out:
            out[key] = value
    return out


def _merge_semantics(base: Mapping[str, Any], own: Mapping[str, Any]) -> Doc:
    merged: Doc = dict(base)
    for key, value in own.items():
        if key in CONCATENATED_SEMANTICS and isinstance(base.get(key), list) \
                and isinstance(value, list):
            merged[key] = list(base[key]) + value
        elif key == "memory" and isinstance(base.get(key), dict) and isinstance(value, dict):
            merged[key] = {**base[key], **value}
        else:
            merged[key] = value
    return merged


def prefix_ids(doc: Doc) -> Doc:
    """Prefix local rule, erratum and clause ids (and references to them) with the name."""
    name = doc.get("name")
    if not isinstance(name, str):
        return doc

    def full(identifier: Any) -> Any:
        if isinstance(identifier, str) and not identifier.startswith(name + "."):
            return f"{name}.{identifier}"
        return identifier

    for rule in _listed(doc.get("rules")):
        if isinstance(rule, dict):
            rule["id"] = full(rule.get("id"))
    for erratum in _listed(doc.get("errata")):
        if isinstance(erratum, dict):
            erratum["id"] = full(erratum.get("id"))
    semantics = doc.get("semantics")
    if isinstance(semantics, dict):
        for group in _listed(semantics.get("groups")):
            if not isinstance(group, dict):
                continue
            for clause in _listed(group.get("clauses")):
                if isinstance(clause, dict):
                    clause["id"] = full(clause.get("id"))
                    if "erratum" in clause:
                        clause["erratum"] = full(clause["erratum"])
            if isinstance(group.get("requires"), list):
                group["requires"] = [full(r) for r in group["requires"]]
    availability = doc.get("availability")
    if isinstance(availability, dict):
        for key in ("runtimes", "targets"):
            for row in _listed(availability.get(key)):
                if isinstance(row, dict) and "erratum" in row:
                    row["erratum"] = full(row["erratum"])
    return doc


def _listed(value: Any) -> list[Any]:
    """A field that should be a list, or none where it is anything else (the schema, checked
    after expansion, then names the field and what it expected)."""
    return value if isinstance(value, list) else []


# ----------------------------------------------------------------------------------------------
# The memory-access block


def expand_memory(doc: Doc, shared: Mapping[str, Any], resource_kinds: Sequence[tuple[str, str]],
                  where: str) -> Doc:
    """Expand ``semantics.memory`` with the shared definition (see spec/shared/memory.yaml)."""
    semantics = doc.get("semantics")
    if not isinstance(semantics, dict) or not isinstance(semantics.get("memory"), dict):
        return doc
    block: Mapping[str, Any] = semantics["memory"]
    mode = block.get("mode")
    if mode not in MODES:
        raise SpecError(f"semantics.memory.mode: {mode!r} is not one of {', '.join(MODES)}",
                        where=where)
    operands = {o.get("name"): o for o in doc.get("operands", ()) if isinstance(o, dict)}
    memory_name = block.get("operand")
    memory_op = operands.get(memory_name)
    if memory_op is None:
        raise SpecError(f"semantics.memory.operand: no operand named {memory_name!r}",
                        where=where)
    address = block.get("address")
    if not isinstance(address, list) or not 1 <= len(address) <= 2 or \
            any(a not in operands for a in address):
        raise SpecError("semantics.memory.address: one swizzled operand or two selected "
                        "operands, by name", where=where)
    files = [f for f in memory_op.get("files", ()) if any(f == k[0] for k in resource_kinds)]
    kinds = memory_op.get("kinds") or sorted({k for f, k in resource_kinds if f in files})
    groups = [g for g in shared["groups"]
              if g["file"] in files and g["kind"] in kinds and (g["file"], g["kind"])
              in set(resource_kinds) and mode in g["clauses"][0]["outcomes"]]
    if not groups:
        raise SpecError(f"semantics.memory: operand {memory_name} allows no file and kind of "
                        "the shared memory definition", where=where)
    invocation = bool(block.get("invocation", False))
    overrides: Mapping[str, Any] = block.get("clauses", {}) or {}
    inputs = [_bind_input(i, block, address, files, [g["kind"] for g in groups], where)
              for i in shared["inputs"]]
    if invocation:
        inputs.append(copy.deepcopy(shared["invocation_input"]))
    if mode in ("rmw", "rmw_return"):
        old = copy.deepcopy(shared["old_input"])
        old["from"] = {"memory": memory_name}
        inputs.append(old)
    expanded_groups: list[Doc] = []
    if invocation:
        expanded_groups.append(_group(shared["invocation_group"], mode, "True", overrides))
    active = "invocation == 'active' and " if invocation else ""
    for g in groups:
        scope = f"{active}file == '{g['file']}' and kind == '{g['kind']}'"
        expanded_groups.append(_group(g, mode, scope, overrides))
    used_errata = {c.get("erratum") for g in expanded_groups for c in g["clauses"]}
    errata = [copy.deepcopy(e) for e in shared.get("errata", ()) if e["id"] in used_errata]
    unknown = sorted(set(overrides) - {c["id"] for g in expanded_groups for c in g["clauses"]})
    if unknown:
        raise SpecError(f"semantics.memory.clauses: no shared clause {', '.join(unknown)}",
                        where=where)
    semantics = dict(semantics)
    semantics["inputs"] = inputs + list(semantics.get("inputs", ()))
    semantics["groups"] = expanded_groups + list(semantics.get("groups", ()))
    semantics.setdefault("assume", shared["assume"])
    semantics.setdefault("address", shared["address"])
    semantics.setdefault("address_source", copy.deepcopy(shared["source"]))
    out = dict(doc)
    out["semantics"] = semantics
    own_errata = {e.get("id") for e in out.get("errata", ()) if isinstance(e, dict)}
    out["errata"] = [e for e in errata if e["id"] not in own_errata] + list(out.get("errata", ()))
    return out


def _bind_input(shared_input: Mapping[str, Any], block: Mapping[str, Any], address: list[str],
                files: list[str], kinds: list[str], where: str) -> Doc:
    out: Doc = copy.deepcopy(dict(shared_input))
    source = out["from"]
    if "address" in source:
        k = source["address"]
        out["from"] = ({"operand": address[0], "component": k} if len(address) == 1
                       else {"operand": address[k]} if k < len(address)
                       else {"constant": 0})
    elif "width" in source:
        width = block.get("components", 1)
        if isinstance(width, int):
            out["from"] = {"constant": width}
            out["min"] = out["max"] = width
        elif isinstance(width, dict) and ("mask" in width or "reach" in width):
            out["from"] = dict(width)
        else:
            raise SpecError("semantics.memory.components: an integer, {mask: OPERAND} or "
                            "{reach: OPERAND, mask: OPERAND}", where=where)
    elif "resource" in source:
        out["from"] = {"resource": block["operand"], "field": source["field"]}
    if out["name"] == "file":
        out["values"] = list(files)
    elif out["name"] == "kind":
        out["values"] = sorted(set(kinds))
    return out


def _group(shared_group: Mapping[str, Any], mode: str, scope: str,
           overrides: Mapping[str, Any]) -> Doc:
    clauses = []
    for c in shared_group["clauses"]:
        if mode not in c["outcomes"]:
            continue  # the clause does not exist in this access mode
        clause: Doc = {k: copy.deepcopy(v) for k, v in c.items() if k != "outcomes"}
        clause["outcomes"] = list(c["outcomes"][mode])
        clause["id"] = f"{shared_group['id']}.{c['id']}"
        override = overrides.get(clause["id"], {})
        if isinstance(override, dict):
            clause.update(copy.deepcopy(override))
        clauses.append(clause)
    return {"id": shared_group["id"], "scope": scope, "text": shared_group["text"],
            "clauses": clauses}
