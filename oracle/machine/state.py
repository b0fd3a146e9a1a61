"""Machine state and expected state (acceptance sets), and their JSON form (vector format v1).

A state holds temp registers (4 x u32 each), resources (UAVs u#, TGSM g#, read-only SRV buffers
t#) and the invocation state. An *expected* state holds, per register component and per memory
word, an acceptance set: an exact integer, ``None`` (any value), a masked value (only the bits in
the mask must match), a short list of values (``{"one_of": [...]}``) or a typed predicate
(``{"f32": "nan"}``: some float32 NaN; ``{"f32_range": [lo, hi]}``: a float32 between two
patterns by value; ``{"f64": "nan"}`` and ``{"f64_one_of": [[lo, hi],
...]}``: the register pair holds some double NaN, or one of the listed doubles).
"""

from __future__ import annotations

import math
import re
import struct
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from sm5.oracle.errors import StateError, shown

U32 = 0xFFFFFFFF
REGISTER_RE = re.compile(r"^r(\d+)$")
RESOURCE_RE = re.compile(r"^([gtu]|cb)(\d+)$")
RESOURCE_KINDS = ("raw", "structured", "typed", "constant")
#: A constant buffer's file and kind: read-only words, 4 per element (FS 7.5).
CONSTANT_FILE = "cb"
CONSTANT_KIND = "constant"


@dataclass(frozen=True)
class Resource:
    """A UAV or TGSM allocation. ``data`` holds u32 words; raw size is ``4 * len(data)``.

    ``counter`` is the hidden counter of a structured UAV view created with a counter (Count or
    Append), ``None`` for a view without one (FS 5.3.10).
    """

    kind: str
    data: tuple[int, ...]
    stride: int = 0
    count: int = 0
    format: str = ""
    counter: int | None = None

    @property
    def size(self) -> int:
        return 4 * len(self.data)

    def with_data(self, data: tuple[int, ...]) -> Resource:
        return replace(self, data=data)


@dataclass(frozen=True)
class MachineState:
    registers: Mapping[str, tuple[int, int, int, int]]
    resources: Mapping[str, Resource]
    invocation: str = "active"


@dataclass(frozen=True)
class Masked:
    """Only the bits set in ``mask`` must equal those of ``value``."""

    value: int
    mask: int


@dataclass(frozen=True)
class F64Nan:
    """The component belongs to a register pair (x,y) or (z,w) that must hold a double NaN."""


@dataclass(frozen=True)
class OneOf:
    """The 32-bit value is one of ``values`` (sorted, at least two)."""

    values: tuple[int, ...]


@dataclass(frozen=True)
class F32Nan:
    """The 32-bit value is a float32 NaN, any payload."""


@dataclass(frozen=True)
class F16Nan:
    """The 32-bit value holds a binary16 NaN, any payload, in its low 16 bits; the high 16 bits
    are 0."""


@dataclass(frozen=True)
class F32Range:
    """The 32-bit value is a float32 (not a NaN) between the patterns ``lo`` and ``hi``
    inclusive, ordered by value with -0.0 just below +0.0 (:func:`f32_order`); ``lo`` orders
    strictly below ``hi``. A tolerance: every value within the instruction's error bound of the
    exact result."""

    lo: int
    hi: int


@dataclass(frozen=True)
class F64OneOf:
    """The component belongs to a register pair (x,y) or (z,w) that must hold one of the doubles
    ``values`` (64-bit patterns, sorted, at least two)."""

    values: tuple[int, ...]


Accept = int | None | Masked | F64Nan | OneOf | F32Nan | F16Nan | F32Range | F64OneOf
#: The acceptance sets that judge a whole register pair, not one component.
PAIR_FORMS = (F64Nan, F64OneOf)


@dataclass(frozen=True)
class ExpectedResource:
    """``has_counter``: the view has a hidden counter, whose final value lies in ``counter``."""

    kind: str
    words: tuple[Accept, ...]
    stride: int = 0
    count: int = 0
    format: str = ""
    has_counter: bool = False
    counter: Accept = None


@dataclass(frozen=True)
class ExpectedState:
    registers: Mapping[str, tuple[Accept, Accept, Accept, Accept]]
    resources: Mapping[str, ExpectedResource | None]
    invocation: str = "active"


