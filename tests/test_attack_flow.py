"""Bad flow control ends in seconds, in bounded memory, with one clear error or the ``unbounded``
verdict, never a traceback: an infinite loop, 100,000 nested blocks, recursion and a chain of
100,000 subroutines, 100,000 instructions, a label numbered 2^32 - 1 (``sm5 exec`` in a child
under a time and address-space limit, tests/bounded_run.py). The three largest carry the ``slow``
marker: CI runs them in its slow step."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bounded_run import run_sm5

STATE = {"r0": [0, 0, 0, 0]}


def _exec(tmp_path: Path, program: list[str], seconds: float = 60.0) -> dict[str, object]:
    path = tmp_path / "program.json"
    path.write_text(json.dumps({"program": program, "state": STATE}), encoding="utf-8")
    done = run_sm5(["exec", str(path)], seconds=seconds)
    assert done.code == 0, done.stderr
    assert "Traceback" not in done.stderr
    result: dict[str, object] = json.loads(done.stdout)
    return result


def test_an_infinite_loop_is_unbounded_with_every_word_accepted(tmp_path: Path) -> None:
    result = _exec(tmp_path, ["mov r0.x, l(1)", "loop", "iadd r0.x, r0.x, l(1)", "endloop"])
    assert result["outcomes"] == ["unbounded"]
    assert result["state"] == {"r0": [None, None, None, None]}
    steps = result["steps"]
    assert isinstance(steps, list)
    assert len(steps) == 4  # one record per instruction, not per execution
    assert sum(s["runs"] for s in steps) == 100_000  # the step budget of spec/control.yaml


@pytest.mark.slow  # parses and runs hundreds of thousands of lines: 8 to 27 s
def test_100000_nested_blocks_are_matched_and_undefined_past_64(tmp_path: Path) -> None:
    depth = 100_000
    program = ["if_nz r0.x"] * depth + ["mov r0.x, l(1)"] + ["endif"] * depth
    result = _exec(tmp_path, program)
    assert result["outcomes"] == ["nesting_undefined"]


def test_unbalanced_nesting_is_one_rule(tmp_path: Path) -> None:
    result = _exec(tmp_path, ["loop"] * 100_000 + ["break"] + ["endloop"] * 99_999)
    assert result["outcomes"] == ["rejected"]
    assert result["rule"] == "structure.unclosed_block"


@pytest.mark.slow  # parses and runs hundreds of thousands of lines: 8 to 27 s
def test_recursion_is_rejected_and_a_long_chain_of_calls_ends(tmp_path: Path) -> None:
    result = _exec(tmp_path, ["call l0", "ret", "label l0", "call l1", "ret",
                              "label l1", "call l0", "ret"])
    assert result["rule"] == "structure.recursion"
    chain = ["call l0", "ret"]
    for k in range(100_000):
        chain += [f"label l{k}", "iadd r0.x, r0.x, l(1)", f"call l{k + 1}", "ret"]
    chain += ["label l100000", "ret"]
    result = _exec(tmp_path, chain)
    assert result["outcomes"] == ["defined"]
    assert result["state"] == {"r0": [32, 0, 0, 0]}  # the 33rd nested call is skipped


@pytest.mark.slow  # parses and runs hundreds of thousands of lines: 8 to 27 s
def test_100000_instructions_run(tmp_path: Path) -> None:
    result = _exec(tmp_path, ["iadd r0.x, r0.x, l(1)"] * 50_000 + ["nop"] * 49_999)
    assert result["outcomes"] == ["defined"]
    assert result["state"] == {"r0": [50_000, 0, 0, 0]}


def test_a_label_numbered_2_to_the_32_minus_1(tmp_path: Path) -> None:
    result = _exec(tmp_path, ["call l4294967295", "ret", "label l4294967295",
                              "mov r0.x, l(7)", "ret"])
    assert result["state"] == {"r0": [7, 0, 0, 0]}
    path = tmp_path / "big.json"
    path.write_text(json.dumps({"program": ["call l4294967296", "ret"], "state": STATE}),
                    encoding="utf-8")
    done = run_sm5(["exec", str(path)])
    assert done.code != 0
    assert "Traceback" not in done.stderr
    assert "4294967296" in done.stderr and "out of range" in done.stderr
