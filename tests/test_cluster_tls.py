"""Dask over TLS, for real: a certificate authority and certificates made by the test, a
``tls://`` scheduler and two workers as processes (:mod:`tests.dask_cluster`), declared in an
operator file as the default engine. The Trust page and ``calibration-atlas audit --engine``
compute on it and give the p-values of this machine's threads; a plain ``tcp://`` client, or
one whose certificates come from another authority, is refused within its timeout with a
sentence naming the cluster, not left hanging."""

from __future__ import annotations

import json
import time

import pytest
from streamlit.testing.v1 import AppTest

from core import cli
from core.kernels.declared import DaskTls, connect, declare_cluster, declared_engines
from tests.conftest import APP, upload_frame
from tests.dask_cluster import Cluster, make_certificates, p_values

pytest.importorskip("distributed")
pytest.importorskip("cryptography")
#: A refused connection must come back well within this (the connect timeout is 5 s).
REFUSED_WITHIN = 30.0


@pytest.fixture(scope="module")
def tls_cluster(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tls-cluster")
    started = Cluster(folder, make_certificates(folder / "certificates"))
    try:
        yield started
    finally:
        started.close()


def operator_file(folder, cluster: Cluster, tls: DaskTls, default: str = "secure") -> str:
    path = folder / "atlas.toml"
    path.write_text(f"""[engines]
default = "{default}"
gpu = false

[engines.dask.secure]
address = "{cluster.address}"
tls_ca_file = "{tls.ca_file}"
tls_client_cert = "{tls.client_cert}"
tls_client_key = "{tls.client_key}"
""")
    return str(path)


def own_tls(cluster: Cluster) -> DaskTls:
    files = cluster.certificates
    return DaskTls(str(files.ca_file), str(files.cert), str(files.key))


def trust_page(monkeypatch, tmp_path, config: str, b: int = 200) -> AppTest:
    from dashboard.cache import diagnostics
    from dashboard.state import cached_demo, set_active

    diagnostics.forget_sections()  # the store keys on the data, not on the engine
    monkeypatch.setenv("CALIBRATION_ATLAS_STORE", str(tmp_path / "tables"))
    monkeypatch.setenv("CALIBRATION_ATLAS_CONFIG", config)
    for name in ("CALIBRATION_ATLAS_DASK", "CALIBRATION_ATLAS_ENGINE"):
        monkeypatch.delenv(name, raising=False)
    at = AppTest.from_file(str(APP), default_timeout=600)
    set_active(cached_demo("itrustworthy"), "demo: itrustworthy", session=at.session_state)
    at.session_state["trust_b"] = b
    at.run()
    at.switch_page("views/trust.py").run()
    assert not at.exception, at.exception
    return at


def test_the_trust_page_and_the_cli_on_a_tls_cluster_give_the_threads_p_values(
        tls_cluster, monkeypatch, tmp_path, capsys) -> None:
    tls = own_tls(tls_cluster)
    on_threads = operator_file(tmp_path, tls_cluster, tls, default="threads")
    here = trust_page(monkeypatch, tmp_path, on_threads)
    secure = tmp_path / "secure"
    secure.mkdir()
    config = operator_file(secure, tls_cluster, tls)
    there = trust_page(monkeypatch, tmp_path, config)
    caption = " ".join(c.value for c in there.sidebar.caption)
    assert "Now: **dask “secure” (2 workers)**" in caption
    assert not there.sidebar.warning  # no refusal, no fallback
    assert len(p_values(here)) == 2 and p_values(there) == p_values(here)

    table = tmp_path / "audit.csv"
    upload_frame(n=300).to_csv(table, index=False)
    results = {}
    for engine_name in ("threads", "secure"):
        out = tmp_path / engine_name
        assert cli.main(["audit", str(table), "--label", "y", "--prob", "p", "--features",
                         "age,sex", "--formats", "html", "--resamples", "100", "--out",
                         str(out), "--engine", engine_name]) == 0
        document = json.loads((out / "results.json").read_text())
        results[engine_name] = (document["local"]["klce_grid"]["aggregated"]["p_value"],
                                document["local"]["klce_grid"]["p_values"],
                                document["provenance"]["engine"])
    err = capsys.readouterr().err
    assert "Computing on: dask “secure” (2 workers)" in err and "note:" not in err
    assert results["secure"][:2] == results["threads"][:2]
    assert results["secure"][2] == ["dask “secure” (2 workers)"]


def refused(declared) -> str:
    start = time.monotonic()
    with pytest.raises(ValueError) as caught:
        connect(declared).close()
    assert time.monotonic() - start < REFUSED_WITHIN  # a sentence, not a hang
    return str(caught.value)


def test_a_plain_tcp_client_or_another_authoritys_certificates_are_refused(
        tls_cluster, tmp_path, monkeypatch, capsys) -> None:
    plain = declare_cluster("plain", tls_cluster.address.replace("tls://", "tcp://"))
    message = refused(plain)
    assert message.startswith(f"The Dask cluster “plain” ({plain.address}) did not answer")
    assert "for tls://, the certificates" in message
    other = make_certificates(tmp_path / "other", name="Another authority")
    impostor = DaskTls(str(other.ca_file), str(other.cert), str(other.key))
    own = own_tls(tls_cluster)
    wrong_ca = DaskTls(str(other.ca_file), own.client_cert, own.client_key)
    for tls in (impostor, wrong_ca):
        declared = declare_cluster("secure", tls_cluster.address, tls)
        assert "did not answer within 5 s" in refused(declared)

    config = operator_file(tmp_path, tls_cluster, impostor)  # the CLI says the same
    monkeypatch.setenv("CALIBRATION_ATLAS_CONFIG", config)
    assert declared_engines().get("secure").tls == impostor
    table = tmp_path / "audit.csv"
    upload_frame(n=100).to_csv(table, index=False)
    start = time.monotonic()
    status = cli.main(["audit", str(table), "--label", "y", "--prob", "p", "--out",
                       str(tmp_path / "out"), "--engine", "secure"])
    assert status == 2 and time.monotonic() - start < REFUSED_WITHIN
    err = capsys.readouterr().err
    assert "error: The Dask cluster “secure”" in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()
