"""The xlwings Lite bundle: one ``main.py`` and a ``requirements.txt`` built from ``udfs/``.

xlwings Lite runs Python (Pyodide) inside Excel from code pasted into its editor. The bundle
carries :mod:`udfs.excel`, every ``udfs`` module it imports (found by reading their
``from . import`` lines) and the catalogue's data files, each as one readable string literal
whose lines are the file's own lines. At start-up ``main.py`` writes them to a temporary
``udfs`` package, imports :mod:`udfs.excel` with Lite's own ``@func`` decorators, and
re-exports the functions, which is how Lite finds them. Nothing is copied by hand: regenerate
with ``compute-lab lite-bundle`` (into ``./xlwings-lite``, or ``--out DIR``) after changing
``udfs``.

To keep the paste small and readable, the Python sources travel without their comments and
without the docstrings nobody reads at run time (the Excel functions' docstrings, which Lite
shows as their help, stay), and a data line longer than ``WRAP_CHARS`` is wrapped as a TOML
multi-line string that reads back to the same value (checked on every build). No line of
``main.py`` is over ``MAX_LINE_CHARS``.
"""

from __future__ import annotations

import ast
import contextlib
import io
import re
import tokenize
import tomllib
from importlib import resources
from pathlib import Path

__all__ = [
    "MAX_LINE_CHARS",
    "WRAP_CHARS",
    "bundle_files",
    "lean_source",
    "main_py",
    "requirements_txt",
    "source_files",
    "wrap_toml",
    "write_bundle",
]

#: Pyodide packages the bundle imports (xlwings itself is provided by xlwings Lite).
REQUIREMENTS = ("numpy", "pandas")

#: The width data lines are wrapped to: the project's own line length (ruff's), so the pasted
#: file reads like the source.
WRAP_CHARS = 100

#: The longest line ``main.py`` may hold (a web address longer than ``WRAP_CHARS`` keeps its
#: own line): short enough for the Lite editor to show a line whole, where a whole file on one
#: line made the paste unreadable.
MAX_LINE_CHARS = 200

#: The module whose public functions' docstrings are kept: Lite shows them as the help.
_HELP_MODULE = "udfs/excel.py"


def _package():
    return resources.files("udfs")


def _local_imports(source):
    """``udfs`` submodules a module imports with relative imports."""
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                names.add(node.module.split(".")[0])
            else:
                names.update(alias.name for alias in node.names)
    return names


def source_files():
    """``{relative path: text}`` of every file the Excel functions need, verbatim."""
    package = _package()
    wanted, seen = ["excel"], set()
    while wanted:
        name = wanted.pop()
        if name in seen:
            continue
        seen.add(name)
        wanted.extend(_local_imports(package.joinpath(f"{name}.py").read_text(encoding="utf-8")))
    files = {"udfs/__init__.py": package.joinpath("__init__.py").read_text(encoding="utf-8")}
    for name in sorted(seen):
        files[f"udfs/{name}.py"] = package.joinpath(f"{name}.py").read_text(encoding="utf-8")
    data = package.joinpath("data")
    for entry in sorted(data.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".toml"):
            files[f"udfs/data/{entry.name}"] = entry.read_text(encoding="utf-8")
    return files


def bundle_files():
    """``{relative path: text}`` as the bundle carries them, in a stable order: Python lean
    (:func:`lean_source`), TOML wrapped (:func:`wrap_toml`)."""
    out = {}
    for relative, text in source_files().items():
        if relative.endswith(".py"):
            out[relative] = lean_source(text, keep_help=relative == _HELP_MODULE)
        else:
            out[relative] = wrap_toml(text)
    return out


def _public_names(tree):
    """The names in a module's literal ``__all__`` list."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "__all__":
            return set(ast.literal_eval(node.value))
    return set()


def _docstrings(tree, text, keep):
    """``(first line, last line, indentation, statements in the owner's body)`` of each
    docstring that has its lines to itself, but those of the functions named in ``keep``."""
    found = []
    lines = text.splitlines()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        if getattr(node, "name", None) in keep:
            continue
        first = node.body[0]
        if (
            isinstance(first, ast.Expr)
            and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)
            and not lines[first.lineno - 1][: first.col_offset].strip()
            and not lines[first.end_lineno - 1][first.end_col_offset :].strip()
        ):
            found.append((first.lineno, first.end_lineno, first.col_offset, len(node.body)))
    return found


def lean_source(text, *, keep_help=False):
    """Python source without comments, docstrings and runs of blank lines, laid out as written.

    Every other line keeps its text and indentation, so the code reads as it does in ``udfs``
    and the AST is the original's with the docstrings gone (a body that was only a docstring
    becomes ``pass``). With ``keep_help`` the docstrings of the module's public functions (its
    ``__all__``) stay: Lite shows them as the functions' help.
    """
    tree = ast.parse(text)
    keep = _public_names(tree) if keep_help else set()
    lines = text.splitlines()
    drop, replace, inside_strings = set(), {}, set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant | ast.JoinedStr) and node.end_lineno > node.lineno:
            inside_strings.update(range(node.lineno + 1, node.end_lineno + 1))
    for first, last, col, body_len in _docstrings(tree, text, keep):
        drop.update(range(first, last + 1))
        if body_len == 1:
            replace[first] = " " * col + "pass"
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.COMMENT:
            row, col = tok.start
            before = lines[row - 1][:col]
            if before.strip():
                lines[row - 1] = before.rstrip()
            else:
                drop.add(row)
    out, blank = [], True
    for number, line in enumerate(lines, start=1):
        if number in replace:
            out.append(replace[number])
            blank = False
        elif number in drop:
            continue
        elif not line.strip() and number not in inside_strings:
            if not blank:
                out.append("")
            blank = True
        else:
            out.append(line)
            blank = False
    while out and not out[-1]:
        out.pop()
    return "\n".join(out) + "\n"


_TOML_STRING = re.compile(r'^(\s*[A-Za-z0-9_.-]+\s*=\s*)"((?:[^"\\]|\\.)*)"\s*$')


def wrap_toml(text, width=WRAP_CHARS):
    """TOML text whose ``key = "a long string"`` lines over ``width`` characters are written as
    multi-line strings broken at spaces (a line-ending backslash joins them back); raises
    ``ValueError`` if the result does not read back to the same data, or a line is still over
    ``MAX_LINE_CHARS``."""
    out = []
    for line in text.splitlines():
        m = _TOML_STRING.match(line)
        if len(line) <= width or not m:
            out.append(line)
            continue
        out.append(m.group(1) + '"""\\')
        row = ""
        for word in re.split(r"(?<= )(?=\S)", m.group(2)):
            if row and len(row) + len(word) + 1 > width:
                out.append(row + "\\")
                row = ""
            row += word
        out.append(row + '"""')
    wrapped = "\n".join(out) + "\n"
    if tomllib.loads(wrapped) != tomllib.loads(text):
        raise ValueError("wrapping changed the TOML data")
    if any(len(line) > MAX_LINE_CHARS for line in out):
        raise ValueError(f"a TOML line cannot be wrapped to {MAX_LINE_CHARS} characters")
    return wrapped


