"""Sign-in with a real OpenID Connect provider, in the system Chromium.

The test starts ``oidc-provider-mock`` (a provider made for tests: discovery, authorization
page, code exchange, ID tokens, end of session) on localhost with two people, and serves the
app with an ``[auth]`` section pointing at it (a secrets file in the test's folder, never the
repository's) and ``CALIBRATION_ATLAS_SIGN_IN=1``. Through the real redirect, code exchange
and signed cookie: a visitor sees only the sign-in button; signing in shows the person's name
and puts it in the report's provenance; signing out brings the button back; a tampered or an
expired auth cookie gets the button, not the app; two people signed in at once each see
their own name and table only.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from tests.conftest import upload_frame
from tests.e2e.conftest import free_port, requires_chromium, screenshot, serve
from tests.e2e.test_browser_team import open_page, settle, sidebar_text, use_upload

pytestmark = [requires_chromium, pytest.mark.e2e]
oidc = pytest.importorskip("oidc_provider_mock")

COOKIE = "_streamlit_user"  # Streamlit's signed identity cookie
SECRET = "a-cookie-secret-for-this-test-only-0123456789"
PEOPLE = {"alice": ("Alice Auditor", "alice@example.org"),
          "bob": ("Bob Reviewer", "bob@example.org")}
HIDDEN = ("Census", "Reliability", "Compute engine", "Upload", "Active dataset")


@pytest.fixture(scope="module")
def provider():
    users = [oidc.User(sub=sub, claims={"name": name, "email": email})
             for sub, (name, email) in PEOPLE.items()]
    with oidc.run_server_in_thread(user_claims=users) as server:
        yield f"http://localhost:{server.server_port}"


@pytest.fixture(scope="module")
def app(provider, tmp_path_factory):
    folder = tmp_path_factory.mktemp("sign-in")
    port = free_port()
    secrets = folder / "secrets.toml"
    secrets.write_text(
        f'[auth]\nredirect_uri = "http://127.0.0.1:{port}/oauth2callback"\n'
        f'cookie_secret = "{SECRET}"\nclient_id = "calibration-atlas"\n'
        'client_secret = "test-client-secret"\n'
        f'server_metadata_url = "{provider}/.well-known/openid-configuration"\n')
    with serve(folder, {"CALIBRATION_ATLAS_SIGN_IN": "1"}, port=port,
               args=("--secrets.files", str(secrets))) as (url, _):
        yield url, folder


def visitor(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 2400})
    page = context.new_page()
    page.set_default_timeout(180_000)
    return context, page


def sees_only_the_sign_in(page, url: str) -> None:
    page.goto(url)
    page.get_by_role("button", name="Sign in").wait_for()
    settle(page)
    body = page.locator("body").inner_text()
    assert "Sign in to continue" in body
    for hidden in HIDDEN:
        assert hidden not in body, hidden
    assert page.locator('[data-testid="stSidebar"]').count() == 0


def sign_in(page, url: str, who: str) -> None:
    """Through the provider: the app's button, the provider's page (one click on the
    predefined person), the code exchange, back to the app."""
    sees_only_the_sign_in(page, url)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("heading", name="Authorize Client").wait_for()
    assert page.url.startswith("http://localhost:")  # the provider's own page
    page.get_by_role("button", name=who, exact=True).click()
    name, email = PEOPLE[who]
    try:
        page.get_by_text(f"Signed in as {name}").wait_for(timeout=90_000)
    except Exception:
        screenshot(page, f"sign-in-{who}-failed")
        raise
    assert email in sidebar_text(page) and page.url.startswith(url)


def signed_cookie(context) -> dict:
    return next(c for c in context.cookies() if c["name"] == COOKIE)


def with_cookie(browser, url: str, cookie: dict):
    """A fresh browser context that holds only ``cookie``."""
    context, page = visitor(browser)
    context.add_cookies([{key: cookie[key] for key in
                          ("name", "value", "domain", "path", "httpOnly", "secure",
                           "sameSite")}])
    return context, page


def expired(value: str) -> str:
    """The same signed payload, signed with the app's secret 40 days ago: a genuine cookie
    past Streamlit's 30 days and a day's grace."""
    from itsdangerous import TimestampSigner, URLSafeTimedSerializer

    payload = URLSafeTimedSerializer(SECRET, salt=COOKIE).loads(value)

    class Then(TimestampSigner):
        def get_timestamp(self) -> int:
            return int(time.time()) - 40 * 86_400

    return URLSafeTimedSerializer(SECRET, salt=COOKIE, signer=Then).dumps(payload)


def tampered(value: str) -> str:
    """The cookie with one character of its payload changed (its signature kept)."""
    k = 5
    return value[:k] + ("A" if value[k] != "A" else "B") + value[k + 1:]


def test_signing_in_out_and_forged_cookies(browser, app, tmp_path) -> None:
    url, _ = app
    context, page = visitor(browser)
    sign_in(page, url, "alice")
    settle(page)
    text = sidebar_text(page)
    assert "Signed in as Alice Auditor" in text and "alice@example.org" in text
    assert "Bob" not in text
    table = tmp_path / "alice-audit.csv"
    upload_frame(n=300, seed=21).to_csv(table, index=False)
    use_upload(page, url, table, "300 rows × 4 columns")
    # the report records who built it
    open_page(page, "Export")
    page.get_by_role("button", name="Run the audit").click()
    page.get_by_role("button", name="Build the report").click()
    button = page.get_by_role("button", name=re.compile("Download results.json"))
    with page.expect_download() as download:
        button.click()
    document = json.loads(Path(download.value.path()).read_text())
    assert document["provenance"]["user"] == "Alice Auditor <alice@example.org>"

    genuine = signed_cookie(context)
    for forged in (tampered(genuine["value"]), expired(genuine["value"])):
        other, other_page = with_cookie(browser, url, {**genuine, "value": forged})
        sees_only_the_sign_in(other_page, url)
        other.close()
    # sign-out: through the provider's end of session, back to the button
    page.get_by_role("button", name="Sign out").click()
    page.get_by_role("button", name="End session").click()
    sees_only_the_sign_in(page, url)
    assert COOKIE not in {c["name"] for c in context.cookies()}
    context.close()


def test_two_people_signed_in_at_once_see_only_their_own(browser, app, tmp_path) -> None:
    url, _ = app
    (alice_context, alice), (bob_context, bob) = visitor(browser), visitor(browser)
    sign_in(alice, url, "alice")
    sign_in(bob, url, "bob")
    table = tmp_path / "alice-private.csv"
    upload_frame(n=300, seed=5).to_csv(table, index=False)
    use_upload(alice, url, table, "300 rows × 4 columns")
    settle(bob)
    bob.reload()
    bob.get_by_text("Signed in as Bob Reviewer").wait_for()
    settle(bob)
    for page, own, other in ((alice, "Alice Auditor", "Bob Reviewer"),
                             (bob, "Bob Reviewer", "Alice Auditor")):
        text = page.locator("body").inner_text()
        assert f"Signed in as {own}" in text and other not in text
    assert "alice-private.csv" in sidebar_text(alice)
    assert "alice-private.csv" not in bob.locator("body").inner_text()
    alice_context.close()
    bob_context.close()
