"""Settings an adapter makes for a library it loads in process stay out of other implementations'
subprocesses: ``sm5 pipeline`` runs vkd3d (lavapipe in process: its ICD forced, llvmpipe without
worker threads, Mesa's cache moved), then Wine's D3D11 runners, which inherited all three and ran
the representative subset at 5 programs/s instead of 70 or more."""

from __future__ import annotations

import os

import pytest

from sm5.conformance.process_env import set_in_process, setdefault_in_process, subprocess_environ


def test_a_value_set_for_this_process_does_not_reach_a_subprocess(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SM5_TEST_IN_PROCESS", raising=False)
    set_in_process("SM5_TEST_IN_PROCESS", "0")
    try:
        assert os.environ["SM5_TEST_IN_PROCESS"] == "0"  # this process's libraries see it
        assert "SM5_TEST_IN_PROCESS" not in subprocess_environ()
    finally:
        del os.environ["SM5_TEST_IN_PROCESS"]


def test_a_value_the_user_set_reaches_every_subprocess(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SM5_TEST_USER_SET", "4")
    setdefault_in_process("SM5_TEST_USER_SET", "0")
    assert os.environ["SM5_TEST_USER_SET"] == "4"
    assert subprocess_environ()["SM5_TEST_USER_SET"] == "4"


def test_a_value_changed_after_the_adapter_set_it_reaches_subprocesses(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SM5_TEST_CHANGED", raising=False)
    set_in_process("SM5_TEST_CHANGED", "0")
    monkeypatch.setenv("SM5_TEST_CHANGED", "2")  # someone else's value now
    assert subprocess_environ()["SM5_TEST_CHANGED"] == "2"


def test_the_wine_runner_does_not_inherit_lavapipe_settings() -> None:
    from sm5.conformance.vkd3d import vulkan_runner

    keys = ("VK_ICD_FILENAMES", "VK_DRIVER_FILES", "LP_NUM_THREADS", "MESA_SHADER_CACHE_DIR")
    before = {k: os.environ.get(k) for k in keys}
    try:
        vulkan_runner._prepare_environment(vulkan_runner.Path("/nonexistent/lvp_icd.json"))
        leaked = {k for k in keys if k in subprocess_environ() and before[k] is None}
        assert leaked == set()
    finally:
        for key, value in before.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
