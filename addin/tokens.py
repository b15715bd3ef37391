"""Sign-in tokens for the team server: ``compute-lab serve token create|revoke|list``.

A token is ``cl_`` followed by 43 URL-safe characters (32 random bytes from :mod:`secrets`). It
is printed once, when created, and only its SHA-256 is stored: 256 random bits need no slow
password hash, and a stolen token file gives nobody a working token. The file is JSON::

    {"version": 1, "tokens": [{"name": "alice", "sha256": "<hex>", "role": "user",
                               "created": "2026-12-01T21:00:00Z"}, ...]}

It must be a regular file owned by the user running the server and neither readable nor
writable by group or others (mode 600), in a folder that group and others cannot write to (they
could replace the file), or nothing reads it: :func:`load` raises :class:`TokenFileError` with
one line naming the file (or folder) and the rule. The server re-reads the file when its
modification time changes, so ``token revoke`` takes effect at the next request in every
worker, without a restart.

``token create`` and ``token revoke`` change the file under an exclusive lock on its folder
and on ``<file>.lock`` beside it (``flock``; waiting at most :data:`LOCK_WAIT_SECONDS`), so two
commands at once never lose each other's change: each reads the file, writes the new content to a
temporary file, renames it over the old one (readers see the old file or the new one, never
half of one) and flushes the folder (the rename survives a crash of the machine), re-reads
it and confirms the change is there before it says it is done.

Last use is kept beside it, one empty file per token name in ``<file>.used/``, whose
modification time is touched at most every :data:`LAST_USE_RESOLUTION_SECONDS` per worker
(``os.utime`` is atomic, so several worker processes never lose a write).

Roles: ``user`` may call the functions and scripts; ``admin`` may also read ``/metrics``. Token
management is not exposed over HTTP at all: it is this command, on the server's machine.
Standard library only.
"""

from __future__ import annotations

import datetime as dt
import errno
import glob
import hashlib
import json
import os
import re
import secrets
import stat
import time
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: msvcrt's byte-range lock instead
    fcntl = None

__all__ = [
    "LAST_USE_RESOLUTION_SECONDS",
    "LOCK_WAIT_SECONDS",
    "MAX_TOKENS",
    "ROLES",
    "TOKEN_PREFIX",
    "TokenFileError",
    "TokenStore",
    "create",
    "default_path",
    "digest",
    "list_tokens",
    "load",
    "revoke",
]

#: Every token starts with this, so a leaked one is recognisable (and greppable) as ours.
TOKEN_PREFIX = "cl_"
#: Token names: letters, digits, ``.``, ``_``, ``-``; 1 to 64 characters (they name files).
NAME_RULE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
#: Roles a token may have.
ROLES = ("user", "admin")
#: Tokens a file may hold (a bound on what the server reads per reload).
MAX_TOKENS = 10_000
#: Bytes a token file may take.
MAX_FILE_BYTES = 4 * 2**20
#: Seconds between two updates of a token's last use by one worker.
LAST_USE_RESOLUTION_SECONDS = 60
#: Seconds ``token create`` / ``token revoke`` wait for another one's lock on the token file
#: before giving up with one line. An update holds the lock for milliseconds (a file of at most
#: MAX_FILE_BYTES read, written and re-read); 10 s covers a busy disk, and a lock held longer
#: belongs to a stuck process, which the message names.
LOCK_WAIT_SECONDS = 10.0
_TOKEN_RULE = re.compile(r"cl_[A-Za-z0-9_-]{43}")
_HEX = re.compile(r"[0-9a-f]{64}")


class TokenFileError(Exception):
    """The token file cannot be used; the message is one line naming the file and the rule."""


def default_path():
    """``$COMPUTE_LAB_TOKEN_FILE``, else ``$XDG_CONFIG_HOME/compute-lab/serve-tokens.json``
    (``~/.config/...``)."""
    given = os.environ.get("COMPUTE_LAB_TOKEN_FILE")
    if given:
        return Path(given)
    config = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(config) / "compute-lab" / "serve-tokens.json"


