"""The run engine, the implementation resolver and ``sm5 conform``."""

from __future__ import annotations

import gc
import hashlib
import json
import sys
import weakref
from pathlib import Path

import pytest
from conformance_cases import all_vectors, write_vectors

from sm5.cli import main
from sm5.conformance import collections_policy
from sm5.conformance.implementations import ImplementationError, Unavailable, resolve
from sm5.conformance.interface import Result
from sm5.conformance.mutants import MUTANTS
from sm5.conformance.oracle_impl import OracleImplementation
from sm5.conformance.run import RunError, parse_shard, run, shard_of, vector_files
from sm5.vectors.format import Vector, VectorError

VECTORS = all_vectors()


@pytest.fixture
def cases(tmp_path: Path) -> Path:
    return write_vectors(tmp_path / "cases.jsonl", VECTORS)


def test_shards_partition_the_vectors_by_the_documented_hash() -> None:
    ids = [v.id for v in VECTORS]
    shards = [parse_shard(f"{i}/3") for i in (1, 2, 3)]
    owners = [[s.index for s in shards if s is not None and s.holds(i)] for i in ids]
    assert all(len(o) == 1 for o in owners)
    # The formula of the docs, spelled out independently: sha256(id), first 8 bytes, mod n.
    vid = "store_structured/oob_index/0003"
    assert shard_of(vid, 7) == int(hashlib.sha256(vid.encode()).hexdigest()[:16], 16) % 7


@pytest.mark.parametrize("text", ["0/2", "3/2", "1/0", "a/b", "2", "1/2/3"])
def test_bad_shard_spec(text: str) -> None:
    with pytest.raises(RunError, match="expected i/n"):
        parse_shard(text)


def test_duplicate_vector_ids_are_an_error(tmp_path: Path) -> None:
    path = write_vectors(tmp_path / "dup.jsonl", [VECTORS[0], VECTORS[0]])
    with pytest.raises(VectorError, match=r"dup.jsonl:3: duplicate vector id"):
        run(OracleImplementation(), [path])


def test_folder_without_vector_files(tmp_path: Path) -> None:
    with pytest.raises(RunError, match=r"no \*\.jsonl vector files"):
        vector_files([tmp_path])


class Raising:
    name = "raising"
    capabilities = frozenset({"executes"})

    def run(self, vector: Vector) -> Result:
        raise ZeroDivisionError("oops")


def test_an_exception_in_run_fails_that_vector_and_the_run_goes_on(cases: Path) -> None:
    report = run(Raising(), [cases])
    executable = [v for v in VECTORS if not v.rejected]
    assert report.counts()["fail"] == len(executable)
    assert report.counts()["not-applicable"] == len(VECTORS) - len(executable)
    assert report.verdicts[executable[0].id].reason == \
        "the implementation raised ZeroDivisionError: oops"


class Observing:
    """Answers like the oracle, notes the collector's state while it runs and leaves a cycle
    behind per vector (garbage that only the cyclic collector frees)."""

    name = "observing"
    capabilities = frozenset({"executes", "validates"})

    def __init__(self) -> None:
        self.oracle = OracleImplementation()
        self.thresholds: set[tuple[int, int, int]] = set()
        self.frozen: list[int] = []
        self.garbage: list[weakref.ref[Cycle]] = []

    def run(self, vector: Vector) -> Result:
        self.thresholds.add(gc.get_threshold())
        self.frozen.append(gc.get_freeze_count())
        cycle = Cycle()
        cycle.me = cycle
        self.garbage.append(weakref.ref(cycle))
        return self.oracle.run(vector)


class Cycle:
    me: object = None


