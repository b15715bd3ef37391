"""``compute-lab addin install``, ``compute-lab serve`` and ``compute-lab lite-bundle``.

Registered with the command line through :data:`COMMANDS`. Kept light: xlwings, uvicorn and
xlwings Server are imported only inside the ``run`` functions.
"""

from __future__ import annotations

import argparse
import errno
import importlib.util
import ipaddress
import os
import re
import socket
import ssl
import sys
import time
from pathlib import Path

#: The xlwings Server project (the same path as ``addin.server_app.PROJECT_DIR``).
PROJECT_DIR = Path(__file__).resolve().parent / "server"

#: The certificate and key ``serve`` uses without ``--certfile``/``--keyfile`` when both exist
#: (mkcert's names for ``mkcert localhost 127.0.0.1 ::1``), and ``serve --make-cert`` writes.
DEFAULT_CERTFILE = PROJECT_DIR / "certs" / "localhost+2.pem"
DEFAULT_KEYFILE = PROJECT_DIR / "certs" / "localhost+2-key.pem"

#: Where ``compute-lab lite-bundle`` writes without ``--out``.
LITE_OUT = "xlwings-lite"

LICENCE_NOTE = (
    "xlwings Server is licensed under PolyForm Noncommercial 1.0.0 or a paid xlwings licence: "
    "set XLWINGS_LICENSE_KEY (or --license-key) to 'noncommercial' for noncommercial use, or "
    "to your paid licence key for commercial use. Classic xlwings UDFs on Windows and xlwings "
    "Lite are free (see the README)."
)

#: How the server route is installed, as every message and page says it: users clone the
#: repository and install it editable, from the clone's folder, with the ``server`` extra.
SERVER_INSTALL = "pip install -e '.[server]'"

#: The same for ``--metrics`` (prometheus-client).
METRICS_INSTALL = "pip install -e '.[metrics]'"


# ---------------------------------------------------------------------------------------------
# compute-lab addin install
# ---------------------------------------------------------------------------------------------


def _configure_addin(parser):
    sub = parser.add_subparsers(dest="addin_command", metavar="ACTION", required=True)
    p = sub.add_parser(
        "install",
        help="install the xlwings add-in and point it at udfs.excel (Windows desktop Excel)",
        description="Runs `xlwings addin install`, then sets UDF MODULES = udfs.excel and "
        "INTERPRETER_WIN = this Python in the user's xlwings.conf (other lines are kept).",
    )
    p.add_argument(
        "--config-only",
        action="store_true",
        help="only write the xlwings configuration (any platform)",
    )
    p.add_argument("--config-file", metavar="PATH", help="xlwings.conf to write (default: user's)")
    p.add_argument("--dry-run", action="store_true", help="print what would be done")


def _run_addin(args):
    from . import classic

    return classic.install(args.config_file, config_only=args.config_only, dry_run=args.dry_run)


# ---------------------------------------------------------------------------------------------
# compute-lab serve
# ---------------------------------------------------------------------------------------------


def _port(text):
    """``--port``: a whole number from 1 to 65535."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number (got {text!r})") from None
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"must be from 1 to 65535 (got {port})")
    return port


def _address(text):
    """``--host``: an IP address or ``localhost`` (any address; a non-loopback one needs TLS
    and sign-in, see :func:`check_exposure`)."""
    host = text.strip().strip("[]")
    if host.lower() == "localhost":
        return host
    try:
        ipaddress.ip_address(host)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be an IP address such as 127.0.0.1, ::1, 0.0.0.0 or localhost (got {text!r})"
        ) from None
    return host


def is_loopback(host):
    """True for ``localhost`` and loopback IP addresses (127.0.0.0/8, ::1)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


_HOST_NAME = re.compile(
    r"(?=.{1,253}(:\d{1,5})?$)[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?(:\d{1,5})?"
)


def _public_host(text):
    """``--public-host``: a DNS name (optionally with :PORT) the server is reached by."""
    name = text.strip().lower()
    if not _HOST_NAME.fullmatch(name):
        raise argparse.ArgumentTypeError(
            f"must be a host name such as excel-lab.example.com or excel-lab.example.com:8443 "
            f"(got {text!r})"
        )
    return name