def _literal(text):
    """A Python literal for ``text`` whose lines are ``text``'s own lines."""
    if "'''" not in text and not text.endswith("\\"):
        return "r'''" + text + "'''"
    body = "".join(f"    {line!r}\n" for line in text.splitlines(keepends=True))
    return "(\n" + body + ")"


_HEADER = '''\
"""Compute Lab's Excel functions for xlwings Lite: =TRAIN_DAYS(...), =TRAIN_PLAN(...) and more.

Generated by `compute-lab lite-bundle` from the udfs package (version {version}); do not edit:
regenerate instead. Paste this whole file into the xlwings Lite editor's main.py tab and
requirements.txt into its requirements.txt tab. The functions and their help are those of
udfs/excel.py; see docs/excel-functions.md in the project for the formula reference.

Below: the files of the udfs package (Python without comments and internal docstrings; the
data as in udfs/data), then the few lines that write them to a temporary folder and import the
Excel functions from there.
"""

import os
import sys
import tempfile

_FILES = {{}}
'''

_FOOTER = '''

def _install_udfs():
    """Write the udfs package to a temporary directory and put it first on sys.path."""
    root = tempfile.mkdtemp(prefix="compute_lab_")
    for relative, text in _FILES.items():
        path = os.path.join(root, *relative.split("/"))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    for name in [m for m in sys.modules if m == "udfs" or m.startswith("udfs.")]:
        del sys.modules[name]
    sys.path.insert(0, root)
    return root


UDFS_DIR = _install_udfs()

from udfs.excel import *  # noqa: E402, F401, F403  (the Excel functions, for Lite to find)
'''


def main_py():
    """The text of the bundle's ``main.py``."""
    from udfs import __version__

    parts = [_HEADER.format(version=__version__)]
    for relative, text in bundle_files().items():
        parts.append(f"\n# {relative}\n_FILES[{relative!r}] = {_literal(text)}\n")
    parts.append(_FOOTER)
    return "".join(parts)


def requirements_txt():
    """The text of the bundle's ``requirements.txt``."""
    # Package names only: every line goes to micropip as it stands (no comments, no options).
    return "\n".join(REQUIREMENTS) + "\n"


def write_bundle(out_dir, *, force=False):
    """Write ``main.py`` and ``requirements.txt`` into ``out_dir``; returns their paths.

    Each file is written beside its target and moved into place, so a reader never sees half
    a file; without ``force`` an existing file (even one that appears meanwhile) is left
    alone. Every problem is a :class:`udfs.validation.CommandError` naming ``--out``.
    """
    from udfs.validation import CommandError, check_name
    from workbook_templates.files import place, temp_beside

    if not str(out_dir).strip():
        raise CommandError("--out is empty; give a directory, e.g. --out lite")
    check_name(out_dir, "--out")
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise CommandError(f"--out {out}: is a file, not a directory")
    targets = {out / "main.py": main_py(), out / "requirements.txt": requirements_txt()}
    for path in targets:
        if path.is_dir() or (path.is_symlink() and not path.exists()):
            raise CommandError(f"--out {out}: {path.name} there is not a file; remove it first")
    existing = [str(p) for p in targets if p.exists()]
    if existing and not force:
        verb = "already exists" if len(existing) == 1 else "already exist"
        raise CommandError(f"{' and '.join(existing)} {verb}; use --force to overwrite")
    temps, made = [], _missing_folders(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
        for path, text in targets.items():
            tmp = temp_beside(path)
            temps.append(tmp)
            tmp.write_text(text, encoding="utf-8")
        for tmp, path in zip(temps, targets, strict=True):
            place(tmp, path, force)
    except OSError as err:
        for tmp in temps:
            tmp.unlink(missing_ok=True)
        for folder in made:  # innermost first: a failed run leaves no folder behind
            with contextlib.suppress(OSError):
                folder.rmdir()
        what = f"{err.strerror}: {err.filename}" if err.filename else str(err)
        raise CommandError(f"--out {out}: cannot write the bundle ({what})") from None
    finally:
        for tmp in temps:
            tmp.unlink(missing_ok=True)
    return list(targets)


def _missing_folders(out):
    """The folders ``out.mkdir(parents=True)`` would create, innermost first."""
    missing = []
    p = Path(out)
    while not p.exists() and not p.is_symlink() and p != p.parent:
        missing.append(p)
        p = p.parent
    return missing
