"""Classic xlwings on Windows desktop Excel: install the add-in and point it at ``udfs.excel``.

``compute-lab addin install`` runs ``xlwings addin install`` (which copies the free xlwings
add-in into Excel's XLSTART folder) and then writes two settings into the user's xlwings
configuration file (``%USERPROFILE%\\.xlwings\\xlwings.conf``), keeping every other line:

- ``UDF MODULES``: ``udfs.excel``, the module whose functions "Import Functions" turns into
  VBA wrappers;
- ``INTERPRETER_WIN``: the Python that has Compute Lab installed (this one).

No xlwings import happens here: the module is plain file handling so it runs (and is tested)
on any platform.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

__all__ = ["UDF_MODULE", "default_config_file", "config_settings", "update_config", "install"]

#: The module classic xlwings imports the Excel functions from.
UDF_MODULE = "udfs.excel"

_LINE = re.compile(r'^\s*"([^"]*)"\s*,\s*"([^"]*)"\s*$')


def default_config_file():
    """Where xlwings reads the user's settings (the same rule as ``xlwings.USER_CONFIG_FILE``)."""
    if sys.platform.startswith("darwin"):
        return (
            Path.home() / "Library" / "Containers" / "com.microsoft.Excel" / "Data" / "xlwings.conf"
        )
    return Path.home() / ".xlwings" / "xlwings.conf"


def config_settings(interpreter=None):
    """The settings Compute Lab needs, as (key, value) pairs in xlwings' spelling."""
    return [
        ("UDF MODULES", UDF_MODULE),
        ("INTERPRETER_WIN", str(interpreter or sys.executable)),
    ]


def update_config(path, settings):
    """Set ``settings`` in an xlwings.conf file, keeping other lines; returns the new text.

    The file holds one ``"KEY","value"`` pair per line; keys compare case-insensitively,
    as xlwings reads them. The new file is written beside the old one and moved over it, so
    a failure never leaves half a configuration. Raises ``OSError`` or
    ``UnicodeDecodeError`` for a file that cannot be read or written.
    """
    from workbook_templates.files import place, temp_beside

    path = Path(path)
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    wanted = {key.lower(): (key, value) for key, value in settings}
    out = []
    for line in lines:
        m = _LINE.match(line)
        if m and m.group(1).lower() in wanted:
            key, value = wanted.pop(m.group(1).lower())
            out.append(f'"{key}","{value}"')
        else:
            out.append(line)
    out.extend(f'"{key}","{value}"' for key, value in wanted.values())
    text = "\n".join(out) + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_beside(path)
    try:
        tmp.write_text(text, encoding="utf-8")
        place(tmp, path, force=True)
    finally:
        tmp.unlink(missing_ok=True)
    return text


# The line `xlwings addin install` prints when the add-in is in place; any other output is a
# failure, whatever its exit code.
INSTALLED_LINE = "Successfully installed the xlwings add-in"
# How much of xlwings' own failure line a refusal quotes: its messages are one sentence.
MAX_XLWINGS_ECHO_CHARS = 200


def xlwings_install_command():
    """The command that installs the xlwings add-in with this Python's xlwings."""
    code = "import sys; from xlwings.cli import main; sys.argv[0] = 'xlwings'; main()"
    return [sys.executable, "-c", code, "addin", "install"]


def _can_install_addin():
    """The add-in installs into desktop Excel on Windows (``COMPUTE_LAB_FORCE_ADDIN`` overrides)."""
    return sys.platform.startswith("win") or bool(os.environ.get("COMPUTE_LAB_FORCE_ADDIN"))


def install(config_file=None, *, config_only=False, dry_run=False, out=print):
    """Install the add-in (Windows) and write the configuration; returns an exit code."""
    from udfs.validation import CommandError

    if config_file is not None and not str(config_file).strip():
        raise CommandError("--config-file is empty; give a path, or leave the flag out")
    config_file = Path(config_file) if config_file else default_config_file()
    command = xlwings_install_command()
    settings = config_settings()
    # The same refusal with --dry-run: a dry run says what the real command would do.
    if not config_only and not _can_install_addin():
        raise CommandError(
            "the classic xlwings add-in needs desktop Excel on Windows; on this system use "
            "--config-only (configuration file only), or the xlwings Server or xlwings Lite "
            "routes (see docs/excel-routes.md)"
        )
    if dry_run:
        if not config_only:
            out("would run: " + " ".join(command[:1] + ["-c", "<xlwings.cli.main>"] + command[3:]))
        for key, value in settings:
            out(f'would set in {config_file}: "{key}","{value}"')
        return 0
    if not config_only:
        result = subprocess.run(command, check=False, capture_output=True, text=True)
        said = (result.stdout + result.stderr).strip()
        # xlwings prints its failures (Excel still running, no permission) and still exits 0:
        # only its success line means the add-in is in place.
        if result.returncode != 0 or INSTALLED_LINE not in said:
            first = next((line.strip() for line in said.splitlines() if line.strip()), "")
            raise CommandError(
                f"`xlwings addin install` failed (exit {result.returncode}"
                + (f": {first[:MAX_XLWINGS_ECHO_CHARS]}" if first else ", no output")
                + "); close Excel and run the command again (docs/windows.md, Troubleshooting)"
            )
        out(said.splitlines()[-1] if said else INSTALLED_LINE)
    try:
        update_config(config_file, settings)
    except UnicodeDecodeError:
        raise CommandError(
            f"--config-file {config_file}: is not a UTF-8 text file (is it an xlwings.conf?)"
        ) from None
    except OSError as err:
        what = f"{err.strerror}: {err.filename}" if err.strerror and err.filename else str(err)
        raise CommandError(f"--config-file {config_file}: cannot be updated ({what})") from None
    out(f"wrote {config_file}: UDF MODULES = {UDF_MODULE}; INTERPRETER_WIN = {sys.executable}")
    out(
        "next: open Excel, xlwings tab > Import Functions, then type "
        "=TRAIN_DAYS(37E9, 14.8E12, 2048, 400) in a cell"
    )
    return 0
