"""Writing output files without losing any: a temporary file beside the target, then a move.

:func:`temp_beside` makes the temporary file in the target's folder (so the move is a rename
on one file system) with ordinary permissions; :func:`place` moves it into place atomically
and, unless forced, never over an existing file, even one that appeared a moment ago.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from udfs.cli import CommandError

__all__ = ["temp_beside", "place"]


def temp_beside(target):
    """A new, empty temporary file in ``target``'s folder, readable as the umask allows."""
    target = Path(target)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    os.close(fd)
    mask = os.umask(0o022)
    os.umask(mask)
    os.chmod(tmp, 0o666 & ~mask)  # mkstemp makes 0600; these files are meant to be shared
    return Path(tmp)


def place(tmp, target, force):
    """Move ``tmp`` to ``target``: atomically, and without ``force`` never over a file.

    Raises :class:`udfs.cli.CommandError` (and removes ``tmp``) when ``target`` exists.
    """
    tmp, target = Path(tmp), Path(target)
    if force:
        os.replace(tmp, target)
        return
    exists = CommandError(f"{target} already exists (use --force to overwrite)")
    try:
        os.link(tmp, target)  # fails if target exists, even if it appeared just now
    except FileExistsError:
        tmp.unlink()
        raise exists from None
    except OSError:  # a file system without hard links
        if target.exists():
            tmp.unlink()
            raise exists from None
        os.replace(tmp, target)
        return
    tmp.unlink()
