"""The sign-in gate, tested without an identity provider: with ``[auth]`` in the secrets a
visitor who has not signed in sees the sign-in and nothing else; a signed-in one sees the app
and their name; ``require_sign_in`` without ``[auth]`` shows nothing but the reason."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests.conftest import APP

AUTH = {"redirect_uri": "http://localhost:8501/oauth2callback", "cookie_secret": "x" * 32,
        "client_id": "atlas", "client_secret": "secret",
        "server_metadata_url": "http://127.0.0.1:9/.well-known/openid-configuration"}


@pytest.fixture(autouse=True)
def store(tmp_path, monkeypatch):
    monkeypatch.setenv("CALIBRATION_ATLAS_STORE", str(tmp_path / "tables"))
    monkeypatch.delenv("CALIBRATION_ATLAS_SIGN_IN", raising=False)


def app(user: dict, auth: dict | None = AUTH) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=120)
    if auth is not None:
        at.secrets["auth"] = auth
    at.user = user
    at.run()
    assert not at.exception, at.exception
    return at


def everything_shown(at: AppTest) -> str:
    parts = [e.value for kind in ("title", "markdown", "caption", "error", "header", "subheader")
             for e in getattr(at, kind)]
    return " ".join(str(p) for p in parts)


def test_without_sign_in_a_visitor_sees_only_the_sign_in_button() -> None:
    at = app({"is_logged_in": False})
    assert [b.label for b in at.button] == ["Sign in"]
    assert len(at.sidebar) == 0  # no navigation, no dataset card, no engine
    shown = everything_shown(at)
    assert "Sign in to continue" in shown
    assert "Census" not in shown and "rows" not in shown
    assert not at.radio and not at.selectbox and not at.dataframe
    assert "active_audit" not in at.session_state  # no dataset was even loaded


def test_several_providers_get_a_button_each() -> None:
    auth = {"redirect_uri": AUTH["redirect_uri"], "cookie_secret": AUTH["cookie_secret"],
            "google": {k: AUTH[k] for k in ("client_id", "client_secret",
                                             "server_metadata_url")},
            "okta": {k: AUTH[k] for k in ("client_id", "client_secret",
                                           "server_metadata_url")}}
    at = app({"is_logged_in": False}, auth)
    assert [b.label for b in at.button] == ["Sign in with google", "Sign in with okta"]


def test_a_signed_in_user_sees_the_app_and_their_name() -> None:
    at = app({"is_logged_in": True, "name": "Ada Auditor", "email": "ada@example.org"})
    assert "Signed in as Ada Auditor <ada@example.org>" in [c.value for c in at.sidebar.caption]
    assert [b.key for b in at.sidebar.button if b.key == "sign_out"] == ["sign_out"]
    assert "Validation report" in everything_shown(at)


def test_required_sign_in_without_auth_shows_only_the_reason(monkeypatch) -> None:
    monkeypatch.setenv("CALIBRATION_ATLAS_SIGN_IN", "1")
    at = app({}, auth=None)
    assert len(at.sidebar) == 0 and not at.button
    assert "has no [auth] section, so nobody can sign in" in at.error[0].value


def test_without_auth_the_app_is_open_as_on_localhost() -> None:
    at = app({}, auth=None)
    assert "Validation report" in everything_shown(at)
    assert not [c for c in at.sidebar.caption if c.value.startswith("Signed in")]
