"""Every `harness` command the README shows parses as written: its subcommand, flags and choices exist (a renamed
or removed flag fails here, not in a newcomer's terminal). Running them is the new-user trial's job; the two
quick-start commands run in CI itself.

Layer: tests (docs). Knows the click command tree and README.md's ```bash blocks only.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
from collections.abc import Iterator
from pathlib import Path

import click
import pytest

from harness_core.cli import cli

_ROOT = Path(__file__).resolve().parent.parent
_BLOCK = re.compile(r"```bash\n(.*?)```", re.DOTALL)


def _commands() -> Iterator[str]:
    for block in _BLOCK.findall((_ROOT / "README.md").read_text()):
        for line in block.splitlines():
            for part in re.split(r";\s*", line.split("  #", 1)[0].strip()):
                words = part.strip()
                if words.startswith((".venv/bin/harness ", "harness ")):
                    yield words


COMMANDS = sorted(set(_commands()))


def test_the_readme_shows_harness_commands() -> None:
    assert len(COMMANDS) >= 15


@pytest.mark.parametrize("line", COMMANDS)
def test_a_readme_command_parses_as_written(line: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "my-repo").mkdir()  # the README's example project
    (tmp_path / "examples").symlink_to(_ROOT / "examples")
    monkeypatch.chdir(tmp_path)
    args = shlex.split(line)[1:]
    for i, word in enumerate(args):  # the shell's part: a redirection or a pipe
        if word in (">", ">>", "<", "|", "2>", "&&"):
            args = args[:i]
            break
    for i, word in enumerate(args):  # placeholders that must name a file: give them one
        if re.fullmatch(r"[A-Z_]+(\.[a-z.]+)?", word) and "." in word:
            (tmp_path / word).write_text("")
            args[i] = str(tmp_path / word)
    command: click.Command | None = cli
    name, parent = "harness", click.Context(cli, info_name="harness")
    while isinstance(command, click.Group) and args and not args[0].startswith("-"):
        name = args.pop(0)
        command = command.get_command(parent, name)
        assert command is not None, f"`{line}`: no command {name!r}"
        if isinstance(command, click.Group):
            parent = click.Context(command, info_name=name, parent=parent)
    assert command is not None
    if "--otel" in args and importlib.util.find_spec("harness_otel") is None:  # its check wants the plugin installed
        assert any("--otel" in param.opts for param in command.params), f"`{line}`: no --otel"
        args.remove("--otel")  # the rest parses here (setup.sh installs the plugin: there it parses whole)
    with command.make_context(name, args, parent=parent) as context:  # raises click's usage error as typed
        assert context.command is command
    assert os.getcwd() == str(tmp_path)
