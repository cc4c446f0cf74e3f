"""Operator-declared engines: the operator file and the environment, every mistake a sentence,
TLS settings carried to Dask, and the command line's --dask / --engine."""

from __future__ import annotations

import numpy as np
import pytest

from core import cli
from core.kernels import engine
from core.kernels.declared import DaskTls, declared_engines, read_config
from core.stattests.klce import klce_test
from dashboard.settings import server_settings


def write(tmp_path, text: str) -> dict:
    path = tmp_path / "atlas.toml"
    path.write_text(text)
    return {"CALIBRATION_ATLAS_CONFIG": str(path)}


def test_threads_alone_by_default_and_the_gpu_when_declared() -> None:
    declaration = declared_engines(environ={})
    assert declaration.names() == ("threads", "gpu") and declaration.default == "threads"
    assert declared_engines(environ={"CALIBRATION_ATLAS_GPU": "0"}).names() == ("threads",)


def test_the_file_names_clusters_with_tls_and_the_environment_adds_and_wins(tmp_path) -> None:
    for name in ("ca.pem", "client.pem", "key.pem"):
        (tmp_path / name).write_text("pem")
    environ = write(tmp_path, f"""
[engines]
default = "secure"
gpu = false
[engines.dask.lab]
address = "tcp://10.1.2.3:8786"
[engines.dask.secure]
address = "tls://scheduler:8786"
tls_ca_file = "{tmp_path / 'ca.pem'}"
tls_client_cert = "{tmp_path / 'client.pem'}"
tls_client_key = "{tmp_path / 'key.pem'}"
""")
    declaration = declared_engines(environ=environ)
    assert declaration.names() == ("threads", "lab", "secure")
    assert declaration.default == "secure"
    secure = declaration.get("secure")
    assert secure.tls == DaskTls(str(tmp_path / "ca.pem"), str(tmp_path / "client.pem"),
                                 str(tmp_path / "key.pem"))
    assert secure.label() == "Dask cluster “secure”"
    environ.update({"CALIBRATION_ATLAS_DASK": "night=tcp://10.9.9.9:8786",
                    "CALIBRATION_ATLAS_GPU": "1"})
    declaration = declared_engines(environ=environ)
    assert declaration.names() == ("threads", "lab", "secure", "night", "gpu")
    assert declaration.default == "night"  # a cluster from the environment is meant for use
    environ["CALIBRATION_ATLAS_ENGINE"] = "threads"
    assert declared_engines(environ=environ).default == "threads"


@pytest.mark.parametrize(("text", "message"), [
    ('[engines.dask.lab]\naddress = "http://host:8786"', "must look like tcp://host:8786"),
    ('[engines.dask.lab]\naddress = "tcp://h:1"\ntls_ca_file = "x"', "sets only some of"),
    ('[engines.dask.lab]\naddress = "tcp://h:1"\nport = 3', "unknown setting(s) port"),
    ('[engines.dask.threads]\naddress = "tcp://h:1"', "cannot name a cluster"),
    ('[engines]\ndefault = "nowhere"', "No compute engine is declared under the name"),
    ('[engines]\ngpu = "maybe"', "write 1 or 0"),
    ("[engines\n", "is not valid TOML"),
])
def test_every_mistake_in_the_file_is_a_sentence(tmp_path, text, message) -> None:
    with pytest.raises(ValueError) as error:
        declared_engines(environ=write(tmp_path, text))
    assert message in str(error.value)


def test_tls_needs_a_tls_address_and_existing_files(tmp_path) -> None:
    environ = write(tmp_path, '[engines.dask.s]\naddress = "tcp://h:1"\ntls_ca_file = "a"\n'
                              'tls_client_cert = "b"\ntls_client_key = "c"')
    with pytest.raises(ValueError, match="is not tls://"):
        declared_engines(environ=environ)
    environ = write(tmp_path, '[engines.dask.s]\naddress = "tls://h:1"\ntls_ca_file = "a"\n'
                              'tls_client_cert = "b"\ntls_client_key = "c"')
    with pytest.raises(ValueError, match="the TLS file a does not exist"):
        declared_engines(environ=environ)


def test_a_missing_operator_file_is_named() -> None:
    with pytest.raises(ValueError, match="could not be read"):
        read_config({"CALIBRATION_ATLAS_CONFIG": "/no/such/atlas.toml"})


def test_server_settings_from_file_and_environment(tmp_path) -> None:
    environ = write(tmp_path, "[store]\nretention_days = 2\n[uploads]\nmax_rows = 500\n"
                              "[access]\nrequire_sign_in = true")
    chosen = server_settings(environ)
    assert (chosen.retention_days, chosen.max_rows, chosen.require_sign_in) == (2, 500, True)
    assert chosen.store_folder.parts[-2:] == ("calibration-atlas", "tables")
    environ.update({"CALIBRATION_ATLAS_MAX_ROWS": "7", "CALIBRATION_ATLAS_STORE": str(tmp_path)})
    assert server_settings(environ).max_rows == 7
    assert server_settings(environ).store_folder == tmp_path
    environ["CALIBRATION_ATLAS_MAX_MB"] = "-3"
    with pytest.raises(ValueError, match="CALIBRATION_ATLAS_MAX_MB is '-3'; write a positive"):
        server_settings(environ)


def test_a_lost_cluster_raises_or_falls_back_to_threads() -> None:
    class Gone:
        status = "closed"

    rng = np.random.default_rng(0)
    p = rng.uniform(0.1, 0.9, 300)
    y = (rng.random(300) < p).astype(int)
    X = rng.normal(size=(300, 2))
    expected = klce_test(p, y, X, n_resamples=50, seed=3, computation="exact")
    with engine.use("dask", client=Gone()), pytest.raises(engine.ClusterLost,
                                                          match="stopped answering"):
        klce_test(p, y, X, n_resamples=50, seed=3, computation="exact")
    with engine.use("dask", client=Gone(), fallback=True, label="lab"):
        fell_back = klce_test(p, y, X, n_resamples=50, seed=3, computation="exact")
        assert engine.current().name == "threads"
    message = engine.take_fallback()
    assert "“lab” stopped answering" in message and "this machine's threads" in message
    assert engine.take_fallback() is None
    assert fell_back.p_value == expected.p_value and fell_back.statistic == expected.statistic


def test_cli_engine_options_fail_with_a_sentence(capsys) -> None:
    assert cli.main(["demo", "--dask", "http://somewhere"]) == 2
    assert "must look like tcp://host:8786" in capsys.readouterr().err
    assert cli.main(["demo", "--engine", "lab"]) == 2
    assert "No compute engine is declared under the name 'lab'" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stop:
        cli.main(["demo", "--engine", "threads", "--dask", "tcp://h:1"])
    assert stop.value.code == 2
