"""The sidebar's compute-engine setting: one of the engines the operator declared.

A visitor picks an engine by the name the operator gave it (:mod:`core.kernels.declared`:
the operator file or ``CALIBRATION_ATLAS_DASK``); no address is typed in the browser, so
nothing a visitor does makes the server connect anywhere the operator did not name. The
choice is kept per session (:mod:`dashboard.state`) and applied at the start of every run
with :func:`core.kernels.engine.set`, so each session's computations use its own choice.

One ``dask.distributed.Client`` per declared cluster is shared by the server's sessions
(``st.cache_resource``, checked alive on every use). A cluster that does not answer gets a
sentence in the sidebar and the session computes on this machine's threads, retrying after
:data:`RETRY_SECONDS`; a cluster lost in the middle of a computation finishes it on threads
(:func:`core.kernels.engine.take_fallback`) and the session stays on threads.
"""

from __future__ import annotations

import contextlib
import time

import streamlit as st

from core.kernels import (
    LOCAL,
    DaskTls,
    DeclaredEngine,
    connect,
    current_engine,
    gpu_available,
    reset_engine,
    set_engine,
    take_fallback,
)
from dashboard.state import (
    ENGINE_WIDGET,
    engine_choice,
    engine_notice,
    set_engine_choice,
    set_engine_notice,
    settings,
)

#: Seconds to wait for a Dask scheduler before giving up with a message.
CONNECT_TIMEOUT = 5
#: Seconds before a cluster that did not answer is tried again by the same session.
RETRY_SECONDS = 60


class _Held:
    """A client in Streamlit's resource cache (which will not store an awaitable object)."""

    def __init__(self, client) -> None:
        self.client = client

    def alive(self) -> bool:
        if getattr(self.client, "status", "closed") == "running":
            return True
        with contextlib.suppress(Exception):  # dropped from the cache: closed on the way out
            self.client.close(timeout=1)
        return False


@st.cache_resource(show_spinner=False, validate=_Held.alive)
def _client(name: str, address: str, tls: tuple[str, str, str] | None) -> _Held:
    declared = DeclaredEngine(name, "dask", address, DaskTls(*tls) if tls else None)
    return _Held(connect(declared, timeout=CONNECT_TIMEOUT))


def dask_client(declared: DeclaredEngine):
    """The server's client for a declared cluster (``ValueError`` when it does not answer)."""
    tls = declared.tls
    key = (tls.ca_file, tls.client_cert, tls.client_key) if tls is not None else None
    with st.spinner(f"Connecting to the Dask cluster “{declared.name}”…"):
        return _client(declared.name, declared.address, key).client


def offered() -> list[DeclaredEngine]:
    """The declared engines a session may pick: the GPU only where CuPy sees one."""
    return [e for e in settings().engines.engines if e.kind != "gpu" or gpu_available()]


def apply_engine() -> None:
    """Set this run's engine from the session's choice (none made: the operator's default).
    Every run sets it, so a script thread never carries another session's choice."""
    reset_engine()
    declaration = settings().engines
    names = [e.name for e in offered()]
    if engine_choice() is not None:  # the radio follows a choice made after it was drawn
        set_engine_choice(engine_choice())
    if engine_choice() is not None and engine_choice() not in names:  # withdrawn since
        set_engine_choice(None)
    name = engine_choice() or declaration.default
    declared = declaration.get(name)
    if declared.kind == "dask":
        notice = engine_notice()
        if notice is not None and notice[1] > time.monotonic():
            set_engine("threads")
            return
        try:
            set_engine("dask", client=dask_client(declared), fallback=True, label=declared.name)
            set_engine_notice(None)
        except ValueError as error:
            set_engine_notice((f"{error} This session computes on this machine's threads "
                               f"for now; the cluster is tried again in {RETRY_SECONDS} s.",
                               time.monotonic() + RETRY_SECONDS))
            set_engine("threads")
    elif declared.kind == "gpu" and gpu_available():
        set_engine("gpu")
    else:
        set_engine("threads")


def report_fallback() -> None:
    """After the page: when the session's cluster was lost mid-computation, say so; the
    session computes on threads from its next run on (the radio follows then)."""
    message = take_fallback()
    if message:
        set_engine_choice(LOCAL, widget=False)
        st.warning(message, icon=":material/cloud_off:")


def engine_sidebar() -> None:
    """The expander (the app draws it in the sidebar): choose a declared engine by name."""
    declaration = settings().engines
    names = [e.name for e in offered()]
    with st.expander("Compute engine", icon=":material/memory:"):
        st.caption("Where the exact kernel sums (KLCE, SKCE, LCB, LCE) run. Approximations "
                   "(random Fourier features, binning) always run here. The engines are the "
                   "ones this server's operator declared.")
        current = engine_choice() or declaration.default
        st.radio("Engine", names, index=names.index(current) if current in names else 0,
                 format_func=lambda n: declaration.get(n).label(), key=ENGINE_WIDGET,
                 on_change=_choose)
        notice = engine_notice()
        if notice is not None and notice[1] > time.monotonic():
            st.warning(notice[0], icon=":material/cloud_off:")
        if len(names) == 1:
            st.caption("Only this machine is declared; the operator can add Dask clusters "
                       "and the GPU (README, *Serving to a team*).")
        st.caption(f"Now: **{current_engine().describe()}**")


def _choose() -> None:
    set_engine_choice(st.session_state[ENGINE_WIDGET])
    set_engine_notice(None)