def digest(token):
    """The stored form of ``token``: its SHA-256, in hex."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def _check_mode(path, info):
    if not stat.S_ISREG(info.st_mode):
        raise TokenFileError(f"token file {path}: is not a regular file")
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        raise TokenFileError(
            f"token file {path}: is owned by another user (uid {info.st_uid}); it must be the "
            "server's own"
        )
    if info.st_mode & 0o077:
        raise TokenFileError(
            f"token file {path}: mode {stat.S_IMODE(info.st_mode):03o} lets group or others "
            f"read or write it; run: chmod 600 {path}"
        )


def _check_folder(path):
    """Refuse a token file whose folder group or others may write to: they could replace the
    file (or plant the lock file) whatever the file's own mode."""
    folder = path.parent
    try:
        info = os.stat(folder)
    except OSError as err:
        raise TokenFileError(
            f"token file {path}: its folder {folder} cannot be read ({err.strerror})"
        ) from None
    if hasattr(os, "getuid") and info.st_uid not in (os.getuid(), 0):
        raise TokenFileError(
            f"token file {path}: its folder {folder} is owned by another user (uid "
            f"{info.st_uid}), who could replace the file; keep the file in a folder of your own"
        )
    if info.st_mode & 0o022 and info.st_mode & stat.S_ISVTX:
        raise TokenFileError(
            f"token file {path}: its folder {folder} is shared (mode "
            f"{stat.S_IMODE(info.st_mode):04o}: others may create files there); keep the token "
            "file in a folder of your own"
        )
    if info.st_mode & 0o022:
        raise TokenFileError(
            f"token file {path}: its folder {folder} has mode {stat.S_IMODE(info.st_mode):03o}, "
            f"which lets group or others replace the file; run: chmod go-w {folder}"
        )


def _parse(path, raw):
    try:
        data = json.loads(raw)
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise TokenFileError(f"token file {path}: is not valid JSON") from None
    if not isinstance(data, dict) or data.get("version") != 1:
        raise TokenFileError(f'token file {path}: must be an object with "version": 1')
    tokens = data.get("tokens")
    if not isinstance(tokens, list) or len(tokens) > MAX_TOKENS:
        raise TokenFileError(
            f"token file {path}: 'tokens' must be a list of at most {MAX_TOKENS:,} entries"
        )
    seen = set()
    for i, entry in enumerate(tokens):
        where = f"token file {path}: tokens[{i}]"
        if not isinstance(entry, dict):
            raise TokenFileError(f"{where} must be an object")
        name = entry.get("name")
        if not isinstance(name, str) or not NAME_RULE.fullmatch(name):
            raise TokenFileError(f"{where}.name must be 1-64 letters, digits, '.', '_' or '-'")
        if name in seen:
            raise TokenFileError(f"{where}.name {name!r} appears twice")
        seen.add(name)
        if not isinstance(entry.get("sha256"), str) or not _HEX.fullmatch(entry["sha256"]):
            raise TokenFileError(f"{where}.sha256 must be 64 lowercase hex digits")
        if entry.get("role") not in ROLES:
            raise TokenFileError(f"{where}.role must be one of {', '.join(ROLES)}")
    return tokens


def load(path):
    """The token entries of ``path`` (a list of dicts); :class:`TokenFileError` if unusable.

    A missing file is an empty list (no one is signed in yet)."""
    path = Path(path)
    # Opened without waiting for a writer (O_NONBLOCK): a FIFO put in the file's place is
    # refused by its stat below instead of holding the server (and its event loop) for ever.
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return []
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise TokenFileError(
                f"token file {path}: is a symbolic link; give the file itself"
            ) from None
        raise TokenFileError(f"token file {path}: cannot be read ({err.strerror})") from None
    try:
        _check_mode(path, os.fstat(fd))
        _check_folder(path)
        with os.fdopen(fd, "rb", closefd=False) as handle:
            raw = handle.read(MAX_FILE_BYTES + 1)
    finally:
        os.close(fd)
    if len(raw) > MAX_FILE_BYTES:
        raise TokenFileError(f"token file {path}: larger than {MAX_FILE_BYTES:,} bytes")
    return _parse(path, raw)


def _lock_path(path):
    return path.with_name(path.name + ".lock")


