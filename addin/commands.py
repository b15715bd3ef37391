"""``compute-lab addin install``, ``compute-lab serve`` and ``compute-lab lite-bundle``.

Registered with the command line through :data:`COMMANDS`. Kept light: xlwings, uvicorn and
xlwings Server are imported only inside the ``run`` functions.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

#: The xlwings Server project (the same path as ``addin.server_app.PROJECT_DIR``).
PROJECT_DIR = Path(__file__).resolve().parent / "server"

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


def _configure_serve(parser):
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    parser.add_argument(
        "--certfile",
        metavar="PEM",
        help="TLS certificate (Office.js needs HTTPS; default addin/server/certs/localhost+2.pem "
        "when present)",
    )
    parser.add_argument("--keyfile", metavar="PEM", help="TLS key for --certfile")
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
    if "xlwings" in sys.modules and os.environ.get("XLWINGS_ON_SERVER") != "true":
        raise CommandError("xlwings was already imported without XLWINGS_ON_SERVER=true")
    os.environ["XLWINGS_LICENSE_KEY"] = key
    os.environ["XLWINGS_ON_SERVER"] = "true"
    os.environ.setdefault("XLWINGS_PROJECT_DIR", str(PROJECT_DIR))
    if args.environment:
        os.environ["XLWINGS_ENVIRONMENT"] = args.environment
    certs = PROJECT_DIR / "certs"
    certfile = args.certfile or _existing(certs / "localhost+2.pem")
    keyfile = args.keyfile or _existing(certs / "localhost+2-key.pem")
    if bool(certfile) != bool(keyfile):
        raise CommandError("give both --certfile and --keyfile")
    scheme = "https" if certfile else "http"
    print(
        f"Compute Lab functions on {scheme}://{args.host}:{args.port} (manifest: /manifest.xml)",
        flush=True,
    )
    if not certfile:
        print("note: plain HTTP; Excel's Office.js add-ins need HTTPS (--certfile/--keyfile)")
    print("note: " + LICENCE_NOTE, flush=True)
    import uvicorn

    uvicorn.run(
        "addin.server_app:app",
        host=args.host,
        port=args.port,
        ssl_certfile=certfile,
        ssl_keyfile=keyfile,
    )
    return 0


def _existing(path):
    return str(path) if Path(path).is_file() else None


# ---------------------------------------------------------------------------------------------
# compute-lab lite-bundle
# ---------------------------------------------------------------------------------------------


def _configure_lite(parser):
    parser.add_argument("--out", required=True, metavar="DIR", help="directory to write into")
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