def _workers(text):
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number (got {text!r})") from None
    if not 1 <= n <= MAX_WORKERS:
        raise argparse.ArgumentTypeError(f"must be from 1 to {MAX_WORKERS} (got {n})")
    return n


def _rate(text):
    try:
        rate = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number (got {text!r})") from None
    if not 0 < rate <= 1e6:
        raise argparse.ArgumentTypeError(f"must be above 0 and at most 1e6 (got {text!r})")
    return rate


#: ``--workers`` at most (each worker is a process with its own copy of the functions).
MAX_WORKERS = 64

#: ``--workers`` when not given: one process (about 125 MB resident) serves one person's Excel
#: well; a team server asks for more with ``--workers N``.
DEFAULT_WORKERS = 1


def _configure_serve(parser):
    from . import team

    parser.add_argument(
        "--host",
        type=_address,
        default="127.0.0.1",
        help="address to bind: 127.0.0.1 (default) or another loopback address; any other "
        "address (0.0.0.0, a LAN address) needs --certfile/--keyfile and implies "
        "--require-sign-in",
    )
    parser.add_argument("--port", type=_port, default=8000, help="port, 1-65535 (default 8000)")
    parser.add_argument(
        "--certfile",
        metavar="PEM",
        help="TLS certificate (Office.js needs HTTPS; default addin/server/certs/localhost+2.pem "
        "when present)",
    )
    parser.add_argument("--keyfile", metavar="PEM", help="TLS key for --certfile (unencrypted)")
    parser.add_argument(
        "--license-key", metavar="KEY", help="xlwings licence key, e.g. 'noncommercial'"
    )
    parser.add_argument(
        "--environment",
        choices=("dev", "prod"),
        default=None,
        help="xlwings Server environment (dev: namespace LAB_DEV, error details shown)",
    )
    parser.add_argument(
        "--require-sign-in",
        action="store_true",
        help="every function and script call needs a token from `serve token create` "
        "(implied by a non-loopback --host or a --public-host)",
    )
    parser.add_argument(
        "--token-file",
        metavar="PATH",
        help="the sign-in token file (default $COMPUTE_LAB_TOKEN_FILE or "
        "~/.config/compute-lab/serve-tokens.json)",
    )
    parser.add_argument(
        "--public-host",
        type=_public_host,
        action="append",
        default=[],
        metavar="NAME",
        help="a host name clients reach the server by (behind a reverse proxy, say); repeatable; "
        "implies --require-sign-in",
    )
    parser.add_argument(
        "--workers",
        type=_workers,
        default=DEFAULT_WORKERS,
        help=f"worker processes, 1-{MAX_WORKERS} (default {DEFAULT_WORKERS}; a team server: up "
        f"to one per core, {os.cpu_count() or 1} here)",
    )
    parser.add_argument(
        "--rate-limit",
        type=_rate,
        default=team.RATE_LIMIT_PER_SECOND,
        metavar="CALLS",
        help=f"calls a second per token with sign-in (default {team.RATE_LIMIT_PER_SECOND:g}; "
        f"bursts of {team.RATE_LIMIT_BURST})",
    )
    parser.add_argument(
        "--metrics",
        action="store_true",
        help="serve Prometheus metrics at /metrics (needs prometheus-client; an admin token "
        "with sign-in)",
    )
    _configure_serve_actions(parser)
    _configure_tokens(parser)


def _configure_serve_actions(parser):
    """The flags that do one thing and exit instead of serving."""
    parser.add_argument(
        "--check",
        action="store_true",
        help="check the configuration, certificate and token file, then exit without serving",
    )
    parser.add_argument(
        "--make-cert",
        action="store_true",
        help="write a self-signed certificate and key (to --certfile/--keyfile, default "
        "addin/server/certs/localhost+2.pem and -key.pem) for localhost, 127.0.0.1, ::1 and each "
        "--public-host, then exit; this machine must trust it (docs/excel-routes.md)",
    )


