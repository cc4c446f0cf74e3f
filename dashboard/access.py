"""Sign-in: Streamlit's built-in OpenID Connect (``st.login``, ``st.user``) in front of
every page.

When ``.streamlit/secrets.toml`` has an ``[auth]`` section (see ``secrets.example.toml``),
a visitor who has not signed in sees the sign-in button and nothing else — no page, no
sidebar, no dataset — because :func:`gate` stops the run before the navigation is built.
With ``require_sign_in`` (``CALIBRATION_ATLAS_SIGN_IN=1``, set by ``make serve``) and no
``[auth]`` section, the app refuses to show anything and tells the operator what to
configure, so a server meant to be private never opens by mistake. Without either, the app
is open, as ``make run`` on localhost is.
"""

from __future__ import annotations

from collections.abc import Mapping

import streamlit as st

from dashboard.state import settings


def auth_section() -> Mapping | None:
    """The ``[auth]`` section of the secrets, or ``None`` (no secrets file, or no section)."""
    try:
        section = st.secrets.get("auth")
    except Exception:  # noqa: BLE001 — no secrets file, or one that does not parse
        return None
    return section if isinstance(section, Mapping) and section else None


def providers(section: Mapping) -> list[str]:
    """The named identity providers (``[auth.NAME]`` tables with a ``client_id``); empty
    when the ``[auth]`` section itself names the one provider."""
    return [name for name, value in section.items()
            if isinstance(value, Mapping) and "client_id" in value]


def gate() -> None:
    """Stop the run unless this visitor may see the app (see the module docstring)."""
    section = auth_section()
    if section is None:
        if settings().require_sign_in:
            st.title("Calibration Atlas")
            st.error("This server is set to require sign-in (CALIBRATION_ATLAS_SIGN_IN, or "
                     "[access] require_sign_in in the operator file), but "
                     ".streamlit/secrets.toml has no [auth] section, so nobody can sign in "
                     "and nothing is shown. The operator configures an OpenID Connect "
                     "provider there (README, *Serving to a team*).",
                     icon=":material/lock:")
            st.stop()
        return
    if st.user.is_logged_in:
        return
    st.title("Calibration Atlas")
    st.markdown("This audit workspace is private. Sign in to continue.")
    named = providers(section)
    for provider in named or [None]:
        label = f"Sign in with {provider}" if provider else "Sign in"
        if st.button(label, type="primary", icon=":material/login:",
                     key=f"sign_in_{provider or 'default'}"):
            st.login(provider) if provider else st.login()
    st.stop()


def signed_in_user() -> str | None:
    """The signed-in person as the report records them (name and e-mail where the provider
    gives them), or ``None`` when nobody signed in."""
    if auth_section() is None or not st.user.is_logged_in:
        return None
    name, email = st.user.get("name"), st.user.get("email")
    if name and email:
        return f"{name} <{email}>"
    return str(name or email or st.user.get("sub") or "signed-in user")


def account_sidebar() -> None:
    """Who is signed in, and the sign-out button (nothing without sign-in)."""
    user = signed_in_user()
    if user is None:
        return
    st.caption(f"Signed in as {user}")
    st.button("Sign out", on_click=st.logout, key="sign_out", icon=":material/logout:")
