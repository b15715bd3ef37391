"""The server route as a newcomer meets it: the README's commands run as written in a fresh
copy of the repository, the certificate ``serve --make-cert`` makes is served over TLS by the
real uvicorn, ``serve --check`` refuses a certificate that does not name a ``--public-host``,
one worker by default, and one install command in every message and page.

Real parts: ``compute-lab serve`` as a process, uvicorn over TLS on loopback, pip's resolver,
openssl for the documented openssl lines.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import shutil
import socket
import ssl
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from helpers_team import run_cli

from addin import certs, commands
from addin.local_server import free_port, local_server

if importlib.util.find_spec("xlwings_server") is None:
    pytest.skip("needs the server extra (xlwings-server)", allow_module_level=True)

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XLWINGS_", "COMPUTE_LAB_"))}
    return {**env, **extra}


def make_cert(folder, *flags):
    """``compute-lab serve --make-cert`` into ``folder``; returns ``(certfile, keyfile, out)``."""
    certfile, keyfile = folder / "cert.pem", folder / "key.pem"
    proc = subprocess.run(
        [str(BIN / "compute-lab"), "serve", "--make-cert", "--certfile", str(certfile),
         "--keyfile", str(keyfile), *flags],
        capture_output=True, text=True, env=clean_env(), timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return certfile, keyfile, proc.stdout


# ---------------------------------------------------------------------------------------------
# serve --check: the certificate must name every --public-host
# ---------------------------------------------------------------------------------------------


def test_check_refuses_a_certificate_that_does_not_name_the_public_host(capsys, tmp_path):
    from addin import tokens

    certfile, keyfile, _ = make_cert(tmp_path)  # localhost, 127.0.0.1, ::1
    token_file = tmp_path / "t.json"
    tokens.create(token_file, "alice")
    flags = ["--certfile", str(certfile), "--keyfile", str(keyfile), "--token-file",
             str(token_file), "--license-key", "noncommercial"]  # fmt: skip
    for run in (["--check"], ["--port", "1"]):  # refused before anything binds
        status, out, err = run_cli(
            capsys, "serve", *flags, "--public-host", "excel-lab.example.com:8443", *run
        )
        assert status == 2 and out == "" and len(err.strip().splitlines()) == 1, err
        assert (
            f"--public-host excel-lab.example.com:8443 is not covered by the certificate "
            f"{certfile}, which names localhost, 127.0.0.1, ::1:"
        ) in err
    # A certificate made for the name is accepted, port or not; another name still is not.
    named = tmp_path / "named"
    named.mkdir()
    certfile, keyfile, _ = make_cert(named, "--public-host", "excel-lab.example.com")
    flags[1], flags[3] = str(certfile), str(keyfile)
    status, out, err = run_cli(
        capsys, "serve", *flags, "--public-host", "excel-lab.example.com:8443", "--check"
    )
    assert status == 0 and out.startswith("configuration OK: https://127.0.0.1:8000"), err
    status, _, err = run_cli(
        capsys, "serve", *flags, "--public-host", "excel-lab.example.com",
        "--public-host", "other.example.com", "--check",
    )  # fmt: skip
    assert status == 2 and "--public-host other.example.com is not covered" in err


def test_a_wildcard_names_one_label_and_an_address_matches_an_ip_name():
    dns, ips = ["*.example.com", "lab.example.org"], [certs.ipaddress.ip_address("10.0.0.5")]
    assert certs.covers(dns, ips, "excel-lab.example.com")
    assert certs.covers(dns, ips, "excel-lab.example.com:8443")
    assert certs.covers(dns, ips, "LAB.example.org")
    assert not certs.covers(dns, ips, "a.b.example.com")  # a wildcard is one label
    assert not certs.covers(dns, ips, "example.com")
    assert certs.covers(dns, ips, "10.0.0.5") and not certs.covers(dns, ips, "10.0.0.6")
    assert not certs.covers(["10.0.0.6"], [], "10.0.0.6")  # an address needs an IP name


# ---------------------------------------------------------------------------------------------
# serve: one worker by default
# ---------------------------------------------------------------------------------------------


def test_serve_defaults_to_one_worker(capsys):
    status, out, err = run_cli(capsys, "serve", "--license-key", "noncommercial", "--check")
    assert status == 0, err
    assert "; 1 worker(s);" in out
    status, out, _ = run_cli(capsys, "serve", "--license-key", "x", "--workers", "3", "--check")
    assert status == 0 and "; 3 worker(s);" in out


def test_serve_starts_one_worker_process_by_default(tmp_path):
    log = tmp_path / "serve.log"

    def serve(port):
        return [str(BIN / "compute-lab"), "serve", "--port", str(port)]

    env = clean_env(XLWINGS_LICENSE_KEY="noncommercial", DOTENV_PATH=str(tmp_path / "no.env"))
    with local_server(serve, env=env, log=log, ready_path="/health"):
        text = log.read_text()
    assert "; 1 worker(s); no sign-in" in text
    assert "Started parent process" not in text  # uvicorn's multi-worker supervisor
    assert "make a certificate with compute-lab serve --make-cert" in text  # no certificate yet


# ---------------------------------------------------------------------------------------------
# serve --make-cert
# ---------------------------------------------------------------------------------------------


def test_make_cert_writes_a_pair_check_accepts_and_never_replaces_it(capsys, tmp_path):
    certfile, keyfile, out = make_cert(tmp_path, "--public-host", "lab.example.com:8443")
    assert out.startswith(
        f"wrote {certfile} and {keyfile} (its key, mode 600): a self-signed certificate for "
        "localhost, 127.0.0.1, ::1, lab.example.com, valid until "
    )
    assert "Excel accepts it once this computer trusts it" in out
    assert stat.S_IMODE(keyfile.stat().st_mode) == 0o600
    dns, ips = certs.certificate_names(certfile)
    assert dns == ["localhost", "lab.example.com"] and [str(i) for i in ips] == ["127.0.0.1", "::1"]
    commands.check_tls_files(certfile, keyfile)  # the key is the certificate's, unencrypted
    status, out, err = run_cli(
        capsys, "serve", "--license-key", "x", "--certfile", str(certfile), "--keyfile",
        str(keyfile), "--check",
    )  # fmt: skip
    assert status == 0 and out.startswith("configuration OK: https://127.0.0.1:8000"), err
    assert "for localhost, 127.0.0.1, ::1, lab.example.com" in out
    before = certfile.read_bytes(), keyfile.read_bytes()
    status, out, err = run_cli(
        capsys, "serve", "--make-cert", "--certfile", str(certfile), "--keyfile",
        str(tmp_path / "other-key.pem"),
    )  # fmt: skip
    assert status == 2 and len(err.strip().splitlines()) == 1
    assert f"--certfile {certfile} exists; delete it first" in err
    assert (certfile.read_bytes(), keyfile.read_bytes()) == before
    assert not (tmp_path / "other-key.pem").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cert.pem", "key.pem"]  # no leftovers


def test_make_cert_refusals_are_one_line(capsys, tmp_path):
    status, _, err = run_cli(capsys, "serve", "--make-cert", "--certfile", str(tmp_path / "c.pem"))
    assert status == 2 and "--make-cert: give both --certfile and --keyfile, or neither" in err
    status, _, err = run_cli(capsys, "serve", "--make-cert", "--check")
    assert status == 2 and "run --check after it" in err
    blocked = tmp_path / "file"
    blocked.write_text("")
    status, _, err = run_cli(
        capsys, "serve", "--make-cert", "--certfile", str(blocked / "c.pem"),
        "--keyfile", str(blocked / "k.pem"),
    )  # fmt: skip
    assert status == 2 and len(err.strip().splitlines()) == 1 and "--make-cert: cannot " in err


# ---------------------------------------------------------------------------------------------
# One install command and the licence, in messages and pages
# ---------------------------------------------------------------------------------------------


def test_messages_give_the_readme_install_command_and_the_licence_variable(capsys, monkeypatch):
    monkeypatch.delenv("XLWINGS_LICENSE_KEY", raising=False)
    status, _, err = run_cli(capsys, "serve", "--check")
    assert status == 2 and len(err.strip().splitlines()) == 1
    assert "run XLWINGS_LICENSE_KEY=noncommercial compute-lab serve" in err
    assert "PolyForm Noncommercial" in err and "paid xlwings licence" in err
    real = importlib.util.find_spec
    missing = {"xlwings_server"}
    monkeypatch.setattr(
        commands.importlib.util,
        "find_spec",
        lambda name, *a: None if name in missing else real(name),
    )
    status, _, err = run_cli(capsys, "serve", "--check")
    assert status == 2
    assert "xlwings Server is not installed: run pip install -e '.[server]' in the Compute" in err
    proc = subprocess.run(
        [str(BIN / "compute-lab"), "serve", "--port", str(free_port())],
        capture_output=True, text=True, timeout=120,
        env=clean_env(XLWINGS_LICENSE_KEY="not-a-key", DOTENV_PATH=os.devnull),
    )  # fmt: skip
    assert proc.returncode == 2 and "internal error" not in proc.stderr, proc.stderr
    assert (
        proc.stderr.strip()
        .splitlines()[-1]
        .startswith(
            "compute-lab serve: error: XLWINGS_LICENSE_KEY: Invalid xlwings license key. xlwings "
            "Server is licensed under PolyForm Noncommercial 1.0.0"
        )
    )
    missing = {"prometheus_client"}
    status, _, err = run_cli(capsys, "serve", "--license-key", "x", "--metrics", "--check")
    assert status == 2 and "run pip install -e '.[metrics]' in the Compute Lab folder" in err


def test_every_install_hint_in_the_repository_is_the_readme_one():
    """An extra is installed one way in every page, message, test and benchmark:
    ``pip install -e '.[EXTRA]'``, from the clone (the Docker image, which copies the source
    and installs it once, is the one place without ``-e``)."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    hints = []
    for name in listed:
        path = ROOT / name
        if path.suffix not in {".md", ".py", ".js", ".html", ".toml", ""} or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        for m in re.finditer(r"pip install[^\n]*?\[\w[\w,]*\]", text):
            hints.append((name, re.sub(r" (--quiet|--no-cache-dir|-qq?)\b", "", m.group(0))))
    assert any(name == "README.md" for name, _ in hints)
    wrong = [
        (name, hint)
        for name, hint in hints
        if not hint.startswith("pip install -e '.[")
        and name not in ("tests/test_serve_routes.py", "addin/deploy/Dockerfile")
    ]
    assert wrong == []
    assert "compute-lab[" not in "".join(h for _, h in hints)