def _configure_tokens(parser):
    sub = parser.add_subparsers(dest="serve_command", metavar="token")
    token = sub.add_parser(
        "token",
        help="manage sign-in tokens: create NAME, revoke NAME, list",
        description="Sign-in tokens for `serve --require-sign-in`; stored hashed in the token "
        "file (mode 600).",
    )
    actions = token.add_subparsers(dest="token_action", metavar="ACTION", required=True)
    create = actions.add_parser("create", help="create a token; printed once, on its own line")
    create.add_argument("name", help="who the token is for: 1-64 letters, digits, . _ -")
    create.add_argument("--role", choices=("user", "admin"), default="user")
    revoke = actions.add_parser("revoke", help="revoke a token (refused from its next call on)")
    revoke.add_argument("name")
    listing = actions.add_parser("list", help="list tokens: name, role, created, last used")
    for p in (create, revoke, listing):
        p.add_argument(
            "--token-file", dest="action_token_file", metavar="PATH", help="the token file"
        )


def _token_file(args):
    from . import tokens

    given = getattr(args, "action_token_file", None) or getattr(args, "token_file", None)
    return Path(given) if given else tokens.default_path()


def _run_tokens(args):
    from udfs.validation import CommandError

    from . import tokens

    path = _token_file(args)
    try:
        if args.token_action == "create":
            token = tokens.create(path, args.name, role=args.role)
            print(
                f"token for {args.name} ({args.role}), shown only now; give it to them:",
                file=sys.stderr,
            )
            print(token, flush=True)
        elif args.token_action == "revoke":
            tokens.revoke(path, args.name)
            print(f"revoked {args.name}; refused from its next call on")
        else:
            rows = tokens.list_tokens(path)
            if not rows:
                print(f"no tokens in {path}")
            for name, role, created, last in rows:
                print(f"{name:<24} {role:<6} created {created}  last used {last or 'never'}")
    except tokens.TokenFileError as err:
        raise CommandError(str(err)) from None
    return 0


def check_exposure(host, certfile):
    """Raise ``CommandError`` with one line unless the exposure is safe: loopback is always
    allowed; any other address needs TLS (and sign-in, which it implies)."""
    from udfs.validation import CommandError

    if is_loopback(host):
        return
    if not certfile:
        raise CommandError(
            f"--host {host} is not a loopback address: other machines could reach the server, "
            "so it needs TLS (--certfile/--keyfile) and sign-in; refusing to start on plain HTTP"
        )


def _serve_plan(args):
    """Check everything ``serve`` needs; return what it will run (raises ``CommandError``)."""
    from udfs.validation import CommandError

    from . import tokens

    if importlib.util.find_spec("xlwings_server") is None:
        raise CommandError(
            f"xlwings Server is not installed: run {SERVER_INSTALL} in the Compute Lab folder. "
            + LICENCE_NOTE
        )
    key = args.license_key or os.environ.get("XLWINGS_LICENSE_KEY")
    if not key:
        raise CommandError(
            "no xlwings licence key: for noncommercial use run XLWINGS_LICENSE_KEY=noncommercial "
            "compute-lab serve (or add --license-key noncommercial). " + LICENCE_NOTE
        )
    certfile = args.certfile or _existing(DEFAULT_CERTFILE)
    keyfile = args.keyfile or _existing(DEFAULT_KEYFILE)
    if bool(certfile) != bool(keyfile):
        raise CommandError("give both --certfile and --keyfile")
    certificate = None
    if certfile:
        check_tls_files(certfile, keyfile)
        certificate = certificate_summary(certfile)  # an expired certificate is refused
        check_public_hosts(certfile, args.public_host)
    sign_in = bool(args.require_sign_in or args.public_host or not is_loopback(args.host))
    check_exposure(args.host, certfile)
    token_file = _token_file(args)
    if sign_in:
        try:
            count = len(tokens.load(token_file))
        except tokens.TokenFileError as err:
            raise CommandError(str(err)) from None
        if count == 0:
            raise CommandError(
                f"sign-in is on but {token_file} holds no tokens: create one with "
                "`compute-lab serve token create NAME`"
            )
    if args.metrics and importlib.util.find_spec("prometheus_client") is None:
        raise CommandError(
            f"--metrics needs prometheus-client: run {METRICS_INSTALL} in the Compute Lab folder"
        )
    workers = args.workers
    return {
        "key": key,
        "certfile": certfile,
        "keyfile": keyfile,
        "certificate": certificate,
        "sign_in": sign_in,
        "token_file": token_file,
        "workers": workers,
    }