def _take_lock(fd, path):
    """Hold an exclusive lock on ``fd``; TokenFileError after LOCK_WAIT_SECONDS."""
    deadline = time.monotonic() + LOCK_WAIT_SECONDS
    while True:
        try:
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            else:  # pragma: no cover (Windows)
                import msvcrt

                msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
            return
        except OSError as err:
            if err.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK, errno.EDEADLK):
                raise TokenFileError(
                    f"token file {path}: cannot lock {_lock_path(path)} ({err.strerror})"
                ) from None
        if time.monotonic() >= deadline:
            raise TokenFileError(
                f"token file {path}: another `serve token` command has held its lock "
                f"{_lock_path(path)} for over {LOCK_WAIT_SECONDS:g} s; try again when it has "
                "finished (or stop it)"
            )
        time.sleep(0.01)


def _open_lock(path):
    """The lock file's descriptor (created mode 600 if missing), checked like the token file:
    a regular file of ours, not a link."""
    lock = _lock_path(path)
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(lock, flags, 0o600)
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise TokenFileError(
                f"token file {path}: its lock file {lock} is a symbolic link; remove it"
            ) from None
        raise TokenFileError(
            f"token file {path}: cannot open its lock file {lock} ({err.strerror})"
        ) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or (hasattr(os, "getuid") and info.st_uid != os.getuid()):
            raise TokenFileError(
                f"token file {path}: its lock file {lock} is not a regular file of yours; remove it"
            )
    except BaseException:
        os.close(fd)
        raise
    return fd


def _open_folder_lock(path):
    """A descriptor of the token file's folder to lock (POSIX), or None (Windows).

    The lock file is a name its owner may remove while an update holds it; a command that
    came next would then lock a new file while the first still writes. The folder cannot be
    removed while it holds the token file, so an update locks the folder first, then the lock
    file (which Windows, with no lock on a folder, relies on alone)."""
    if fcntl is None or not hasattr(os, "O_DIRECTORY"):  # pragma: no cover (Windows)
        return None
    try:
        return os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    except OSError as err:
        raise TokenFileError(
            f"token file {path}: cannot open its folder to lock it ({err.strerror})"
        ) from None


def _update(path, change):
    """Apply ``change`` (tokens -> new tokens) to the file under its lock; write the new file
    and confirm, by reading it back, that it holds what was written."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as err:
        raise TokenFileError(
            f"token file {path}: its folder cannot be made ({err.strerror})"
        ) from None
    _check_folder(path)
    folder = _open_folder_lock(path)
    fd = None
    try:
        if folder is not None:
            _take_lock(folder, path)  # the folder cannot be removed while it holds the file
        fd = _open_lock(path)
        _take_lock(fd, path)  # released when fd is closed
        tokens = change(load(path))
        _save(path, tokens)
        if load(path) != tokens:
            raise TokenFileError(
                f"token file {path}: changed by something else while being written (not by "
                "`serve token`, which waits for the lock); check it and run the command again"
            )
    finally:
        for held in (fd, folder):
            if held is not None:
                os.close(held)


def _save(path, tokens):
    # Temporary files left by stopped commands go: the lock is ours, so none is being written.
    # Only this file's (``.<name>.<pid>.tmp``): another token file's in the same folder, such
    # as ``<name>.2``'s, may be being written under its own lock.
    ours = re.compile(rf"\.{re.escape(path.name)}\.[0-9]+\.tmp")
    for stale in path.parent.glob(f".{glob.escape(path.name)}.*.tmp"):
        if ours.fullmatch(stale.name):
            stale.unlink(missing_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(
            tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600
        )
    except OSError as err:
        raise TokenFileError(
            f"token file {path}: cannot write {tmp} ({err.strerror}); remove it if it is left "
            "from a stopped command"
        ) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump({"version": 1, "tokens": tokens}, out, indent=1)
            out.write("\n")
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _sync_folder(path.parent)


def _sync_folder(folder):
    """Flush the folder's entries to disk, so that the rename (a revoke) survives a crash of
    the machine, not only the file's content. A folder that cannot be opened (Windows) is
    left to the system, where the rename is durable."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # a file system without fsync on folders: the rename is as durable as it can be
    finally:
        os.close(fd)


