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
import socket
import ssl
import sys
from pathlib import Path

#: The xlwings Server project (the same path as ``addin.server_app.PROJECT_DIR``).
PROJECT_DIR = Path(__file__).resolve().parent / "server"

#: Where ``compute-lab lite-bundle`` writes without ``--out``.
LITE_OUT = "xlwings-lite"

LICENCE_NOTE = (
    "xlwings Server is licensed under PolyForm Noncommercial 1.0.0 or a paid xlwings licence: "
    "set XLWINGS_LICENSE_KEY (or --license-key) to 'noncommercial' for noncommercial use, or "
    "to your paid licence key for commercial use. Classic xlwings UDFs on Windows and xlwings "
    "Lite are free (see the README)."
)


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


def _loopback(text):
    """``--host``: a loopback address (the server has no access control of its own)."""
    host = text.strip()
    if host.lower() == "localhost":
        return host
    try:
        loopback = ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise argparse.ArgumentTypeError(
            f"must be a loopback address such as 127.0.0.1, ::1 or localhost (got {text!r}); "
            "the server is for this machine's Excel only"
        )
    return host.strip("[]")


def _configure_serve(parser):
    parser.add_argument(
        "--host",
        type=_loopback,
        default="127.0.0.1",
        help="loopback address to bind: 127.0.0.1 (default), ::1 or localhost",
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


def _run_serve(args):
    from udfs.cli import CommandError

    if importlib.util.find_spec("xlwings_server") is None:
        raise CommandError(
            "xlwings Server is not installed: pip install 'compute-lab[server]'. " + LICENCE_NOTE
        )
    key = args.license_key or os.environ.get("XLWINGS_LICENSE_KEY")
    if not key:
        raise CommandError("no xlwings licence key. " + LICENCE_NOTE)
    certs = PROJECT_DIR / "certs"
    certfile = args.certfile or _existing(certs / "localhost+2.pem")
    keyfile = args.keyfile or _existing(certs / "localhost+2-key.pem")
    if bool(certfile) != bool(keyfile):
        raise CommandError("give both --certfile and --keyfile")
    if certfile:
        check_tls_files(certfile, keyfile)
    check_port_free(args.host, args.port)
    if "xlwings" in sys.modules and os.environ.get("XLWINGS_ON_SERVER") != "true":
        raise CommandError("xlwings was already imported without XLWINGS_ON_SERVER=true")
    os.environ["XLWINGS_LICENSE_KEY"] = key
    os.environ["XLWINGS_ON_SERVER"] = "true"
    os.environ.setdefault("XLWINGS_PROJECT_DIR", str(PROJECT_DIR))
    if args.environment:
        os.environ["XLWINGS_ENVIRONMENT"] = args.environment
    scheme = "https" if certfile else "http"
    host = f"[{args.host}]" if ":" in args.host else args.host
    print(
        f"Compute Lab functions on {scheme}://{host}:{args.port} (manifest: /manifest.xml)",
        flush=True,
    )
    if not certfile:
        print(
            "note: plain HTTP (no certificate): Excel's Office.js add-ins need HTTPS, so Excel "
            "will not load the add-in from this address; give --certfile/--keyfile",
            flush=True,
        )
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
            **uvicorn_options(),  # time limits for slow clients, a connection limit
        )
    except SystemExit as stop:  # uvicorn exits when it cannot start; its log says why
        if stop.code not in (0, None):
            raise CommandError(
                f"the server did not start on {host}:{args.port} (see the message above)"
            ) from None
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
    from udfs.cli import CommandError

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
    from udfs.cli import CommandError

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
