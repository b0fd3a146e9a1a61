"""Fuzzing the readers of untrusted bytes: a vector file and a reply of the JSON Lines protocol.
Whatever the bytes, the vector reader raises nothing but VectorError (naming the file and line)
and the reply parser returns a Result or a protocol error, never anything else.

The budget is small in the default run; SM5_FUZZ_EXAMPLES raises it (as for the other fuzz tests).
"""

from __future__ import annotations

import functools
import json
import os
import tempfile
from pathlib import Path

from conformance_cases import all_vectors, write_vectors
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sm5.conformance.interface import Result
from sm5.conformance.protocol import SubprocessImplementation, _Garbled
from sm5.vectors.format import VectorError, read_file

EXAMPLES = int(os.environ.get("SM5_FUZZ_EXAMPLES", "100"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
                                                                 max_size=4),
    max_leaves=12)


@functools.cache
def _clean_file() -> bytes:
    """A valid file of three vectors (made once: the oracle builds them)."""
    with tempfile.TemporaryDirectory() as folder:
        return write_vectors(Path(folder) / "clean.jsonl", all_vectors()[:3]).read_bytes()


@FUZZ
@given(data=st.data())
def test_vector_reader_raises_only_vector_error(tmp_path_factory: object, data: st.DataObject
                                                ) -> None:
    folder = tmp_path_factory.mktemp("fuzz")  # type: ignore[attr-defined]
    lines = _clean_file().splitlines(keepends=True)
    index = data.draw(st.integers(0, len(lines) - 1))
    how = data.draw(st.sampled_from(["bytes", "json", "field", "cut"]))
    if how == "bytes":
        lines[index] = data.draw(st.binary(max_size=64)) + b"\n"
    elif how == "json":
        lines[index] = json.dumps(data.draw(json_values)).encode() + b"\n"
    elif how == "field":
        doc = json.loads(lines[index])
        key = data.draw(st.sampled_from(sorted(doc)))
        doc[key] = data.draw(json_values)
        lines[index] = json.dumps(doc).encode() + b"\n"
    else:
        cut = data.draw(st.integers(0, len(lines[index])))
        lines = [*lines[:index], lines[index][:cut]]
    path = folder / "fuzzed.jsonl"
    path.write_bytes(b"".join(lines))
    try:
        _, vectors = read_file(path)
        for _ in vectors:
            pass
    except VectorError as exc:
        assert str(path) in str(exc)


@FUZZ
@given(reply=st.one_of(st.binary(max_size=200),
                       json_values.map(lambda v: json.dumps(v).encode()),
                       st.dictionaries(st.sampled_from(["id", "state", "rejected",
                                                        "unsupported"]), json_values)
                       .map(lambda d: json.dumps({**d, "id": "v"}).encode())))
def test_reply_parser_returns_a_result_or_a_protocol_error(reply: bytes) -> None:
    impl = SubprocessImplementation(["unused"])
    try:
        result = impl._interpret(reply, "v")
    except _Garbled as exc:
        assert str(exc)
    else:
        assert isinstance(result, Result)