def _now():
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def create(path, name, role="user"):
    """Add a token called ``name``; return the token (the only time it is ever shown)."""
    if not NAME_RULE.fullmatch(name or ""):
        raise TokenFileError(
            f"token name {name!r}: must be 1-64 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit"
        )
    if role not in ROLES:
        raise TokenFileError(f"--role {role!r}: must be one of {', '.join(ROLES)}")
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    entry = {"name": name, "sha256": digest(token), "role": role, "created": _now()}

    def add(tokens):
        if any(t["name"] == name for t in tokens):
            raise TokenFileError(
                f"token name {name!r}: already exists in {path}; revoke it first or pick "
                "another name"
            )
        if len(tokens) >= MAX_TOKENS:
            raise TokenFileError(
                f"token file {path}: holds {MAX_TOKENS:,} tokens, the most it may; revoke one first"
            )
        return [*tokens, entry]

    _update(path, add)
    return token


def revoke(path, name):
    """Remove the token called ``name``; :class:`TokenFileError` if there is none."""

    def remove(tokens):
        kept = [t for t in tokens if t["name"] != name]
        if len(kept) == len(tokens):
            known = ", ".join(t["name"] for t in tokens) or "none"
            raise TokenFileError(f"no token named {name!r} in {path} (tokens: {known})")
        return kept

    _update(path, remove)
    used = _used_dir(path) / name
    used.unlink(missing_ok=True)


def _used_dir(path):
    path = Path(path)
    return path.with_name(path.name + ".used")


def list_tokens(path):
    """``(name, role, created, last_used or None)`` for every token, in file order."""
    rows = []
    for entry in load(path):
        try:
            seen = (_used_dir(path) / entry["name"]).stat().st_mtime
            last = dt.datetime.fromtimestamp(seen, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        except OSError:
            last = None
        rows.append((entry["name"], entry["role"], entry.get("created", "?"), last))
    return rows


class TokenStore:
    """The server's view of the token file: re-read when it changes, checked on every call."""

    def __init__(self, path):
        self.path = Path(path)
        self._stamp = None
        self._by_digest = {}
        self._error = None
        self._touched = {}

    def _refresh(self):
        try:
            # The folder's mode and owner too: a folder opened to others is refused at once.
            folder = os.stat(self.path.parent)
            info = os.stat(self.path)
            stamp = (info.st_mtime_ns, info.st_ctime_ns, info.st_size, info.st_ino, info.st_mode)
            stamp += (folder.st_mode, folder.st_uid)
        except FileNotFoundError:
            stamp = None
        except OSError as err:
            self._error = f"token file {self.path}: cannot be read ({err.strerror})"
            return
        if stamp == self._stamp and self._stamp is not None:
            return
        try:
            tokens = load(self.path)
        except TokenFileError as err:
            self._error, self._by_digest = str(err), {}
            self._stamp = None
            return
        self._by_digest = {t["sha256"]: (t["name"], t["role"]) for t in tokens}
        self._error, self._stamp = None, stamp

    def problem(self):
        """Why the token file cannot be used right now, or None."""
        self._refresh()
        return self._error

    def check(self, header):
        """``(name, role)`` for an ``Authorization`` header value, or ``(None, reason)``."""
        self._refresh()
        if self._error:
            return None, "sign-in is unavailable: the server's token file is unusable"
        if not header:
            return None, "sign-in required: send Authorization: Bearer <token>"
        scheme, _, token = header.strip().partition(" ")
        if scheme.lower() != "bearer" or not token:
            return None, "the Authorization header must be 'Bearer <token>'"
        token = token.strip()
        if not _TOKEN_RULE.fullmatch(token):
            return None, "the token is not a Compute Lab token (cl_ and 43 characters)"
        # A dict lookup by digest: timing can reveal at most a digest's prefix, which says
        # nothing about any 256-bit token.
        found = self._by_digest.get(digest(token))
        if found is None:
            return None, "the token is unknown or has been revoked"
        self._note_use(found[0])
        return found

    def _note_use(self, name):
        now = time.monotonic()
        if now - self._touched.get(name, -1e9) < LAST_USE_RESOLUTION_SECONDS:
            return
        self._touched[name] = now
        used = _used_dir(self.path)
        try:
            used.mkdir(mode=0o700, exist_ok=True)
            (used / name).touch(mode=0o600)
            os.utime(used / name)
        except OSError:
            pass  # last use is informative; a read-only directory does not stop a call
