"""TLS certificates for ``compute-lab serve``: which names a certificate covers, and a
self-signed pair made without mkcert (``serve --make-cert``).

:func:`certificate_names` reads a PEM certificate's subject alternative names with the standard
library; :func:`uncovered` lists the host names a certificate does not cover (browsers and
Excel match the alternative names only, never the subject's common name).
:func:`make_self_signed` writes a new certificate and its unencrypted key with the
``cryptography`` package (part of the server extra), refusing to replace either file.
"""

from __future__ import annotations

import datetime as dt
import errno
import ipaddress
import os
import ssl
import tempfile
from pathlib import Path

__all__ = [
    "MAKE_CERT_DAYS",
    "MAKE_CERT_RSA_BITS",
    "LOCAL_NAMES",
    "certificate_names",
    "covers",
    "uncovered",
    "covered_names",
    "names_text",
    "make_self_signed",
]

#: Days a certificate made by ``serve --make-cert`` is valid: 825 is the longest validity
#: macOS and iOS accept for a TLS server certificate from any issuer, a locally trusted one
#: included (mkcert uses the same).
MAKE_CERT_DAYS = 825

#: Key size of ``--make-cert``'s RSA key: 2048 bits is the size every TLS client accepts
#: (macOS refuses RSA keys under 2048 bits).
MAKE_CERT_RSA_BITS = 2048

#: The names every certificate ``--make-cert`` makes covers: the personal server's addresses.
LOCAL_NAMES = ("localhost", "127.0.0.1", "::1")


def certificate_names(certfile):
    """``(dns_names, ip_addresses)`` of the first certificate in ``certfile``, from its subject
    alternative names (both lists empty if it has none); raises ``ValueError`` with the reason
    if the file cannot be decoded."""
    try:
        info = ssl._ssl._test_decode_cert(str(certfile))  # the standard library's own parser
    except (ssl.SSLError, OSError, AttributeError) as err:
        raise ValueError(str(err)) from None
    alt = info.get("subjectAltName", ())
    dns = [value.lower() for kind, value in alt if kind == "DNS"]
    ips = [ipaddress.ip_address(value.strip()) for kind, value in alt if kind == "IP Address"]
    return dns, ips


def _host_only(name):
    """``name`` without a ``:PORT`` suffix (``--public-host`` takes ``NAME[:PORT]``) or the
    brackets of ``[IPv6]:PORT``; a bare IPv6 address is kept whole."""
    if name.startswith("["):
        return name[1:].split("]", 1)[0]
    host, _, port = name.rpartition(":")
    return host if host and ":" not in host and port.isdigit() else name


def covers(dns_names, ip_addresses, name):
    """True if a certificate for these alternative names is valid for host ``name`` (RFC 6125:
    a wildcard ``*.`` stands for exactly one leftmost label; an IP address matches an IP name)."""
    host = _host_only(name).lower().rstrip(".")
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        address = None
    if address is not None:
        return address in ip_addresses
    for pattern in dns_names:
        pattern = pattern.rstrip(".")
        if pattern == host:
            return True
        if pattern.startswith("*.") and "." in host:
            first, rest = host.split(".", 1)
            if first and rest == pattern[2:]:
                return True
    return False


def uncovered(certfile, names):
    """``(missing, covered_text)``: the names among ``names`` the certificate does not cover,
    and the names it does cover as one text (``no names`` when it has none)."""
    dns, ips = certificate_names(certfile)
    missing = [name for name in names if not covers(dns, ips, name)]
    return missing, names_text(ssl._ssl._test_decode_cert(str(certfile)))


def names_text(info):
    """The alternative names of a decoded certificate (``ssl``'s dictionary) in its order, as
    one text: ``localhost, 127.0.0.1, ::1`` (``no names`` when it has none)."""
    listed = [
        value.lower() if kind == "DNS" else str(ipaddress.ip_address(value.strip()))
        for kind, value in info.get("subjectAltName", ())
        if kind in ("DNS", "IP Address")
    ]
    return ", ".join(listed) or "no names"


def covered_names(names):
    """``names`` as a certificate lists them: without ports or brackets, lower case, once each."""
    out = []
    for name in names:
        host = _host_only(name).strip("[]").lower()
        if host not in out:
            out.append(host)
    return out


def _alternative_names(names):
    from cryptography import x509

    out = []
    for host in covered_names(names):
        try:
            out.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            out.append(x509.DNSName(host))
    return out


def _write_new(path, data, mode):
    """Write ``data`` to ``path``, which must not exist: into a temporary file beside it first,
    then linked into place, so ``path`` is never half-written and never replaced."""
    folder = path.parent
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=folder)
    try:
        os.chmod(tmp, mode)
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        try:
            os.link(tmp, path)
        except FileExistsError:  # it appeared meanwhile
            raise FileExistsError(errno.EEXIST, "exists", str(path)) from None
    finally:
        os.unlink(tmp)


def make_self_signed(certfile, keyfile, names=LOCAL_NAMES, *, days=MAKE_CERT_DAYS, now=None):
    """Write a self-signed certificate for ``names`` (DNS names or IP addresses, first one the
    subject) to ``certfile`` and its unencrypted PKCS#8 key (mode 600) to ``keyfile``.

    The certificate is an end-entity certificate (not an authority: it can sign nothing else)
    for TLS servers, valid from now for ``days``. Raises ``FileExistsError`` if either file
    exists (nothing is written then) and ``ImportError`` without the ``cryptography`` package.
    Returns the expiry time."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    certfile, keyfile = Path(certfile), Path(keyfile)
    for path in (certfile, keyfile):
        if path.exists():
            raise FileExistsError(errno.EEXIST, "exists", str(path))
    key = rsa.generate_private_key(public_exponent=65537, key_size=MAKE_CERT_RSA_BITS)
    subject = x509.Name(
        [
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Compute Lab (self-signed)"),
            x509.NameAttribute(NameOID.COMMON_NAME, _host_only(names[0])),
        ]
    )
    now = now or dt.datetime.now(dt.UTC)
    until = now + dt.timedelta(days=days)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))  # a client clock slightly behind
        .not_valid_after(until)
        .add_extension(x509.SubjectAlternativeName(_alternative_names(names)), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_encipherment=True,
                content_commitment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=False,
                crl_sign=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    keyfile.parent.mkdir(parents=True, exist_ok=True)
    certfile.parent.mkdir(parents=True, exist_ok=True)
    _write_new(keyfile, key_pem, 0o600)
    try:
        _write_new(certfile, cert.public_bytes(serialization.Encoding.PEM), 0o644)
    except BaseException:
        keyfile.unlink()  # the key we just wrote: no key without its certificate
        raise
    return until
