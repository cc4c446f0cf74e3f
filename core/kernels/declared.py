"""The compute engines an operator declares: the only places a served app may compute.

Whoever runs the server (the *operator*) names the engines the app may use; a visitor of the
app picks one of those names and never types an address. Two sources, the environment
winning over the file:

* an operator file, a TOML file named by ``CALIBRATION_ATLAS_CONFIG``::

      [engines]
      default = "lab"          # the engine a new session starts on (default "threads")
      gpu = true               # offer the GPU when CuPy sees one (default true)

      [engines.dask.lab]       # one table per Dask scheduler; "lab" is the name shown
      address = "tls://scheduler.lab.example:8786"
      tls_ca_file = "/etc/dask/ca.pem"          # Dask's TLS settings (all three or none)
      tls_client_cert = "/etc/dask/client.pem"
      tls_client_key = "/etc/dask/client-key.pem"

* environment variables: ``CALIBRATION_ATLAS_DASK`` (one address, or ``name=address`` pairs
  separated by commas), ``CALIBRATION_ATLAS_GPU`` (``0`` hides the GPU) and
  ``CALIBRATION_ATLAS_ENGINE`` (the default engine's name; without it, the first cluster of
  ``CALIBRATION_ATLAS_DASK``, else the file's ``default``, else threads). A Dask address from the
  environment takes its TLS settings from Dask's own configuration
  (``DASK_DISTRIBUTED__COMM__TLS__CA_FILE``, ``…__CLIENT__CERT``, ``…__CLIENT__KEY``).

``"threads"`` (this machine) is always declared. Every problem in a declaration raises a
``ValueError`` whose sentence names the setting, the value and the fix, so a server with a
wrong file refuses to start its pages instead of connecting somewhere unintended.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # pragma: no cover — Python 3.10 installs tomli instead
    import tomli as tomllib

CONFIG_VARIABLE = "CALIBRATION_ATLAS_CONFIG"
DASK_VARIABLE = "CALIBRATION_ATLAS_DASK"
GPU_VARIABLE = "CALIBRATION_ATLAS_GPU"
DEFAULT_VARIABLE = "CALIBRATION_ATLAS_ENGINE"
KINDS = ("threads", "dask", "gpu")
#: The names of the two engines that are not Dask clusters.
LOCAL, GPU = "threads", "gpu"
ADDRESS_SCHEMES = ("tcp://", "tls://")
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9 ._-]{0,39}")
TLS_FIELDS = ("tls_ca_file", "tls_client_cert", "tls_client_key")
DASK_FIELDS = ("address", *TLS_FIELDS)
ENGINE_FIELDS = ("default", "gpu", "dask")
TRUE, FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off", "")


@dataclass(frozen=True)
class DaskTls:
    """Dask's TLS settings for one scheduler: the certificate authority that signed the
    scheduler's certificate, and this client's certificate and key (PEM files).

    Attributes
    ----------
    ca_file : str
        The certificate authority (PEM) that signed the scheduler's certificate.
    client_cert : str
        This client's certificate (PEM).
    client_key : str
        Its key (PEM).
    """

    ca_file: str
    client_cert: str
    client_key: str

    def security(self):
        """A ``distributed.security.Security`` that encrypts and authenticates the link."""
        from distributed.security import Security

        return Security(tls_ca_file=self.ca_file, tls_client_cert=self.client_cert,
                        tls_client_key=self.client_key, require_encryption=True)


@dataclass(frozen=True)
class DeclaredEngine:
    """One engine the operator allows: ``kind`` in :data:`KINDS`, the ``name`` a visitor
    picks, and for a Dask cluster its scheduler ``address`` and optional ``tls``."""

    name: str
    kind: str
    address: str | None = None
    tls: DaskTls | None = None

    def label(self) -> str:
        """What the sidebar shows: ``This machine (threads)``, ``GPU (CuPy)``,
        ``Dask cluster “lab”``."""
        if self.kind == "threads":
            return "This machine (threads)"
        if self.kind == "gpu":
            return "GPU (CuPy)"
        return f"Dask cluster “{self.name}”"


@dataclass(frozen=True)
class Declaration:
    """Every declared engine (this machine's threads first) and the default one's name.

    Attributes
    ----------
    engines : tuple of DeclaredEngine
        Every declared engine, this machine's threads first.
    default : str
        The default engine's name.
    """

    engines: tuple[DeclaredEngine, ...]
    default: str = LOCAL

    def names(self) -> tuple[str, ...]:
        return tuple(e.name for e in self.engines)

    def get(self, name: str) -> DeclaredEngine:
        """The engine called ``name``; a ``ValueError`` naming the declared ones otherwise."""
        for declared in self.engines:
            if declared.name == name:
                return declared
        raise ValueError(f"No compute engine is declared under the name {name!r}; the "
                         f"declared ones are {', '.join(self.names())}. Declare it in the "
                         f"operator file ({CONFIG_VARIABLE}) or in {DASK_VARIABLE}.")


def read_config(environ: Mapping[str, str] | None = None) -> dict:
    """The operator file named by ``CALIBRATION_ATLAS_CONFIG`` as a dict (``{}`` when unset).

    A file that is named but missing or not TOML raises a ``ValueError`` naming it.

    Parameters
    ----------
    environ : mapping, optional
        The environment (default: ``os.environ``).
    """
    environ = os.environ if environ is None else environ
    name = environ.get(CONFIG_VARIABLE, "").strip()
    if not name:
        return {}
    path = Path(name).expanduser()
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise ValueError(f"The operator file {path} ({CONFIG_VARIABLE}) could not be read: "
                         f"{error.strerror or error}. Point {CONFIG_VARIABLE} at a readable "
                         "TOML file, or unset it.") from None
    except tomllib.TOMLDecodeError as error:
        raise ValueError(f"The operator file {path} ({CONFIG_VARIABLE}) is not valid TOML: "
                         f"{error}. Fix that line.") from None


def declared_engines(config: Mapping | None = None,
                     environ: Mapping[str, str] | None = None) -> Declaration:
    """The engines of the operator file's ``[engines]`` table and of the environment.

    Parameters
    ----------
    config : mapping, optional
        The parsed operator file (default: :func:`read_config`).
    environ : mapping, optional
        The environment (default: ``os.environ``).

    Returns
    -------
    Declaration
        ``threads`` first, then the Dask clusters, then ``gpu`` when offered; and the
        default engine's name.
    """
    environ = os.environ if environ is None else environ
    config = read_config(environ) if config is None else config
    section = config.get("engines", {})
    if not isinstance(section, Mapping):
        raise ValueError("[engines] in the operator file must be a table, e.g. "
                         "[engines.dask.lab] with address = \"tcp://host:8786\".")
    unknown = sorted(set(section) - set(ENGINE_FIELDS))
    if unknown:
        raise ValueError(f"[engines] in the operator file has the unknown setting(s) "
                         f"{', '.join(unknown)}; the settings are {', '.join(ENGINE_FIELDS)}.")
    clusters = dict(_file_clusters(section.get("dask", {})))
    from_environment = dict(_environment_clusters(environ.get(DASK_VARIABLE, "")))
    clusters.update(from_environment)
    gpu = _flag(environ[GPU_VARIABLE], GPU_VARIABLE) if environ.get(GPU_VARIABLE) else \
        _flag(section.get("gpu", True), "[engines] gpu")
    engines = (DeclaredEngine(LOCAL, "threads"), *clusters.values(),
               *((DeclaredEngine(GPU, "gpu"),) if gpu else ()))
    declaration = Declaration(engines)
    # a cluster named only in the environment is meant to be used: it is the default then
    default = (environ.get(DEFAULT_VARIABLE, "").strip()
               or (next(iter(from_environment)) if from_environment else "")
               or str(section.get("default", LOCAL)))
    declaration.get(default)  # raises, naming the declared engines, when it is not one
    return Declaration(engines, default)


def _file_clusters(tables: object):
    if not isinstance(tables, Mapping):
        raise ValueError("[engines.dask] in the operator file must hold one table per "
                         "scheduler, e.g. [engines.dask.lab] with address = "
                         "\"tcp://host:8786\".")
    for name, table in tables.items():
        where = f"[engines.dask.{name}]"
        if not isinstance(table, Mapping):
            raise ValueError(f"{where} must be a table with address = \"tcp://host:8786\".")
        unknown = sorted(set(table) - set(DASK_FIELDS))
        if unknown:
            raise ValueError(f"{where} has the unknown setting(s) {', '.join(unknown)}; the "
                             f"settings are {', '.join(DASK_FIELDS)}.")
        tls_values = [table.get(f) for f in TLS_FIELDS]
        if any(tls_values) and not all(tls_values):
            raise ValueError(f"{where} sets only some of {', '.join(TLS_FIELDS)}; Dask's TLS "
                             "needs the CA file, the client certificate and its key.")
        tls = DaskTls(*(str(v) for v in tls_values)) if all(tls_values) else None
        yield str(name), declare_cluster(str(name), table.get("address"), tls, where)


def _environment_clusters(text: str):
    for index, part in enumerate(p.strip() for p in text.split(",") if p.strip()):
        name, _, address = part.rpartition("=") if "=" in part else ("", "", part)
        name = name.strip() or ("dask" if index == 0 else f"dask-{index + 1}")
        yield name, declare_cluster(name, address.strip(), None, DASK_VARIABLE)


def declare_cluster(name: str, address: object, tls: DaskTls | None = None,
                    where: str = "--dask") -> DeclaredEngine:
    """A declared Dask cluster, its name, address and TLS files checked (``where`` names
    the setting in the messages)."""
    if not NAME_PATTERN.fullmatch(name) or name in (LOCAL, GPU):
        raise ValueError(f"{where}: {name!r} cannot name a cluster; use up to 40 letters, "
                         "digits, spaces, dots, dashes or underscores, other than 'threads' "
                         "and 'gpu'.")
    if not isinstance(address, str) or not address.startswith(ADDRESS_SCHEMES) \
            or len(address) <= len("tcp://"):
        raise ValueError(f"{where}: the scheduler address {address!r} must look like "
                         "tcp://host:8786 or tls://host:8786 (what `dask scheduler` prints).")
    if tls is not None and not address.startswith("tls://"):
        raise ValueError(f"{where} has TLS settings but the address {address} is not "
                         "tls://; write tls://host:port.")
    for path in (tls.ca_file, tls.client_cert, tls.client_key) if tls else ():
        if not Path(path).expanduser().is_file():
            raise ValueError(f"{where}: the TLS file {path} does not exist.")
    return DeclaredEngine(name, "dask", address, tls)


def _flag(value: object, where: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in TRUE or text in FALSE:
        return text in TRUE
    raise ValueError(f"{where} is {value!r}; write 1 or 0 (true or false).")


def connect(declared: DeclaredEngine, timeout: float = 5.0):
    """A ``dask.distributed.Client`` for a declared cluster (its TLS settings applied), or a
    ``ValueError`` saying it did not answer within ``timeout`` seconds.

    Parameters
    ----------
    declared : DeclaredEngine
        A declared Dask engine.
    timeout : float, default 5.0
        Seconds to wait for the scheduler.
    """
    if declared.kind != "dask":
        raise ValueError(f"{declared.label()} is not a Dask cluster.")
    from distributed import Client

    security = declared.tls.security() if declared.tls is not None else None
    try:
        return Client(declared.address, timeout=f"{timeout}s", security=security,
                      set_as_default=False)
    except Exception as error:  # noqa: BLE001 — OSError, TimeoutError, TLS errors: all "no"
        raise ValueError(
            f"The Dask cluster “{declared.name}” ({declared.address}) did not answer within "
            f"{timeout:g} s ({type(error).__name__}). Check that `dask scheduler` runs there "
            "and, for tls://, the certificates.") from None