def _run_serve(args):
    from udfs.validation import CommandError

    from . import team

    if getattr(args, "serve_command", None) == "token":
        return _run_tokens(args)
    if args.make_cert:
        return _make_cert(args)
    plan = _serve_plan(args)
    if args.check:
        print(_check_summary(args, plan))
        return 0
    check_port_free(args.host, args.port)
    if "xlwings" in sys.modules and os.environ.get("XLWINGS_ON_SERVER") != "true":
        raise CommandError("xlwings was already imported without XLWINGS_ON_SERVER=true")
    key, certfile, keyfile = plan["key"], plan["certfile"], plan["keyfile"]
    os.environ["XLWINGS_LICENSE_KEY"] = key
    os.environ["XLWINGS_ON_SERVER"] = "true"
    os.environ.setdefault("XLWINGS_PROJECT_DIR", str(PROJECT_DIR))
    if args.environment:
        os.environ["XLWINGS_ENVIRONMENT"] = args.environment
    os.environ[team.ENV["sign_in"]] = "1" if plan["sign_in"] else "0"
    os.environ[team.ENV["token_file"]] = str(plan["token_file"])
    os.environ[team.ENV["public_hosts"]] = ",".join(args.public_host)
    os.environ[team.ENV["workers"]] = str(plan["workers"])
    os.environ[team.ENV["rate_limit"]] = repr(args.rate_limit)
    os.environ[team.ENV["metrics"]] = "1" if args.metrics else "0"
    _print_start(args, plan)
    print(licence_line(key, from_flag=bool(args.license_key)), flush=True)
    import uvicorn

    from addin.connections import uvicorn_options

    try:
        uvicorn.run(
            "addin.server_app:app",
            host=args.host,
            port=args.port,
            ssl_certfile=certfile,
            ssl_keyfile=keyfile,
            workers=plan["workers"],
            timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_SECONDS,
            **uvicorn_options(),  # time limits for slow clients, a connection limit
        )
    except SystemExit as stop:  # uvicorn exits when it cannot start; its log says why
        if stop.code not in (0, None):
            raise CommandError(
                f"the server did not start on {args.host}:{args.port} (see the message above)"
            ) from None
    except Exception as err:  # xlwings checks the key when the app is imported
        if type(err).__name__ != "LicenseError":
            raise
        where = "--license-key" if args.license_key else "XLWINGS_LICENSE_KEY"
        raise CommandError(f"{where}: {err} " + LICENCE_NOTE) from None
    return 0


#: Seconds ``serve`` waits, on SIGTERM or Ctrl-C, for the calls in flight to finish.
GRACEFUL_SHUTDOWN_SECONDS = 30


def _url(args, plan):
    scheme = "https" if plan["certfile"] else "http"
    host = f"[{args.host}]" if ":" in args.host else args.host
    return f"{scheme}://{host}:{args.port}"


def _print_start(args, plan):
    sign_in = "no sign-in"
    if plan["sign_in"]:
        sign_in = f"sign-in required (tokens: {plan['token_file']})"
    print(
        f"Compute Lab functions on {_url(args, plan)} (manifest: /manifest.xml); "
        f"{plan['workers']} worker(s); {sign_in}",
        flush=True,
    )
    if not plan["certfile"]:
        print(
            "note: plain HTTP (no certificate): Excel's Office.js add-ins need HTTPS, so Excel "
            "will not load the add-in from this address; make a certificate with compute-lab "
            "serve --make-cert (docs/excel-routes.md, Certificates) or give --certfile/--keyfile",
            flush=True,
        )


def _check_summary(args, plan):
    parts = [f"configuration OK: {_url(args, plan)}", f"{plan['workers']} worker(s)"]
    if plan["certfile"]:
        parts.append(f"certificate {plan['certificate']}")
    if plan["sign_in"]:
        from . import tokens

        count = len(tokens.load(plan["token_file"]))
        parts.append(f"sign-in with {count} token(s) in {plan['token_file']}")
    else:
        parts.append("no sign-in (loopback only)")
    if args.public_host:
        parts.append("public host(s) " + ", ".join(args.public_host))
    return "; ".join(parts)


