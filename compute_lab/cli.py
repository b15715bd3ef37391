"""The ``compute-lab`` command line: the dispatcher.

Commands of this package: ``estimate`` (:mod:`compute_lab.estimate`, its flags in
:mod:`compute_lab.flags`, its printed figures in :mod:`compute_lab.figures`), ``runs`` and
``accelerators`` (:mod:`compute_lab.tables`). The faces' commands (``templates``, ``report``,
``addin``, ``serve``, ``lite-bundle``) come from the ``COMMANDS`` tables of
``workbook_templates.commands`` and ``addin.commands``, imported downward:
``{"name": (help, configure_parser(parser), run(args) -> int)}``.

Bad input exits with status 2 and one line naming the flag and the rule; no traceback
(set ``COMPUTE_LAB_DEBUG=1`` to see one for an internal error), no Python warning. Flags
are never abbreviated, never given twice (nor under two names), and a mistyped flag gets a
"did you mean" suggestion. A figure that would leave a float's range (infinity, NaN, a
denormal) is refused, naming the flags that drove it there; ``estimate`` also bounds the
values no plan has (``MAX_COUNT``...: docs/command-line.md, "Bounds"), writes a figure of 1e15
or more in scientific notation and a fraction of a day with two significant digits (never a
number of hundreds of digits, never "0.0 days"). :class:`CommandError` lives in
:mod:`udfs.validation` (the core): the faces raise it without importing the command line.

``estimate`` turns its flags (or a preset, or the DeepSeek-V3-like example plan) into the
planner's inputs and resolves them with :func:`udfs.plan.resolve`, the one rule table for
inputs left out: each default applied is a ``note:`` line (``"notes"`` in ``--json``), and the
total equals the planner's and the hand-off's for the same inputs. P10-P90 ranges come from
:func:`udfs.ranges.estimate_ranges` with resolve's spreads. ``runs`` prints the default MFU's
grouped-validation table (:func:`udfs.calibration.grouped_validation`: each run predicted with
its whole organisation left out), with the leave-one-out figures below it. See
``docs/command-line.md``.
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import sys
import warnings

import numpy as np

from udfs import __version__
from udfs.validation import CommandError, InputError, console_line

from .estimate import run_estimate
from .examples import EPILOG_START, epilog
from .flags import configure_estimate, describe_error, flag_namer
from .numbers import parse_number
from .tables import configure_runs, configure_table, run_accelerators, run_runs

__all__ = ["main", "parse_number", "CommandError"]

PROG = "compute-lab"

# ---------------------------------------------------------------------------------------------
# main
# ---------------------------------------------------------------------------------------------

_BUILTIN = {
    "estimate": (
        "estimate one training run (default: the DeepSeek-V3-like example plan)",
        configure_estimate,
        run_estimate,
    ),
    "runs": (
        "the default MFU checked run by run: disclosed accelerator-hours beside the predicted",
        configure_runs,
        run_runs,
    ),
    "accelerators": ("the accelerator catalogue", configure_table, run_accelerators),
}


def _commands():
    """Every command: name -> (help, configure(parser), run(args) -> exit status).

    The faces' commands come from their own tables, imported downward; those modules are
    light, and import openpyxl, xlwings or the server only inside a command's functions.
    """
    from addin.commands import COMMANDS as ADDIN_COMMANDS
    from workbook_templates.commands import COMMANDS as WORKBOOK_COMMANDS

    return {**_BUILTIN, **WORKBOOK_COMMANDS, **ADDIN_COMMANDS}


#: Actions that may legitimately be given more than once (none of ours, but kept possible).
_REPEATABLE = (
    argparse._AppendAction,
    argparse._AppendConstAction,
    argparse._CountAction,
    argparse._HelpAction,
    argparse._VersionAction,
)
_ONCE = {}


def _once(cls):
    """A subclass of the action class ``cls`` that refuses a second value for its setting:
    the same flag twice, or two flags of one setting (``--tokens`` and ``--training-tokens``)."""
    if cls not in _ONCE:

        class Once(cls):
            def __call__(self, parser, namespace, values, option_string=None):
                if self.nargs is None and isinstance(values, list):  # argparse's --flag=--
                    parser.error(f"argument {option_string}: expected one value, not '--'")
                given = parser.given_flags
                first = given.get(self.dest)
                if first is not None:
                    if first == option_string:
                        parser.error(f"{option_string} is given twice; give it once")
                    parser.error(
                        f"{option_string} and {first} set the same thing; give one of them"
                    )
                given[self.dest] = option_string
                super().__call__(parser, namespace, values, option_string)

        Once.__name__ = Once.__qualname__ = f"Once{cls.__name__}"
        _ONCE[cls] = Once
    return _ONCE[cls]


class _HelpFormatter(argparse.HelpFormatter):
    """``--help`` as argparse writes it, but the examples kept line by line (not re-wrapped)
    and an optional sub-command shown optional in the usage line (``[token ...]``)."""

    def _fill_text(self, text, width, indent):
        if text.startswith(EPILOG_START):
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)

    def _format_args(self, action, default_metavar):
        text = super()._format_args(action, default_metavar)
        optional = not (action.required or getattr(action, "shown_required", False))
        if action.nargs == argparse.PARSER and optional:
            return f"[{text}]"
        return text


class _Parser(argparse.ArgumentParser):
    """One-line errors (exit 2), no abbreviated flags, no flag given twice."""

    def __init__(self, *args, **kwargs):
        kwargs["allow_abbrev"] = False  # --tok is not --tokens
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)
        self.given_flags = {}
        # A value such as -1e-315 or -2.5k is a (negative) value, not a flag: argparse's own
        # pattern knows only -1 and -1.5, and would answer "expected one argument".
        self._negative_number_matcher = re.compile(
            r"^-(\d[\d,_]*(\.\d*)?|\.\d+)(e[-+]?\d+)?\s*[kmbgtp%]?$", re.I | re.ASCII
        )

    def error(self, message):  # one line, exit 2
        m = re.fullmatch(r"argument (\S+): ignored explicit argument (.*)", message, re.S)
        if m:  # argparse's words for --json=1
            flag = m.group(1).split("/")[0]
            message = (
                f"{flag} takes no value (got {flag}={m.group(2).strip(chr(39))}): give {flag} alone"
            )
        self.exit(2, console_line(f"{self.prog}: error: {message}") + "\n")

    def parse_known_args(self, args=None, namespace=None):
        self.given_flags = {}
        return super().parse_known_args(args, namespace)

    def _add_action(self, action):
        if action.option_strings and not isinstance(action, _REPEATABLE):
            action.__class__ = _once(type(action))
        return super()._add_action(action)

    def add_argument_group(self, *args, **kwargs):
        """A titled group of ``--help`` whose flags are refused twice like the others."""
        group = super().add_argument_group(*args, **kwargs)
        add = group._add_action

        def _add_action(action):  # (the parser's own groups reach here from its _add_action)
            once = type(action) in _ONCE.values()
            if action.option_strings and not isinstance(action, _REPEATABLE) and not once:
                action.__class__ = _once(type(action))
            return add(action)

        group._add_action = _add_action
        return group

    def known_flags(self):
        """Every long flag -> the flag to suggest for it (a hidden alias -> its listed name)."""
        listed = {}
        for action in self._actions:
            if action.help is not argparse.SUPPRESS and action.option_strings:
                listed.setdefault(action.dest, action.option_strings[-1])
        return {
            flag: flag if action.help is not argparse.SUPPRESS else listed.get(action.dest, flag)
            for action in self._actions
            for flag in action.option_strings
            if flag.startswith("--")
        }


def build_parser(command=None, faces=True):
    """The parser, with the flags of ``command`` (all commands' flags when None).

    Building only the chosen command's flags keeps start-up light: the workbook and server
    commands import openpyxl, pandas or xlwings only when they are the one being run. With
    ``faces=False`` only this package's own commands (``estimate``, ``runs``,
    ``accelerators``) are there: the faces' tables are not imported at all
    (``addin.commands`` brings the server route's modules and ``ssl``, ~60 ms of a start).
    Returns ``(parser, handlers)``; ``parser.commands`` maps each name to its subparser.
    """
    parser = _Parser(
        prog=PROG,
        description="Plan large-model training runs: time, cost, energy.",
        epilog=epilog(""),
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(
        dest="command", metavar="COMMAND", parser_class=_Parser, required=False
    )
    sub.shown_required = True  # no command is the help and exit 2: not optional
    handlers = {}
    for name, (help_text, configure, run) in (_commands() if faces else _BUILTIN).items():
        p = sub.add_parser(name, help=help_text, description=help_text, epilog=epilog(name))
        if command is None or name == command:
            configure(p)
            _nested_epilogs(p, name)
        handlers[name] = run
    parser.commands = sub.choices
    return parser, handlers


def _nested_epilogs(parser, name):
    """The examples of ``name``'s own sub-commands (``addin install``, ``serve token create``)
    at the end of their ``--help`` too, with this command line's help formatter."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child_name, child in action.choices.items():
                child.formatter_class = _HelpFormatter
                child.epilog = child.epilog or epilog(f"{name} {child_name}")
                _nested_epilogs(child, f"{name} {child_name}")


def _suggest(typed, flags):
    """``; did you mean --tokens?`` for a mistyped flag (``flags``: see ``known_flags``)."""
    name = typed.split("=", 1)[0]
    starts = sorted({flags[f] for f in flags if f.startswith(name)})
    if not 0 < len(starts) <= 3:
        starts = [flags[f] for f in difflib.get_close_matches(name, list(flags), n=1)]
    return f"; did you mean {' or '.join(starts)}?" if starts else ""


def _unknown(chain, extras):
    """One line for arguments no parser took: a mistyped flag or a stray value.

    ``chain`` is the parsers that took part (see ``_subparser_chain``); the message is in the
    name of the innermost, and suggests the flags of all of them.
    """
    prog = chain[-1].prog
    flags = [a for a in extras if a.startswith("--") or (a.startswith("-") and a[1:2].isalpha())]
    if flags:
        typed = flags[0].split("=", 1)[0]
        known = {f: g for p in chain for f, g in p.known_flags().items()}
        return f"{prog}: error: unknown flag {typed}{_suggest(typed, known)}"
    return f"{prog}: error: unexpected argument {extras[0]!r} (flags take one value each)"


def _subparser_chain(parser, args):
    """The parsers that took part: the top one, the command's, a nested action's."""
    chain = [parser]
    command = getattr(args, "command", None)
    if command is not None:
        sub = parser.commands[command]
        chain.append(sub)
        for action in sub._actions:
            if isinstance(action, argparse._SubParsersAction):
                nested = getattr(args, action.dest, None)
                if nested in action.choices:
                    chain.append(action.choices[nested])
    return chain


def main(argv=None):
    """Run the command line; returns the exit status (0, 1 internal error, 2 bad input)."""
    try:
        return _main(argv)
    except KeyboardInterrupt:  # Ctrl-C while the parser and the commands load
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130


def _main(argv):
    argv = sys.argv[1:] if argv is None else list(argv)
    command = next((a for a in argv if not a.startswith("-")), None)
    alone = bool(argv) and argv[0] in _BUILTIN  # `estimate ...`: no face's table imported
    known = alone or command in _commands()
    parser, handlers = build_parser(command if known else None, faces=not alone)
    if command is not None and command not in handlers and not argv[0].startswith("-"):
        close = difflib.get_close_matches(command, list(handlers), n=1)
        hint = f"; did you mean {close[0]}?" if close else f" (commands: {', '.join(handlers)})"
        print(console_line(f"{PROG}: error: unknown command {command!r}{hint}"), file=sys.stderr)
        return 2
    try:
        args, extras = parser.parse_known_args(argv)
    except SystemExit as exc:  # --help, --version, or a one-line usage error already printed
        return exc.code if isinstance(exc.code, int) else 2
    if extras:
        print(console_line(_unknown(_subparser_chain(parser, args), extras)), file=sys.stderr)
        return 2
    if args.command is None:
        parser.print_help()
        return 2
    args.engine_flags = {}
    args.parse_number = parse_number  # the faces read --own-runs files with it (passed down)
    for p in _subparser_chain(parser, args):
        args.engine_flags.update(p.given_flags)
    prog = f"{PROG} {args.command}"
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")  # never a Python warning in front of a user
            return handlers[args.command](args) or 0
    except InputError as err:
        print(
            console_line(f"{prog}: error: {describe_error(err, flag_namer(args))}"), file=sys.stderr
        )
    except CommandError as err:
        print(console_line(f"{prog}: error: {err}"), file=sys.stderr)
    except BrokenPipeError:  # the reader went away (`| head`): stop quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except KeyboardInterrupt as err:  # its text, if any: what the run left (files written)
        print(f"{prog}: interrupted" + (f"; {err}" if str(err) else ""), file=sys.stderr)
        return 130
    except Exception as err:  # never a traceback in front of a user
        if os.environ.get("COMPUTE_LAB_DEBUG"):
            raise
        print(
            console_line(f"{prog}: internal error: {type(err).__name__}: {err} ")
            + "(set COMPUTE_LAB_DEBUG=1 for details)",
            file=sys.stderr,
        )
        return 1
    return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