@dataclass(frozen=True)
class Step:
    """One executed instruction of a program: its position among the program's instructions,
    the outcomes and clauses it fired (over every concrete run), how many concrete runs the
    values it read took, and whether it was widened (its writes became anything, because it
    read a value that could not be enumerated). In a program with flow control, one record
    covers every execution of the instruction (``runs`` sums them)."""

    index: int
    instruction: str
    line: int
    outcomes: tuple[str, ...]
    clauses: tuple[str, ...]
    runs: int
    widened: bool
    #: What its runs met that the sources single out, as flags of the vector (``facts`` of
    #: :class:`Execution`).
    facts: tuple[str, ...] = ()


#: A run read an element of a constant buffer or the icb past its end (it read 0).
CONSTANT_PAST_END = "constant-past-end"
#: ... and the element index was a number alone (no index register): known when compiled.
CONSTANT_LITERAL_PAST_END = "constant-literal-past-end"
#: The program starts with temps the sources leave undefined: registers the state does not
#: give, the elements of its indexable temps (erratum :data:`UNWRITTEN_TEMPS_ERRATUM`).
UNWRITTEN_TEMPS = "unwritten-temps"
UNWRITTEN_TEMPS_ERRATUM = "state.uninitialised_temps"


@dataclass(frozen=True)
class Execution:
    """What the oracle says of one program on one state: the outcomes and clauses of all its
    steps and the expected final state; ``steps`` records each step (not compared: two
    executions with the same verdict and state are the same answer)."""

    outcomes: tuple[str, ...]
    clauses: tuple[str, ...]
    state: ExpectedState | None
    rule: str | None = None
    reason: str = ""
    notes: tuple[str, ...] = field(default=(), compare=False)
    steps: tuple[Step, ...] = field(default=(), compare=False)
    #: What the run met that the sources single out (:data:`CONSTANT_PAST_END`): the vector's
    #: flags of that name, for the predicates that explain an implementation's divergence.
    facts: tuple[str, ...] = field(default=(), compare=False)

    @property
    def rejected(self) -> bool:
        # Only a rejected instance names the rule it breaks (and has no final state).
        return self.rule is not None and self.state is None


# ----------------------------------------------------------------------------------------------
# Numbers


def f64_bits(value: float) -> int:
    return int(struct.unpack("<Q", struct.pack("<d", value))[0])


def bits_f64(bits: int) -> float:
    return float(struct.unpack("<d", struct.pack("<Q", bits & 0xFFFFFFFFFFFFFFFF))[0])


def is_f64_nan(bits: int) -> bool:
    return math.isnan(bits_f64(bits))


def split64(bits: int) -> tuple[int, int]:
    """(lo, hi) u32 halves of a 64-bit pattern."""
    return bits & U32, (bits >> 32) & U32


def join64(lo: int, hi: int) -> int:
    return (hi << 32) | lo


# ----------------------------------------------------------------------------------------------
# Acceptance


def accepts(expected: Accept, observed: int, pair: int | None = None) -> bool:
    """Does ``observed`` lie in the acceptance set? ``pair`` is the other half for F64Nan."""
    if expected is None:
        return True
    if isinstance(expected, Masked):
        return (observed & expected.mask) == (expected.value & expected.mask)
    if isinstance(expected, F64Nan):
        return pair is not None and is_f64_nan(_pair_bits(observed, pair))
    if isinstance(expected, F64OneOf):
        return pair is not None and _pair_bits(observed, pair) in expected.values
    if isinstance(expected, OneOf):
        return observed in expected.values
    if isinstance(expected, F32Nan):
        return (observed >> 23) & 0xFF == 0xFF and observed & 0x7FFFFF != 0
    if isinstance(expected, F16Nan):
        return observed >> 16 == 0 and observed & 0x7C00 == 0x7C00 and observed & 0x3FF != 0
    if isinstance(expected, F32Range):
        return (not is_f32_nan(observed)
                and f32_order(expected.lo) <= f32_order(observed) <= f32_order(expected.hi))
    return observed == expected


def is_f32_nan(w: int) -> bool:
    return (w >> 23) & 0xFF == 0xFF and w & 0x7FFFFF != 0


def f32_order(w: int) -> int:
    """An unsigned key that orders float32 patterns by value, -0.0 just below +0.0 (a NaN
    orders beyond the infinities): a non-negative pattern with its sign bit set, a negative
    one with every bit flipped."""
    return w | 0x80000000 if not w & 0x80000000 else ~w & 0xFFFFFFFF


def f32_range(values: Iterable[int]) -> Accept:
    """The canonical acceptance set of every float32 between the least and the greatest of
    ``values`` (non-NaN patterns): the value itself when they are one."""
    keyed = sorted(values, key=f32_order)
    lo, hi = keyed[0], keyed[-1]
    return lo if lo == hi else F32Range(lo, hi)


