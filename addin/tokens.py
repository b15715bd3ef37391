"""Sign-in tokens for the team server: ``compute-lab serve token create|revoke|list``.

A token is ``cl_`` followed by 43 URL-safe characters (32 random bytes from :mod:`secrets`). It
is printed once, when created, and only its SHA-256 is stored: 256 random bits need no slow
password hash, and a stolen token file gives nobody a working token. The file is JSON::

    {"version": 1, "tokens": [{"name": "alice", "sha256": "<hex>", "role": "user",
                               "created": "2026-12-01T21:00:00Z"}, ...]}

It must be a regular file owned by the user running the server and neither readable nor
writable by group or others (mode 600), or nothing reads it: :func:`load` raises
:class:`TokenFileError` with one line naming the file and the rule. The server re-reads the file
when its modification time changes, so ``token revoke`` takes effect at the next request in
every worker, without a restart.

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
import hashlib
import json
import os
import re
import secrets
import stat
import time
from pathlib import Path

__all__ = [
    "LAST_USE_RESOLUTION_SECONDS",
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
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
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
        with os.fdopen(fd, "rb", closefd=False) as handle:
            raw = handle.read(MAX_FILE_BYTES + 1)
    finally:
        os.close(fd)
    if len(raw) > MAX_FILE_BYTES:
        raise TokenFileError(f"token file {path}: larger than {MAX_FILE_BYTES:,} bytes")
    return _parse(path, raw)


def _save(path, tokens):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump({"version": 1, "tokens": tokens}, out, indent=1)
            out.write("\n")
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


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
    tokens = load(path)
    if any(t["name"] == name for t in tokens):
        raise TokenFileError(
            f"token name {name!r}: already exists in {path}; revoke it first or pick another name"
        )
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    tokens.append({"name": name, "sha256": digest(token), "role": role, "created": _now()})
    _save(path, tokens)
    return token


def revoke(path, name):
    """Remove the token called ``name``; :class:`TokenFileError` if there is none."""
    tokens = load(path)
    kept = [t for t in tokens if t["name"] != name]
    if len(kept) == len(tokens):
        known = ", ".join(t["name"] for t in tokens) or "none"
        raise TokenFileError(f"no token named {name!r} in {path} (tokens: {known})")
    _save(path, kept)
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
            info = os.stat(self.path)
            stamp = (info.st_mtime_ns, info.st_ctime_ns, info.st_size, info.st_ino, info.st_mode)
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