def certificate_summary(certfile):
    """``valid until DATE for NAMES`` of the first certificate in ``certfile``; raises
    ``CommandError`` if it has expired, is not yet valid or cannot be read."""
    from udfs.validation import CommandError

    from . import certs

    try:
        info = ssl._ssl._test_decode_cert(str(certfile))  # the standard library's own parser
    except (ssl.SSLError, OSError, AttributeError) as err:
        return f"(not decoded: {err})"
    until = ssl.cert_time_to_seconds(info["notAfter"])
    names = certs.names_text(info)
    if until < time.time():
        raise CommandError(f"--certfile {certfile}: expired on {info['notAfter']}")
    if ssl.cert_time_to_seconds(info["notBefore"]) > time.time():
        raise CommandError(
            f"--certfile {certfile}: not valid before {info['notBefore']} (browsers and Excel "
            "refuse it until then; check the certificate's dates or this machine's clock)"
        )
    return f"valid until {info['notAfter']} for {names}"


def check_public_hosts(certfile, public_hosts):
    """Raise ``CommandError`` naming the first ``--public-host`` the certificate in
    ``certfile`` does not cover (by its subject alternative names), and the names it covers:
    Excel, reaching the server by that name, would refuse the connection."""
    from udfs.validation import CommandError

    from . import certs

    if not public_hosts:
        return
    try:
        missing, covered = certs.uncovered(certfile, public_hosts)
    except ValueError as err:
        raise CommandError(f"--certfile {certfile}: cannot be decoded ({err})") from None
    if missing:
        raise CommandError(
            f"--public-host {missing[0]} is not covered by the certificate {certfile}, which "
            f"names {covered}: clients reaching the server by that name would refuse it; use a "
            "certificate that names it (e.g. compute-lab serve --make-cert --public-host "
            f"{missing[0]} --certfile NEW.pem --keyfile NEW-key.pem)"
        )


def trust_hint(certfile):
    """The command that makes this computer trust ``certfile`` (on Linux, Chrome's and
    Chromium's certificate database), or None."""
    if sys.platform == "darwin":
        return (
            "security add-trusted-cert -r trustRoot -p ssl "
            f"-k ~/Library/Keychains/login.keychain-db {certfile}"
        )
    if sys.platform == "win32":
        return f"certutil -user -addstore Root {certfile}"
    if sys.platform.startswith("linux"):  # Chrome and Chromium read the user's NSS database
        return f"certutil -d sql:$HOME/.pki/nssdb -A -t P,, -n compute-lab -i {certfile}"
    return None


def _make_cert(args):
    """``serve --make-cert``: write a self-signed pair for the loopback names, ``--host`` (a
    specific address) and each ``--public-host``; never replaces a file."""
    from udfs.validation import CommandError

    from . import certs

    if args.check:
        raise CommandError("--make-cert writes a certificate and exits: run --check after it")
    if bool(args.certfile) != bool(args.keyfile):
        raise CommandError("--make-cert: give both --certfile and --keyfile, or neither")
    certfile = Path(args.certfile) if args.certfile else DEFAULT_CERTFILE
    keyfile = Path(args.keyfile) if args.keyfile else DEFAULT_KEYFILE
    for flag, path in (("--certfile", certfile), ("--keyfile", keyfile)):
        if path.exists():
            raise CommandError(
                f"--make-cert: {flag} {path} exists; delete it first or name new files with "
                "--certfile/--keyfile (nothing was written)"
            )
    names = list(certs.LOCAL_NAMES)
    if not is_loopback(args.host) and not ipaddress.ip_address(args.host).is_unspecified:
        names.append(args.host)
    names += args.public_host
    try:
        until = certs.make_self_signed(certfile, keyfile, names)
    except ImportError:
        raise CommandError(
            f"--make-cert needs the cryptography package: run {SERVER_INSTALL} in the Compute "
            "Lab folder, or make the pair with openssl as docs/excel-routes.md shows"
        ) from None
    except OSError as err:
        if isinstance(err, FileExistsError) and err.filename in (str(certfile), str(keyfile)):
            raise CommandError(
                f"--make-cert: {err.filename} exists (nothing was written)"
            ) from None
        raise CommandError(
            f"--make-cert: cannot write {err.filename or certfile} ({err.strerror}; nothing "
            "was written)"
        ) from None
    print(
        f"wrote {certfile} and {keyfile} (its key, mode 600): a self-signed certificate for "
        f"{', '.join(certs.covered_names(names))}, valid until {until:%Y-%m-%d}"
    )
    hint = trust_hint(certfile)
    where = f"run {hint}; " if hint else ""
    print(
        f"Excel accepts it once this computer trusts it: {where}see docs/excel-routes.md, "
        "Certificates"
    )
    return 0


