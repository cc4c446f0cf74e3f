"""The sidebar's compute-engine setting: where the exact kernel sums run.

The choice is kept per session (:mod:`dashboard.state`) and applied at the start of every run
with :func:`core.kernels.engine.set`, so each session's computations use its own choice. A Dask
scheduler is reached by its address (``tcp://host:8786``); the client is shared by the sessions
of the server process (:func:`dask_client`). The environment variables of :mod:`core.kernels.engine`
(``CALIBRATION_ATLAS_DASK``, ``CALIBRATION_ATLAS_ENGINE``) set the default for new sessions.
"""

from __future__ import annotations

import streamlit as st

from core.kernels import engine
from dashboard.state import engine_choice, set_engine_choice

LABELS = {"threads": "This machine (threads)", "dask": "Dask cluster", "gpu": "GPU (CuPy)"}
#: Seconds to wait for a Dask scheduler before giving up with a message.
CONNECT_TIMEOUT = 5


#: Address → Client, shared by the server process's sessions (a Client is awaitable, which
#: ``st.cache_resource`` refuses to store).
_CLIENTS: dict[str, object] = {}


def dask_client(address: str):
    """A ``dask.distributed.Client`` for ``address``, one per server process and address."""
    if address not in _CLIENTS:
        from dask.distributed import Client

        with st.spinner(f"Connecting to the Dask scheduler at {address}…"):
            _CLIENTS[address] = Client(address, timeout=f"{CONNECT_TIMEOUT}s",
                                       set_as_default=False)
    return _CLIENTS[address]


def apply_engine() -> None:
    """Set this run's engine from the session's choice (nothing chosen: the environment's).
    Every run sets it, so a script thread never carries another session's choice."""
    name, address = engine_choice()
    engine.reset()
    if name == "dask" and address:
        try:
            engine.set("dask", client=dask_client(address))
        except Exception:  # noqa: BLE001 — the sidebar shows why; the run uses the default
            engine.set("threads")
    elif name == "gpu" and engine.gpu_available():
        engine.set("gpu")
    elif name == "threads":
        engine.set("threads")


def engine_sidebar() -> None:
    """The sidebar expander: choose threads, a Dask scheduler address or the GPU."""
    with st.sidebar.expander("Compute engine", icon=":material/memory:"):
        st.caption("Where the exact kernel sums (KLCE, SKCE, LCB, LCE) run. Approximations "
                   "(random Fourier features, binning) always run here.")
        choices = ["threads", "dask"] + (["gpu"] if engine.gpu_available() else [])
        name, address = engine_choice()
        name = name if name in choices else engine.current().name
        picked = st.radio("Engine", choices, index=choices.index(name) if name in choices
                          else 0, format_func=LABELS.get, key="engine_name_widget")
        typed = address
        if picked == "dask":
            typed = st.text_input("Scheduler address", value=address or "",
                                  placeholder="tcp://10.0.0.5:8786", key="engine_address_widget",
                                  help="Start one with `dask scheduler` and `dask worker "
                                       "ADDRESS` on the machines of the cluster.")
        if st.button("Apply", key="engine_apply"):
            if picked == "dask":
                message = _check_address(typed.strip())
                if message:
                    st.error(message, icon=":material/error:")
                    return
            set_engine_choice(picked, typed.strip() if picked == "dask" else None)
            apply_engine()
        st.caption(f"Now: **{engine.current().describe()}**")


def _check_address(address: str) -> str | None:
    """Why a Dask scheduler address cannot be used (``None`` when it connects)."""
    if not address:
        return "Enter the scheduler's address, e.g. tcp://10.0.0.5:8786."
    try:
        dask_client(address)
    except Exception as error:  # noqa: BLE001 — any failure to connect is shown, not raised
        return (f"Could not reach a Dask scheduler at {address} within {CONNECT_TIMEOUT} s "
                f"({type(error).__name__}). Check the address and that `dask scheduler` runs "
                "there; the computations stay on this machine.")
    return None
