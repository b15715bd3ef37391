"""Helpers for the team-server tests: a test certificate, a token file, a signed-in server."""

from __future__ import annotations

import contextlib
import datetime as dt
import ipaddress
import json
import os
import ssl
import sys
import urllib.error
import urllib.request

from addin import local_server as _server
from addin.local_server import local_server


def make_certificate(folder, days=1, starts_in_days=None, names=()):
    """A self-signed certificate and key for 127.0.0.1, localhost and ``names`` (DNS names),
    valid for ``days`` from now (negative: expired that long ago), or from ``starts_in_days``
    from now on; returns ``(certfile, keyfile)``."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "compute-lab test")])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(
            now - dt.timedelta(days=max(1, -2 * days))
            if starts_in_days is None
            else now + dt.timedelta(days=starts_in_days)
        )
        .not_valid_after(now + dt.timedelta(days=days))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
                + [x509.DNSName(name) for name in names]
            ),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    certfile, keyfile = folder / "cert.pem", folder / "key.pem"
    certfile.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    keyfile.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    os.chmod(keyfile, 0o600)
    return certfile, keyfile


def server_env(folder, **extra):
    env = {
        **os.environ,
        "XLWINGS_LICENSE_KEY": "noncommercial",
        "DOTENV_PATH": str(folder / "no.env"),
        **extra,
    }
    for key in ("XLWINGS_ON_SERVER", "XLWINGS_PROJECT_DIR", "XLWINGS_ENVIRONMENT"):
        env.pop(key, None)
    for key in list(env):
        if key.startswith("COMPUTE_LAB_") and key not in extra:
            env.pop(key)
    return env


def serve_command(*flags, prelude=""):
    """``compute-lab serve --port PORT FLAGS`` as a function of the port (for local_server)."""
    code = prelude + "import sys; from compute_lab.cli import main; sys.exit(main())"

    def command(port):
        return [sys.executable, "-c", code, "serve", "--port", str(port), *flags]

    return command


@contextlib.contextmanager
def signed_in_server(folder, *flags, tls=True, prelude="", names=("alice", "bob")):
    """A ``serve --require-sign-in`` server on loopback (over TLS with a test certificate by
    default) with a token for each of ``names`` (``ops`` gets the admin role); yields
    ``(base_url, token_file, tokens, log)`` with ``tokens`` mapping each name to its token."""
    from addin import tokens as store

    token_file = folder / "tokens.json"
    made = {
        name: store.create(token_file, name, role="admin" if name == "ops" else "user")
        for name in names
    }
    tls_flags = []
    if tls:
        hosts = [flags[i + 1] for i, flag in enumerate(flags) if flag == "--public-host"]
        certfile, keyfile = make_certificate(folder, names=hosts)
        tls_flags = ["--certfile", str(certfile), "--keyfile", str(keyfile)]
    log = folder / "serve.log"
    command = serve_command(
        "--require-sign-in", "--token-file", str(token_file), *tls_flags, *flags, prelude=prelude
    )
    with local_server(
        command,
        env=server_env(folder),
        log=log,
        scheme="https" if tls else "http",
        ready_path="/ready",
    ) as base:
        yield base, token_file, made, log


def call_body(func_name="TRAIN_DAYS", *args):
    """A call's body as a dict (the example plan's TRAIN_DAYS unless told), to edit in tests."""
    return json.loads(_server.call_body(func_name, *(args or (37e9, 14.8e12, 2048, 400))))


def post(base, body, token=None, path="/xlwings/custom-functions-call", headers=None):
    """``(status, text, headers)`` of a POST; the test certificate is not verified."""
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    request = urllib.request.Request(base + path, data=data, method="POST")
    request.add_header("Content-Type", "application/json")
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    for key, value in (headers or {}).items():
        request.add_header(key, value)
    context = ssl._create_unverified_context() if base.startswith("https:") else None
    try:
        with urllib.request.urlopen(request, timeout=120, context=context) as response:
            return response.status, response.read().decode(), dict(response.headers)
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode(), dict(err.headers)


def get(base, path):
    context = ssl._create_unverified_context() if base.startswith("https:") else None
    try:
        with urllib.request.urlopen(base + path, timeout=30, context=context) as response:
            return response.status, response.read().decode(), dict(response.headers)
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode(), dict(err.headers)


def run_cli(capsys, *argv):
    """``compute-lab ARGV`` in this process: (status, stdout, stderr)."""
    from compute_lab.cli import main

    try:
        status = main(list(argv))
    except SystemExit as stop:
        status = stop.code
    out = capsys.readouterr()
    return status, out.out, out.err