# ---------------------------------------------------------------------------------------------
# The README's server route, as written, in a fresh copy of the repository
# ---------------------------------------------------------------------------------------------


def readme_server_commands():
    """The command lines of the ``shell`` block in the README's *Three ways into Excel*."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Three ways into Excel", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"^( *)```shell\n(.*?)^\1```", section, re.M | re.S)
    assert len(blocks) == 1, blocks
    lines = [line.split("#", 1)[0].strip() for line in blocks[0][1].splitlines()]
    return [line for line in lines if line]


def fresh_copy(folder):
    """The repository's files as a fresh clone has them (tracked and new, nothing ignored)."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout.splitlines()  # fmt: skip
    for name in listed:
        if (ROOT / name).is_file():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, folder / name)
    return folder


def test_readme_server_route_runs_as_written_in_a_fresh_copy(tmp_path):
    commands_shown = readme_server_commands()
    assert commands_shown == [
        "pip install -e '.[server]'",
        "compute-lab serve --make-cert",
        "XLWINGS_LICENSE_KEY=noncommercial compute-lab serve",
    ]
    clone = fresh_copy(tmp_path / "compute-lab")
    # The copy's own packages, run by this environment's compute-lab (as after the install).
    env = clean_env(PYTHONPATH=str(clone), DOTENV_PATH=str(tmp_path / "no.env"))

    # 1. The install: pip resolves it in the copy, and finds every dependency already here.
    argv = shlex.split(commands_shown[0])
    proc = subprocess.run(
        [sys.executable, "-m", *argv[:2], "--dry-run", *argv[2:]],
        cwd=clone, capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    if proc.returncode != 0 and "No matching distribution found for setuptools" in proc.stderr:
        pytest.skip("no package index reachable for pip's build dependencies")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "Would install compute-lab-0.1.0"

    # 2. The certificate, into the copy's addin/server/certs/.
    proc = subprocess.run(
        [str(BIN / "compute-lab"), *shlex.split(commands_shown[1])[1:]],
        cwd=clone, capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    certfile = clone / "addin/server/certs/localhost+2.pem"
    assert certfile.is_file() and (clone / "addin/server/certs/localhost+2-key.pem").is_file()

    # 3. The server, with the licence variable the line sets (and nothing else), on a free
    # port instead of 8000; Excel's view: the manifest over TLS, the certificate trusted.
    *assignments, program, command = shlex.split(commands_shown[2])
    assert (program, command) == ("compute-lab", "serve")
    env.update(a.split("=", 1) for a in assignments)
    log = tmp_path / "serve.log"
    port = free_port()

    def serve(port):
        return [str(BIN / "compute-lab"), "serve", "--port", str(port)]

    with local_server(serve, port=port, env=env, log=log, scheme="https", ready_path="/health"):
        trusted = ssl.create_default_context(cafile=str(certfile))
        for host in ("127.0.0.1", "localhost"):
            with (
                socket.create_connection(("127.0.0.1", port), timeout=10) as raw,
                trusted.wrap_socket(raw, server_hostname=host) as tls,
            ):
                tls.sendall(
                    f"GET /manifest.xml HTTP/1.1\r\nHost: {host}:{port}\r\n"
                    "Connection: close\r\n\r\n".encode()
                )
                answer = b""
                while chunk := tls.recv(65536):
                    answer += chunk
            assert answer.startswith(b"HTTP/1.1 200"), answer[:200]
            assert b'<DisplayName DefaultValue="Compute Lab"' in answer
        text = log.read_text()
    assert f"https://127.0.0.1:{port}" in text and "; 1 worker(s); no sign-in" in text
    assert "licence: noncommercial (from XLWINGS_LICENSE_KEY)" in text


# ---------------------------------------------------------------------------------------------
# The documented openssl lines make a pair serve accepts
# ---------------------------------------------------------------------------------------------


def test_the_documented_openssl_lines_make_a_pair_serve_accepts(capsys, tmp_path):
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    text = (ROOT / "docs" / "excel-routes.md").read_text(encoding="utf-8")
    block = re.search(r"```sh\n *(openssl req .*?)```", text, re.S)
    assert block, "docs/excel-routes.md shows the openssl lines in a sh block"
    command = block.group(1).replace("\\\n", " ")
    argv = shlex.split(command)
    certs_dir = tmp_path / "addin" / "server" / "certs"
    certs_dir.mkdir(parents=True)
    proc = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    certfile, keyfile = certs_dir / "localhost+2.pem", certs_dir / "localhost+2-key.pem"
    status, out, err = run_cli(
        capsys, "serve", "--license-key", "x", "--certfile", str(certfile), "--keyfile",
        str(keyfile), "--check",
    )  # fmt: skip
    assert status == 0, err
    assert "for localhost, 127.0.0.1, ::1" in out


# ---------------------------------------------------------------------------------------------
# A self-signed certificate in a real browser: refused until trusted; the pane outside Office
# ---------------------------------------------------------------------------------------------


def _spki_sha256(certfile):
    """The base64 SHA-256 of the certificate's public key: what Chromium's
    ``--ignore-certificate-errors-spki-list`` trusts (this one key, as trusting it would)."""
    import base64
    import hashlib

    from cryptography import x509
    from cryptography.hazmat.primitives import serialization

    cert = x509.load_pem_x509_certificate(Path(certfile).read_bytes())
    spki = cert.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return base64.b64encode(hashlib.sha256(spki).digest()).decode()


def test_a_made_certificate_is_refused_until_trusted_and_the_pane_outside_office(tmp_path):
    sys.path.insert(0, str(ROOT / "tests"))
    from browser import harness

    harness.require_browser()
    from playwright.sync_api import Error, sync_playwright

    certfile, keyfile, _ = make_cert(tmp_path)
    env = clean_env(XLWINGS_LICENSE_KEY="noncommercial", DOTENV_PATH=str(tmp_path / "no.env"))

    def serve(port):
        return [str(BIN / "compute-lab"), "serve", "--port", str(port), "--certfile",
                str(certfile), "--keyfile", str(keyfile)]  # fmt: skip

    # Trusting it: the docs' Linux line (Chromium's NSS database under $HOME) when certutil is
    # installed, else Chromium's flag that trusts this one key.
    home = tmp_path / "home"
    (home / ".pki" / "nssdb").mkdir(parents=True)
    trusted = []
    if shutil.which("certutil"):
        text = (ROOT / "docs" / "excel-routes.md").read_text(encoding="utf-8")
        line = re.search(r"\| Linux, Chrome or Chromium \| `([^`]+)`", text).group(1)
        line = line.replace("$HOME", str(home)).replace(
            "addin/server/certs/localhost+2.pem", str(certfile)
        )
        proc = subprocess.run(shlex.split(line), capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
    else:
        trusted = [f"--ignore-certificate-errors-spki-list={_spki_sha256(certfile)}"]

    with (
        local_server(serve, env=env, log=tmp_path / "serve.log", scheme="https") as base,
        sync_playwright() as pw,
    ):
        for args, profile in (([], "untrusted"), (trusted, "trusted")):
            context = pw.chromium.launch_persistent_context(
                str(tmp_path / profile),
                executable_path=harness.chromium_path(),
                headless=True,
                args=[*harness.CHROMIUM_ARGS, *args],
                env={**os.environ, "HOME": str(home if profile == "trusted" else tmp_path)},
            )
            try:
                page = context.new_page()
                if profile == "untrusted":
                    with pytest.raises(Error, match="ERR_CERT_AUTHORITY_INVALID"):
                        page.goto(f"{base}/taskpane.html")
                    continue
                page.goto(f"{base}/taskpane.html")
                # Outside Office, office.js finds no host: xlwings' notice, as the docs say.
                notice = page.locator("#xlwings-office-ready-error")
                notice.wait_for(state="visible", timeout=30_000)
                assert "The add-in didn't load properly." in notice.inner_text()
            finally:
                context.close()
