"""A real Dask cluster for tests, started as users start one: `dask scheduler` and `dask worker`
processes from the command line on this machine's loopback, over ``tcp://`` or, with
certificates made for the test (:func:`make_certificates`), over ``tls://``.

Workers run without a nanny, so the process a test kills is the worker itself (a nanny's
child may outlive its killed parent for a while).
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import re
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import ROOT

BIN = Path(sys.executable).parent
#: How long a test waits for the cluster to start, or for a client to connect.
START_SECONDS = 120


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass(frozen=True)
class Certificates:
    """PEM files: a certificate authority, and one certificate and key it signed for
    127.0.0.1 / localhost (Dask uses the same kind for the scheduler, workers and clients)."""

    ca_file: Path
    cert: Path
    key: Path

    def command_line(self) -> list[str]:
        """``dask scheduler`` / ``dask worker`` options for these files."""
        return ["--tls-ca-file", str(self.ca_file), "--tls-cert", str(self.cert),
                "--tls-key", str(self.key)]

    def security(self):
        from distributed.security import Security

        return Security(tls_ca_file=str(self.ca_file), tls_client_cert=str(self.cert),
                        tls_client_key=str(self.key), require_encryption=True)


def make_certificates(folder: Path, name: str = "Calibration Atlas test CA") -> Certificates:
    """A fresh certificate authority called ``name`` and a certificate for 127.0.0.1 and
    localhost that it signed (ECDSA P-256, valid for a day), written to ``folder``."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    folder.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name)
          .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
          .not_valid_before(now - datetime.timedelta(minutes=5))
          .not_valid_after(now + datetime.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True,
                                       crl_sign=True, content_commitment=False,
                                       key_encipherment=False, data_encipherment=False,
                                       key_agreement=False, encipher_only=False,
                                       decipher_only=False), critical=True)
          .sign(ca_key, hashes.SHA256()))
    leaf = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")]))
            .issuer_name(ca_name).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([
                x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                critical=False)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH,
                                                  ExtendedKeyUsageOID.CLIENT_AUTH]),
                           critical=False)
            .sign(ca_key, hashes.SHA256()))
    files = Certificates(folder / "ca.pem", folder / "node.pem", folder / "node-key.pem")
    files.ca_file.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    files.cert.write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    files.key.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                            serialization.PrivateFormat.PKCS8,
                                            serialization.NoEncryption()))
    files.key.chmod(0o600)
    return files


class Cluster:
    """`dask scheduler` and ``workers`` `dask worker` processes (one thread each) on
    127.0.0.1; over ``tls://`` when ``certificates`` are given. Returns once every worker has
    joined."""

    def __init__(self, folder: Path, certificates: Certificates | None = None,
                 workers: int = 2) -> None:
        port = free_port()
        self.certificates = certificates
        scheme = "tls" if certificates else "tcp"
        self.address = f"{scheme}://127.0.0.1:{port}"
        tls = certificates.command_line() if certificates else []
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        log = (folder / f"dask-{scheme}-{port}.log").open("w")
        self.scheduler = subprocess.Popen(
            [str(BIN / "dask"), "scheduler", "--host", "127.0.0.1", "--port", str(port),
             "--protocol", scheme, "--no-dashboard", *tls],
            stdout=log, stderr=subprocess.STDOUT, env=env)
        self.workers = [subprocess.Popen(
            [str(BIN / "dask"), "worker", self.address, "--nthreads", "1", "--no-nanny",
             "--no-dashboard", "--host", "127.0.0.1", *tls],
            stdout=log, stderr=subprocess.STDOUT, env=env) for _ in range(workers)]
        try:
            with self.client() as client:
                client.wait_for_workers(workers, timeout=START_SECONDS)
        except BaseException:
            self.close()
            raise

    def security(self):
        return self.certificates.security() if self.certificates else None

    def client(self):
        """A ``distributed.Client`` of this cluster (with its TLS settings)."""
        import distributed

        return distributed.Client(self.address, security=self.security(),
                                  timeout=f"{START_SECONDS}s", set_as_default=False)

    def close(self) -> None:
        for process in (*self.workers, self.scheduler):
            if process.poll() is None:
                process.kill()
            process.wait(timeout=30)


def kill_when_busy(cluster: Cluster, process: subprocess.Popen,
                   seconds: float = START_SECONDS) -> threading.Thread:
    """Kill ``process`` as soon as the scheduler has tasks processing (so mid-computation,
    whatever the machine's speed), or after ``seconds``, or if watching fails; the thread's
    ``busy`` attribute says whether tasks were running when it struck.

    The watching client connects before this returns, so the computation the caller starts
    next cannot finish before the watch begins (on a loaded machine a connection can take
    longer than a short computation)."""
    client = cluster.client()

    def watch() -> None:
        deadline = time.monotonic() + seconds
        try:
            while time.monotonic() < deadline:
                if any(client.processing().values()):
                    thread.busy = True
                    break
                time.sleep(0.02)
        finally:
            process.kill()
            client.close(timeout=10)

    thread = threading.Thread(target=watch, daemon=True)
    thread.busy = False
    thread.start()
    return thread


def p_values(at) -> list[str]:
    """The p-values the Trust page states in its verdict boxes (an AppTest), as text;
    ``p ≤ …`` at the resampling floor."""
    texts = [e.value for kind in ("success", "error") for e in getattr(at, kind)]
    return re.findall(r"(?<!\w)p (?:=|≤) (\d\.\d+)", " ".join(texts))
