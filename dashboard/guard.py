"""The page guard: an unexpected error on a page becomes one readable sentence, not a stack.

``app.py`` runs every page through :func:`run_page`. A page that raises shows what failed
(the page, the dataset and the setting the error names), what to try, and the technical
detail in a collapsed expander; the traceback goes to the server log. Streamlit's own
control flow — ``st.stop()``, ``st.rerun()``, ``st.switch_page()`` — raises
``BaseException`` subclasses, which pass through untouched.
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Callable

import streamlit as st

from core.data import DataError

LOGGER = logging.getLogger("calibration_atlas.pages")
#: The start of every guard message; tests look for it to prove no page failed.
FAILURE_PREFIX = "This page could not finish"


def failure_sentence(page: str, dataset: str | None, error: Exception) -> str:
    """One sentence: which page failed, on which data, with what, and what to try.

    Errors raised on purpose by ``core`` (``DataError``, ``ValueError``) are sentences written
    for users, so they are quoted; anything else is named by its type only (the detail is in
    the expander and the log).
    """
    on = f" on the dataset “{dataset}”" if dataset else ""
    if isinstance(error, (DataError, ValueError)) and str(error).strip():
        reason = str(error).strip().rstrip(".")
        cause = f": {reason}."
    else:
        cause = f" because of an unexpected {type(error).__name__}."
    return (
        f"{FAILURE_PREFIX}: the {page} page failed{on}{cause} Try other settings on this "
        "page, fewer or other audit features, or another dataset on the Data page; if it "
        "keeps failing, report it with the technical detail below."
    )


def run_page(run: Callable[[], None], page: str, dataset: Callable[[], str | None]) -> None:
    """Run ``run()`` (a page); on an ``Exception`` log it and show :func:`failure_sentence`.

    ``dataset`` names the active dataset; it is only called after a failure (and a failure
    to name it leaves the sentence without it).
    """
    try:
        run()
    except Exception as error:  # st.stop()/st.rerun() are BaseExceptions: they pass through
        LOGGER.exception("Page %r failed", page)
        try:
            source = dataset()
        except Exception:  # the dataset itself may be what is broken
            source = None
        st.error(failure_sentence(page, source, error), icon=":material/error:")
        with st.expander("Technical detail", expanded=False):
            st.code("".join(traceback.format_exception(error)), language="text")
