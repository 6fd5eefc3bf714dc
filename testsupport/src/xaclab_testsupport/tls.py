"""Certificates for tests: a throw-away CA and the server certificates it signs.

The tests of the server's HTTPS and of the agent's refusal of an untrusted
server need real certificates; these are made with ``cryptography`` (EC
P-256, valid for a day), never kept.
"""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


@dataclass(frozen=True)
class CertAuthority:
    """A CA's certificate and key files (PEM)."""

    cert: Path
    key: Path


def _write_key(key: ec.EllipticCurvePrivateKey, path: Path) -> None:
    path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    path.chmod(0o600)


def _validity(builder: x509.CertificateBuilder) -> x509.CertificateBuilder:
    now = datetime.datetime.now(datetime.UTC)
    return builder.not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(
        now + datetime.timedelta(days=1)
    )


def make_ca(directory: Path, name: str = "xaclab test CA") -> CertAuthority:
    """A self-signed CA in ``directory`` (``<name>.crt``, ``<name>.key``)."""
    directory.mkdir(parents=True, exist_ok=True)
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    cert = (
        _validity(x509.CertificateBuilder())
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=False,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .sign(key, hashes.SHA256())
    )
    stem = name.replace(" ", "-")
    ca = CertAuthority(cert=directory / f"{stem}.crt", key=directory / f"{stem}.key")
    ca.cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    _write_key(key, ca.key)
    return ca


def issue(
    ca: CertAuthority, directory: Path, *, name: str, sans: tuple[str, ...] = ("localhost", "127.0.0.1")
) -> tuple[Path, Path]:
    """A server certificate for ``sans`` (names and IP addresses) signed by ``ca``:
    the paths of its certificate and key."""
    directory.mkdir(parents=True, exist_ok=True)
    ca_key = serialization.load_pem_private_key(ca.key.read_bytes(), password=None)
    assert isinstance(ca_key, ec.EllipticCurvePrivateKey)
    ca_cert = x509.load_pem_x509_certificate(ca.cert.read_bytes())
    key = ec.generate_private_key(ec.SECP256R1())
    names: list[x509.GeneralName] = []
    for san in sans:
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(san)))
        except ValueError:
            names.append(x509.DNSName(san))
    cert = (
        _validity(x509.CertificateBuilder())
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    cert_path, key_path = directory / f"{name}.crt", directory / f"{name}.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    _write_key(key, key_path)
    return cert_path, key_path
