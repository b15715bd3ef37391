"""The deployment files (addin/deploy/), tested as far as this machine allows (issue 20).

No systemd, Docker or proxy runs here: the commands the unit and the image run are checked
with ``compute-lab serve --check`` (the same flags, paths swapped for temporary ones), and the
proxy configurations are checked to forward to the address the server listens on, with the
server's own body limit.
"""

from __future__ import annotations

import importlib.util
import re
import shlex
from pathlib import Path

import pytest

from addin import tokens

DEPLOY = Path(__file__).resolve().parent.parent / "addin" / "deploy"

if importlib.util.find_spec("xlwings_server") is None:
    pytest.skip("needs the server extra (xlwings-server)", allow_module_level=True)


def check(capsys, monkeypatch, argv, tmp_path):
    """Run ``argv`` (a compute-lab serve command line) with --check, the token file swapped."""
    from compute_lab.cli import main

    token_file = tmp_path / "tokens.json"
    tokens.create(token_file, "alice")
    monkeypatch.setenv("XLWINGS_LICENSE_KEY", "noncommercial")
    monkeypatch.setenv("COMPUTE_LAB_TOKEN_FILE", str(token_file))
    args = list(argv)
    if "--token-file" in args:
        args[args.index("--token-file") + 1] = str(token_file)
    if "--check" not in args:
        args.append("--check")
    status = main(args)
    out = capsys.readouterr()
    assert status == 0, out.err
    return out.out


def unit_lines(key):
    text = (DEPLOY / "compute-lab.service").read_text()
    return [line.split("=", 1)[1] for line in text.splitlines() if line.startswith(key + "=")]


def test_systemd_unit_runs_a_configuration_serve_accepts(capsys, monkeypatch, tmp_path):
    for key in ("ExecStartPre", "ExecStart"):
        (command,) = unit_lines(key)
        argv = shlex.split(command)
        assert argv[0] == "/opt/compute-lab/.venv/bin/compute-lab" and argv[1] == "serve"
        out = check(capsys, monkeypatch, argv[1:], tmp_path / key)
        assert "configuration OK: http://127.0.0.1:8000; 2 worker(s)" in out
        assert "sign-in with 1 token(s)" in out and "excel-lab.example.com" in out
    # Stopping waits longer than serve's graceful shutdown.
    from addin.commands import GRACEFUL_SHUTDOWN_SECONDS

    (stop,) = unit_lines("TimeoutStopSec")
    assert int(stop) > GRACEFUL_SHUTDOWN_SECONDS
    assert unit_lines("User") == ["compute-lab"] and unit_lines("NoNewPrivileges") == ["yes"]


def test_docker_image_command_is_one_serve_accepts(capsys, monkeypatch, tmp_path):
    text = (DEPLOY / "Dockerfile").read_text()
    cmd = re.search(r'^CMD \["sh", "-c", "(.*)"\]$', text, re.M).group(1)
    cmd = cmd.replace('\\"', '"')
    env = {"PORT": "8000", "WORKERS": "2", "PUBLIC_HOST": "excel-lab.example.com"}
    for name, value in env.items():
        cmd = cmd.replace(f'"${name}"', value)
    argv = shlex.split(cmd)
    assert argv[:3] == ["exec", "compute-lab", "serve"]
    out = check(capsys, monkeypatch, argv[2:], tmp_path)
    assert "configuration OK: http://127.0.0.1:8000; 2 worker(s)" in out
    assert "USER nonroot" in text and "COMPUTE_LAB_TOKEN_FILE=/data/serve-tokens.json" in text


def test_compose_publishes_only_the_proxy():
    text = (DEPLOY / "compose.yaml").read_text()
    server = text[text.index("  compute-lab:") :]
    server = server[: server.index("\nvolumes:")]
    assert 'network_mode: "service:caddy"' in server and "ports:" not in server
    assert "XLWINGS_LICENSE_KEY: ${XLWINGS_LICENSE_KEY:?" in server
    assert "stop_grace_period: 45s" in server


def test_proxies_forward_to_the_server_with_its_body_limit():
    from addin.team import MAX_BODY_BYTES

    megabytes = MAX_BODY_BYTES // 2**20
    caddy = (DEPLOY / "Caddyfile").read_text()
    assert "reverse_proxy 127.0.0.1:8000" in caddy and f"max_size {megabytes}MB" in caddy
    nginx = (DEPLOY / "nginx.conf").read_text()
    assert "proxy_pass http://127.0.0.1:8000;" in nginx
    assert f"client_max_body_size {megabytes}m;" in nginx
    assert "proxy_set_header Host $host;" in nginx


def test_the_image_copies_every_package_the_project_ships():
    """The Dockerfile copies each top-level package pyproject's package list includes."""
    import tomllib

    root = DEPLOY.parent.parent
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    packages = {p.rstrip("*") for p in project["tool"]["setuptools"]["packages"]["find"]["include"]}
    dockerfile = (DEPLOY / "Dockerfile").read_text(encoding="utf-8")
    copied = set(re.findall(r"^COPY (\w+) \./\1$", dockerfile, flags=re.M))
    assert packages <= copied, sorted(packages - copied)