def licence_line(key, *, from_flag):
    """One line on the licence in use: never a request for a key the user already gave."""
    where = "--license-key" if from_flag else "XLWINGS_LICENSE_KEY"
    if key.strip().lower() == "noncommercial":
        return (
            f"licence: noncommercial (from {where}): xlwings Server's PolyForm Noncommercial "
            "1.0.0 terms; commercial use needs a paid xlwings licence key"
        )
    return f"licence: xlwings licence key from {where}"


def _existing(path):
    return str(path) if Path(path).is_file() else None


def _no_password():
    return ""  # an encrypted key fails here rather than prompting on the terminal


def check_tls_files(certfile, keyfile):
    """Raise ``CommandError`` naming the flag unless the files are a usable certificate and key."""
    from udfs.validation import CommandError

    for flag, path in (("--certfile", certfile), ("--keyfile", keyfile)):
        if not Path(path).exists():
            raise CommandError(f"{flag} {path}: no such file")
        if not Path(path).is_file():
            raise CommandError(f"{flag} {path}: is not a file")
        try:
            with open(path, "rb"):
                pass
        except OSError as err:
            raise CommandError(f"{flag} {path}: cannot be read ({err.strerror})") from None
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        context.load_cert_chain(certfile, keyfile, password=_no_password)
    except (ssl.SSLError, OSError, ValueError) as err:
        reason = getattr(err, "reason", None) or str(err)
        raise CommandError(
            f"--certfile {certfile} and --keyfile {keyfile} are not a PEM certificate and its "
            f"unencrypted private key ({reason})"
        ) from None


def check_port_free(host, port):
    """Raise ``CommandError`` naming ``--port`` if nothing can listen on ``host:port`` now."""
    from udfs.validation import CommandError

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as err:
        raise CommandError(f"--host {host}: cannot be resolved ({err.strerror})") from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
        try:
            probe.bind(address)
        except OSError as err:
            if err.errno == errno.EADDRINUSE:
                raise CommandError(
                    f"--port {port}: already in use on {host} (another server running? "
                    "stop it or pick another --port)"
                ) from None
            raise CommandError(
                f"--host {host} --port {port}: cannot listen there ({err.strerror})"
            ) from None


# ---------------------------------------------------------------------------------------------
# compute-lab lite-bundle
# ---------------------------------------------------------------------------------------------


def _configure_lite(parser):
    parser.add_argument(
        "--out",
        default=LITE_OUT,
        metavar="DIR",
        help=f"directory to write into (default: {LITE_OUT}, in the current directory)",
    )
    parser.add_argument("--force", action="store_true", help="overwrite existing files")


def _run_lite(args):
    from . import lite

    for path in lite.write_bundle(args.out, force=args.force):
        print(f"wrote {path}")
    print("paste main.py and requirements.txt into the xlwings Lite editor's tabs")
    return 0


COMMANDS = {
    "addin": (
        "classic xlwings on Windows desktop Excel: `addin install`",
        _configure_addin,
        _run_addin,
    ),
    "serve": (
        "serve the Excel functions to Office.js through xlwings Server (optional extra)",
        _configure_serve,
        _run_serve,
    ),
    "lite-bundle": (
        "write main.py and requirements.txt for xlwings Lite",
        _configure_lite,
        _run_lite,
    ),
}