def test_a_run_collects_in_batches_freezes_survivors_and_puts_everything_back(
        cases: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(collections_policy, "FREEZE_EVERY", 2)
    before = gc.get_threshold()
    assert gc.get_freeze_count() == 0
    impl = Observing()
    report = run(impl, [cases])
    assert not report.failed
    (during,) = impl.thresholds
    assert during == (max(collections_policy.YOUNG_THRESHOLD, before[0]), *before[1:])
    assert impl.frozen[0] == 0 and impl.frozen[-1] > 0  # survivors frozen as the run goes
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0
    gc.collect()
    assert len(impl.garbage) > 2 and all(ref() is None for ref in impl.garbage)


def test_a_process_that_froze_objects_of_its_own_keeps_them(cases: Path) -> None:
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        run(OracleImplementation(), [cases])
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()


def test_the_collector_comes_back_when_a_run_fails(tmp_path: Path) -> None:
    before = gc.get_threshold()
    path = write_vectors(tmp_path / "dup.jsonl", [VECTORS[0], VECTORS[0]])
    with pytest.raises(VectorError):
        run(OracleImplementation(), [path])
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0


def create_raising() -> Raising:
    return Raising()


def test_resolve_names() -> None:
    assert resolve("oracle").name == "oracle"
    assert resolve("mutant:sat_dropped").name == "sat_dropped"
    assert resolve(f"{__name__}:create_raising").name == "raising"
    narrowed = resolve("oracle", capabilities=frozenset({"executes"}))
    assert narrowed.capabilities == frozenset({"executes"})
    with pytest.raises(ImplementationError, match="unknown capabilities"):
        resolve("oracle", capabilities=frozenset({"flies"}))
    with pytest.raises(ImplementationError, match="cannot import no_such_module_x"):
        resolve("no_such_module_x:create")
    with pytest.raises(ImplementationError, match="object is not an implementation"):
        resolve("builtins:object")
    with pytest.raises(ImplementationError, match=r"Vector\(\) raised TypeError"):
        resolve("sm5.vectors.format:Vector")


def test_vkd3d_missing_adapter_is_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sm5.conformance.vkd3d.adapter", None)
    with pytest.raises(Unavailable, match="vkd3d: the vkd3d adapter cannot be loaded"):
        resolve("vkd3d")


def test_sm5_conform_exit_codes_and_results(cases: Path, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "results.json"
    assert main(["conform", "--impl", "oracle", "--vectors", str(cases), "--json",
                 str(out)]) == 0
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["counts"]["pass"] == len(VECTORS)
    assert list(doc["results"]) == sorted(v.id for v in VECTORS)
    assert f"oracle: {len(VECTORS)} vectors: {len(VECTORS)} pass" in capsys.readouterr().out
    assert main(["conform", "--impl", "mutant:atomic_saturates", "--vectors", str(cases)]) == 1
    printed = capsys.readouterr().out
    assert "FAIL imm_atomic_iadd/raw/wraps: 1 value(s) outside the acceptance sets" in printed
    assert "    u0[2]: expected 0x00000003, observed 0xffffffff" in printed
    assert main(["conform", "--impl", "nonsense", "--vectors", str(cases)]) == 2


def test_sm5_mutants_on_the_hand_picked_cases(cases: Path, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "mutants.json"
    assert main(["mutants", "--vectors", str(cases), "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert f"kill rate: {len(MUTANTS)}/{len(MUTANTS)} (100.0%)" in printed
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["mutants"]["dmovc_float_compare"]["killing_vectors"] == [
        "dmovc/cond/negative_zero_is_true"]


def test_a_failed_run_is_a_crash_a_time_out_or_an_error() -> None:
    assert Result.failed("crash", "signal 11") == Result("crash", None, "signal 11")
    assert Result.failed("timeout", "after 30 s") == Result("timeout", None, "after 30 s")
    assert Result.failed("garbled", "no JSON") == Result("error", None, "no JSON")


def test_an_implementations_version_is_written_and_read_back(cases: Path, tmp_path: Path) -> None:
    """A ``version`` the implementation names goes to the results as ``impl_version`` (none
    when it names none) and reaches the report's implementation."""
    from sm5.conformance.run import write_results
    from sm5.reports.inputs import read_results

    plain = run(OracleImplementation(), [cases])
    assert "impl_version" not in plain.to_json()
    named = OracleImplementation()
    named.version = "9.9 (test)"  # type: ignore[attr-defined]
    report = run(named, [cases])
    assert report.to_json()["impl_version"] == "9.9 (test)"
    path = tmp_path / "results.json"
    write_results(path, report)
    assert read_results(path).version == "9.9 (test)"


def test_a_run_over_vectors_already_read_gives_the_same_verdicts(cases: Path) -> None:
    """``vectors`` (the files read once, as the pipeline does) changes nothing but the reading:
    the same selection, shard and verdicts, and a selection matching nothing is still named."""
    from sm5.conformance.run import iter_selected

    read = [v for _, _, v in iter_selected(vector_files([cases]))]
    first = read[0].id
    for shard, select in ((None, ()), (parse_shard("1/2"), ()), (None, (first,))):
        again = run(OracleImplementation(), [cases], shard=shard, select=select, vectors=read)
        fresh = run(OracleImplementation(), [cases], shard=shard, select=select)
        assert again.to_json() == fresh.to_json()
    with pytest.raises(RunError, match="no vector id matches"):
        run(OracleImplementation(), [cases], select=("nothing/*",), vectors=read)
