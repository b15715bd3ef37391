"""Every command's ``--help`` ends with examples a user can type and the docs page; the
estimate's flags are grouped as docs/command-line.md's three tables; a usage line shows what
is optional as optional."""

from __future__ import annotations

import argparse
import re
import shlex
from pathlib import Path

import pytest

from compute_lab import cli
from compute_lab.examples import EXAMPLES
from compute_lab.flags import FLAG_GROUPS

ROOT = Path(__file__).resolve().parent.parent


def _parsers(parser, name=""):
    """(command name, parser) of the command line and every sub-command, nested ones too."""
    yield name, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child, sub in action.choices.items():
                yield from _parsers(sub, f"{name} {child}".strip())


def _every_parser():
    parser, _ = cli.build_parser()
    return dict(_parsers(parser))


def _help(capsys, name):
    """What ``compute-lab NAME --help`` prints, through the command line's own entry point."""
    assert cli.main([*name.split(), "--help"]) == 0
    return capsys.readouterr().out


def test_every_command_has_examples_and_a_docs_page():
    assert set(_every_parser()) == set(EXAMPLES)  # a new command needs its examples


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_every_help_ends_with_two_or_three_examples_and_the_docs_page(capsys, name):
    text = _help(capsys, name).rstrip("\n")
    tail = text.split("\nexamples:\n", 1)
    assert len(tail) == 2, text
    *examples, blank, docs = tail[1].splitlines()
    assert 2 <= len(examples) <= 3 and blank == "", tail[1]
    assert all(e.startswith("  ") and "compute-lab " in e for e in examples), examples
    assert docs.startswith("docs: docs/") or docs.startswith("docs: README.md"), docs
    for page in re.findall(r"(?:docs/)?[\w-]+\.md", docs):
        assert (ROOT / page).is_file(), page


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_every_example_is_a_command_line_the_parser_takes(name):
    for example in EXAMPLES[name][0]:
        parser, _ = cli.build_parser()  # a parser per command line, as each run has
        argv = shlex.split(example)
        while "=" in argv[0]:  # an environment variable set for the command
            argv.pop(0)
        assert argv[0] == "compute-lab", example
        assert argv[1 : 1 + len(name.split())] == name.split(), (name, example)
        args, extras = parser.parse_known_args(argv[1:])
        assert extras == [], example
        assert args.command == argv[1]


def test_optional_sub_commands_are_shown_optional_in_the_usage_line(capsys):
    usage = " ".join(_help(capsys, "serve").split("\n\n", 1)[0].split())
    assert usage.endswith("[--check] [--make-cert] [token ...]"), usage
    assert _help(capsys, "").startswith("usage: compute-lab [-h] [--version] COMMAND ...\n")
    assert cli.main([]) == 2  # no command: the help, and exit 2 (a command is needed)
    capsys.readouterr()
    for name, parser in _every_parser().items():
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction) and name:
                shown = f"[{action.metavar} ...]" if not action.required else action.metavar
                assert shown in " ".join(parser.format_usage().split()), name


def _docs_tables():
    """docs/command-line.md's estimate flag tables: title -> the long flags of each row (a
    row's first cell, and an alias its meaning names), in order."""
    text = (ROOT / "docs" / "command-line.md").read_text(encoding="utf-8")
    section = text.split("### Flags", 1)[1].split("\n### ", 1)[0]
    tables = {}
    for title, body in re.findall(r"^([^\n|]+):\n\n((?:\|[^\n]*\n)+)", section, re.M):
        flags = []
        for row in body.splitlines()[2:]:
            first, meaning = row.split(" | ", 1)
            flags += re.findall(r"`(--[\w-]+)", first)
            flags += re.findall(r"alias `(--[\w-]+)", meaning)
        tables[title] = flags
    return tables


def test_estimate_help_groups_its_flags_as_the_docs_tables(capsys):
    tables = _docs_tables()
    assert list(tables) == list(FLAG_GROUPS) == ["Model and cluster", "Throughput",
                                                 "Cost, energy, memory"]  # fmt: skip
    parser = _every_parser()["estimate"]
    groups = {g.title: g for g in parser._action_groups}
    for title, flags in tables.items():
        shown = [f for a in groups[title]._group_actions for f in a.option_strings]
        assert shown == flags, title
    text = _help(capsys, "estimate")
    positions = [text.index(f"\n{title}:\n") for title in tables]
    assert positions == sorted(positions)  # in the docs' order
    grouped = {f for flags in tables.values() for f in flags}
    every = {f for a in parser._actions for f in a.option_strings if f.startswith("--")}
    assert every - grouped == {"--help", "--json"}  # --json: a general option, as in the docs


def test_a_grouped_flag_is_still_refused_twice(capsys):
    assert cli.main(["estimate", "--mfu", "0.3", "--mfu", "0.4"]) == 2
    assert "--mfu is given twice" in capsys.readouterr().err