def f32_range_members(accept: F32Range) -> range:
    """The patterns of a range, in value order, as order keys (:func:`f32_from_order` maps a
    key back)."""
    return range(f32_order(accept.lo), f32_order(accept.hi) + 1)


def f32_from_order(key: int) -> int:
    """The pattern whose :func:`f32_order` is ``key``."""
    return key & 0x7FFFFFFF if key & 0x80000000 else ~key & 0xFFFFFFFF


def _pair_bits(component: int, other: int) -> int:
    # The lower-numbered component is the low half; callers pass (this, other) in lane order.
    return join64(component, other)


def register_accepts(expected: tuple[Accept, ...], observed: tuple[int, ...]) -> list[int]:
    """Indices of the components of a register that fall outside their acceptance sets."""
    bad: list[int] = []
    for i, want in enumerate(expected):
        if isinstance(want, PAIR_FORMS):
            lo_i, hi_i = (i, i + 1) if i % 2 == 0 else (i - 1, i)
            if not accepts(want, observed[lo_i], observed[hi_i]):
                bad.append(i)
        elif not accepts(want, observed[i]):
            bad.append(i)
    return bad


# ----------------------------------------------------------------------------------------------
# JSON form (vector format v1)


def _u32(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= U32:
        raise StateError(f"expected an unsigned 32-bit integer, got {shown(value)}", where=where)
    return value


def u32_words(values: Iterable[Any], where: str) -> tuple[int, ...]:
    """``values`` as a tuple of u32 words; the error names the first bad one
    (``where[i]``). Valid words (the common case) are checked in one pass, without building a
    location per word."""
    words = tuple(values)
    if all(type(w) is int and 0 <= w <= U32 for w in words):
        return words
    return tuple(_u32(w, f"{where}[{i}]") for i, w in enumerate(words))


def resource_from_json(doc: Any, where: str) -> Resource:
    if not isinstance(doc, dict):
        raise StateError(f"expected a resource object, got {shown(doc)}", where=where)
    allowed = {"kind", "data", "stride", "count", "format", "counter"}
    extra = sorted(set(doc) - allowed)
    if extra:
        raise StateError(f"unknown field(s) {', '.join(extra)}; expected {sorted(allowed)}",
                         where=where)
    kind = doc.get("kind")
    if kind not in RESOURCE_KINDS:
        raise StateError(f"field kind: expected one of {RESOURCE_KINDS}, got {kind!r}", where=where)
    data = doc.get("data")
    if not isinstance(data, list):
        raise StateError("field data: expected a list of u32 words", where=where)
    words = u32_words(data, f"{where}.data")
    stride = doc.get("stride", 0)
    count = doc.get("count", 0)
    fmt = doc.get("format", "")
    if kind == "structured":
        for name, value in (("stride", stride), ("count", count)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise StateError(f"field {name}: expected a non-negative integer", where=where)
        if stride * count != 4 * len(words):
            raise StateError(f"data holds {len(words)} words ({4 * len(words)} bytes) but "
                             f"stride {stride} x count {count} is {stride * count} bytes",
                             where=where)
    elif kind == "typed":
        if not isinstance(fmt, str) or not fmt:
            raise StateError("field format: a typed resource names its format (R32_UINT, ...)",
                             where=where)
        count = len(words)
    elif "stride" in doc or "count" in doc or "format" in doc:
        raise StateError(f"a {kind} resource has only kind and data", where=where)
    counter = None
    if "counter" in doc:
        if kind != "structured":
            raise StateError("field counter: only a structured view has a hidden counter",
                             where=where)
        counter = _u32(doc["counter"], f"{where}.counter")
    return Resource(kind, words, stride, count, fmt, counter)


def resource_to_json(res: Resource, data: list[int] | None = None) -> dict[str, Any]:
    """The JSON form of ``res``; ``data``, when given, replaces a copy of its words."""
    out: dict[str, Any] = {"kind": res.kind, "data": list(res.data) if data is None else data}
    if res.kind == "structured":
        out["stride"], out["count"] = res.stride, res.count
    if res.kind == "typed":
        out["format"] = res.format
    if res.counter is not None:
        out["counter"] = res.counter
    return out


def state_from_json(doc: Any, where: str = "state") -> MachineState:
    if not isinstance(doc, dict):
        raise StateError(f"expected an object, got {type(doc).__name__}", where=where)
    registers: dict[str, tuple[int, int, int, int]] = {}
    resources: dict[str, Resource] = {}
    invocation = "active"
    for key, value in doc.items():
        here = f"{where}.{key}"
        if key == "invocation":
            if not isinstance(value, str):
                raise StateError("expected a string (active, helper, discarded)", where=here)
            invocation = value
        elif REGISTER_RE.match(key):
            if not isinstance(value, list) or len(value) != 4:
                raise StateError("expected a list of 4 u32 components", where=here)
            r = u32_words(value, here)
            registers[key] = (r[0], r[1], r[2], r[3])
        elif RESOURCE_RE.match(key):
            resources[key] = resource_from_json(value, here)
            if resources[key].counter is not None and not key.startswith("u"):
                raise StateError("field counter: only a UAV (u#) has a hidden counter",
                                 where=here)
            if (resources[key].kind == CONSTANT_KIND) != key.startswith(CONSTANT_FILE):
                raise StateError(f"a constant buffer is a {CONSTANT_FILE}# of kind "
                                 f"{CONSTANT_KIND}, and a {CONSTANT_FILE}# is nothing else",
                                 where=here)
        else:
            raise StateError("unknown state key; expected r#, u#, g#, t#, cb# or invocation",
                             where=here)
    return MachineState(registers, resources, invocation)


def state_to_json(state: MachineState) -> dict[str, Any]:
    out: dict[str, Any] = {k: list(v) for k, v in state.registers.items()}
    out.update({k: resource_to_json(v) for k, v in state.resources.items()})
    if state.invocation != "active":
        out["invocation"] = state.invocation
    return out


def accept_to_json(value: Accept) -> Any:
    if isinstance(value, Masked):
        return {"value": value.value, "mask": value.mask}
    if isinstance(value, F64Nan):
        return {"f64": "nan"}
    if isinstance(value, F32Nan):
        return {"f32": "nan"}
    if isinstance(value, F16Nan):
        return {"f16": "nan"}
    if isinstance(value, OneOf):
        return {"one_of": list(value.values)}
    if isinstance(value, F32Range):
        return {"f32_range": [value.lo, value.hi]}
    if isinstance(value, F64OneOf):
        return {"f64_one_of": [list(split64(v)) for v in value.values]}
    return value


def accept_from_json(doc: Any, where: str) -> Accept:
    if doc is None:
        return None
    if isinstance(doc, dict):
        if set(doc) == {"value", "mask"}:
            return Masked(_u32(doc["value"], where + ".value"), _u32(doc["mask"], where + ".mask"))
        if doc == {"f64": "nan"}:
            return F64Nan()
        if doc == {"f32": "nan"}:
            return F32Nan()
        if doc == {"f16": "nan"}:
            return F16Nan()
        if set(doc) == {"one_of"}:
            return OneOf(_value_list(doc["one_of"], where + ".one_of", _u32))
        if set(doc) == {"f64_one_of"}:
            return F64OneOf(_value_list(doc["f64_one_of"], where + ".f64_one_of", _u64_pair))
        if set(doc) == {"f32_range"}:
            return _f32_range(doc["f32_range"], where + ".f32_range")
        raise StateError(f"unknown acceptance set {shown(doc)}; expected an integer, null, "
                         "{value, mask}, {one_of}, {f32_range}, {f32: nan}, {f16: nan}, "
                         "{f64: nan} or {f64_one_of}", where=where)
    return _u32(doc, where)


def _f32_range(doc: Any, where: str) -> F32Range:
    if not isinstance(doc, list) or len(doc) != 2:
        raise StateError(f"expected [lo, hi], two float32 patterns, got {shown(doc)}",
                         where=where)
    lo, hi = _u32(doc[0], where + "[0]"), _u32(doc[1], where + "[1]")
    if is_f32_nan(lo) or is_f32_nan(hi):
        raise StateError("a range's ends are float32 values, not NaNs", where=where)
    if f32_order(lo) >= f32_order(hi):
        raise StateError(f"lo ({lo:#010x}) must order below hi ({hi:#010x}) by value "
                         "(-0.0 below +0.0; canonical form: one value is written as an integer)",
                         where=where)
    return F32Range(lo, hi)


def _u64_pair(doc: Any, where: str) -> int:
    if not isinstance(doc, list) or len(doc) != 2:
        raise StateError(f"expected a [lo, hi] pair of u32 words, got {shown(doc)}", where=where)
    return join64(_u32(doc[0], where + "[0]"), _u32(doc[1], where + "[1]"))


def _value_list(doc: Any, where: str, item: Callable[[Any, str], int]) -> tuple[int, ...]:
    """A sorted list of at least two distinct values (one value is written as an integer)."""
    if not isinstance(doc, list) or len(doc) < 2:
        raise StateError(f"expected a list of at least two values, got {shown(doc)}", where=where)
    values = tuple(item(v, f"{where}[{i}]") for i, v in enumerate(doc))
    if list(values) != sorted(set(values)):
        raise StateError("the values must be distinct and sorted (canonical form)", where=where)
    return values


def one_of(values: set[int]) -> Accept:
    """The canonical acceptance set of a 32-bit value in ``values``: an integer for one value."""
    return next(iter(values)) if len(values) == 1 else OneOf(tuple(sorted(values)))


def f64_one_of(values: set[int]) -> tuple[Accept, Accept]:
    """The canonical acceptance sets (lo, hi) of a double lane holding one of ``values``:
    exact halves for one value."""
    if len(values) == 1:
        return split64(next(iter(values)))
    both = F64OneOf(tuple(sorted(values)))
    return both, both


def step_to_json(step: Step) -> dict[str, Any]:
    """A step's record as JSON (``steps`` of a program vector and of ``sm5 exec``)."""
    return {"step": step.index, "instruction": step.instruction,
            "outcomes": list(step.outcomes), "clauses": list(step.clauses),
            "runs": step.runs, "widened": step.widened}


def expected_to_json(state: ExpectedState) -> dict[str, Any]:
    out: dict[str, Any] = {k: [accept_to_json(c) for c in v] for k, v in state.registers.items()}
    for key, res in state.resources.items():
        if res is None:
            out[key] = None
            continue
        body: dict[str, Any] = {"kind": res.kind, "data": [accept_to_json(w) for w in res.words]}
        if res.kind == "structured":
            body["stride"], body["count"] = res.stride, res.count
        if res.kind == "typed":
            body["format"] = res.format
        if res.has_counter:
            body["counter"] = accept_to_json(res.counter)
        out[key] = body
    if state.invocation != "active":
        out["invocation"] = state.invocation
    return out


def expected_from_json(doc: Any, where: str = "expect.state") -> ExpectedState:
    if not isinstance(doc, dict):
        raise StateError(f"expected an object, got {type(doc).__name__}", where=where)
    registers: dict[str, tuple[Accept, Accept, Accept, Accept]] = {}
    resources: dict[str, ExpectedResource | None] = {}
    invocation = "active"
    for key, value in doc.items():
        here = f"{where}.{key}"
        if key == "invocation":
            if not isinstance(value, str):
                raise StateError("expected a string (active, helper, discarded)", where=here)
            invocation = value
        elif REGISTER_RE.match(key):
            if not isinstance(value, list) or len(value) != 4:
                raise StateError("expected a list of 4 acceptance sets", where=here)
            c = tuple(accept_from_json(v, f"{here}[{i}]") for i, v in enumerate(value))
            registers[key] = (c[0], c[1], c[2], c[3])
        elif RESOURCE_RE.match(key):
            if value is None:
                resources[key] = None
                continue
            if not isinstance(value, dict) or not isinstance(value.get("data"), list):
                raise StateError("expected null or a resource with a data list", where=here)
            words = tuple(accept_from_json(w, f"{here}.data[{i}]")
                          for i, w in enumerate(value["data"]))
            numbers = {name: value.get(name, 0) for name in ("stride", "count")}
            for name, number in numbers.items():
                if isinstance(number, bool) or not isinstance(number, int) or number < 0:
                    raise StateError(f"field {name}: expected a non-negative integer",
                                     where=here)
            has_counter = "counter" in value
            counter = accept_from_json(value["counter"], f"{here}.counter") \
                if has_counter else None
            resources[key] = ExpectedResource(str(value.get("kind")), words,
                                              numbers["stride"], numbers["count"],
                                              str(value.get("format", "")), has_counter, counter)
        else:
            raise StateError("unknown key; expected r#, u#, g#, t# or invocation", where=here)
    return ExpectedState(registers, resources, invocation)


def exact_resource(resource: Resource) -> ExpectedResource:
    """The acceptance sets that hold exactly ``resource``."""
    return ExpectedResource(resource.kind, resource.data, resource.stride, resource.count,
                            resource.format, resource.counter is not None, resource.counter)
