"""What the operator of a served app decides, read from the operator file and the environment.

The operator file is the TOML file named by ``CALIBRATION_ATLAS_CONFIG`` (see
``calibration-atlas.example.toml``); an environment variable wins over the file. Besides the
compute engines (``[engines]``, :mod:`core.kernels.declared`):

==========================  ==============================  =================================
file                        environment                     meaning (default)
==========================  ==============================  =================================
``[store] folder``          ``CALIBRATION_ATLAS_STORE``     where uploads and their mapping
                                                            and settings are kept
                                                            (``calibration-atlas/tables``
                                                            under the user's cache folder)
``[store] retention_days``  ``CALIBRATION_ATLAS_RETENTION``  days a stored table is kept
                                                            after its last use (7)
``[store] max_tables``      ``CALIBRATION_ATLAS_MAX_TABLES``  stored tables kept at most; the
                                                            least recently used go first (100)
``[uploads] max_megabytes`` ``CALIBRATION_ATLAS_MAX_MB``    largest upload taken (200)
``[uploads] max_rows``      ``CALIBRATION_ATLAS_MAX_ROWS``  most rows an upload may have
                                                            (2,000,000)
``[access] require_sign_in`` ``CALIBRATION_ATLAS_SIGN_IN``  refuse to show anything unless
                                                            ``[auth]`` is configured in
                                                            ``.streamlit/secrets.toml`` (false;
                                                            ``make serve`` sets it)
==========================  ==============================  =================================

A wrong value stops the app with one sentence naming the setting and the fix
(:func:`server_settings` raises ``ValueError``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from core.kernels import Declaration, declared_engines, read_config

APP_NAME = "calibration-atlas"
#: (file table, file key, environment variable, default, kind)
FIELDS = {
    "store_folder": ("store", "folder", "CALIBRATION_ATLAS_STORE", None, "path"),
    "retention_days": ("store", "retention_days", "CALIBRATION_ATLAS_RETENTION", 7.0,
                       "number"),
    "max_tables": ("store", "max_tables", "CALIBRATION_ATLAS_MAX_TABLES", 100, "count"),
    "max_megabytes": ("uploads", "max_megabytes", "CALIBRATION_ATLAS_MAX_MB", 200.0,
                      "number"),
    "max_rows": ("uploads", "max_rows", "CALIBRATION_ATLAS_MAX_ROWS", 2_000_000, "count"),
    "require_sign_in": ("access", "require_sign_in", "CALIBRATION_ATLAS_SIGN_IN", False,
                        "flag"),
}
TRUE, FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def default_store() -> Path:
    """``calibration-atlas/tables`` under the user's cache folder (``platformdirs``; on Linux
    ``$XDG_CACHE_HOME`` or ``~/.cache``)."""
    try:
        from platformdirs import user_cache_dir

        base = Path(user_cache_dir(APP_NAME, appauthor=False))
    except ImportError:  # pragma: no cover — platformdirs comes with the dependencies
        base = Path(os.environ.get("XDG_CACHE_HOME", "~/.cache")).expanduser() / APP_NAME
    return base / "tables"


@dataclass(frozen=True)
class ServerSettings:
    """The operator's settings of a served app (see the module's table)."""

    engines: Declaration
    store_folder: Path
    retention_days: float = 7.0
    max_tables: int = 100
    max_megabytes: float = 200.0
    max_rows: int = 2_000_000
    require_sign_in: bool = False


def server_settings(environ: Mapping[str, str] | None = None) -> ServerSettings:
    """The settings of this server: operator file, then environment, then defaults."""
    environ = os.environ if environ is None else environ
    config = read_config(environ)
    values = {}
    for name, (table, key, variable, default, kind) in FIELDS.items():
        section = config.get(table, {})
        if variable in environ and environ[variable].strip():
            raw, where = environ[variable].strip(), variable
        elif isinstance(section, Mapping) and key in section:
            raw, where = section[key], f"[{table}] {key} in the operator file"
        else:
            values[name] = default
            continue
        values[name] = _convert(raw, kind, where)
    folder = values.pop("store_folder") or default_store()
    return ServerSettings(engines=declared_engines(config, environ), store_folder=folder,
                          **values)


def _convert(raw: object, kind: str, where: str) -> object:
    if kind == "path":
        return Path(str(raw)).expanduser()
    if kind == "flag":
        text = str(raw).strip().lower()
        if isinstance(raw, bool) or text in TRUE + FALSE:
            return raw if isinstance(raw, bool) else text in TRUE
        raise ValueError(f"{where} is {raw!r}; write true or false (1 or 0).")
    try:
        number = float(raw) if kind == "number" else int(str(raw).replace("_", ""))
    except (TypeError, ValueError):
        number = None
    if number is None or not number > 0:
        noun = "a positive number" if kind == "number" else "a positive whole number"
        raise ValueError(f"{where} is {raw!r}; write {noun}.")
    return number
