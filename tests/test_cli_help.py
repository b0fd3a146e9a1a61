"""Every subcommand's ``--help`` renders as plain text: no doubled percent signs, no
reStructuredText markup, and every option says what it does."""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator

import pytest

from sm5.cli import build_parser, main


def commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
             ) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from commands(child, (*path, name))


COMMANDS = dict(commands(build_parser()))


def test_every_command_is_listed() -> None:
    names = {" ".join(path) for path in COMMANDS}
    for name in ("", "conform", "mutants", "requests", "verify", "vectors generate",
                 "vectors check", "pipeline", "dxbc", "report", "prove"):
        assert name in names


@pytest.mark.parametrize("path", sorted(COMMANDS), ids=lambda p: " ".join(p) or "sm5")
def test_help_renders_cleanly(path: tuple[str, ...], capsys: pytest.CaptureFixture[str]
                              ) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main([*path, "--help"])
    assert exit_info.value.code == 0
    text = capsys.readouterr().out
    assert text.startswith(f"usage: sm5 {' '.join(path)}".rstrip())
    assert "%%" not in text
    assert "``" not in text
    assert not re.search(r":(class|func|mod):`", text)
    parser = COMMANDS[path]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) or action.help == argparse.SUPPRESS:
            continue
        assert action.help, f"sm5 {' '.join(path)}: {action.option_strings or action.dest} " \
            "has no help"
