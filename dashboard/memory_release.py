"""The served app gives the memory its computations freed back to the operating system.

glibc's allocator keeps freed memory for reuse instead of returning it. A Streamlit server
runs every session's script in a thread of its own; each thread that allocates gets an arena,
and the audits' large temporaries (numpy arrays, once freed, raise glibc's dynamic mmap
threshold, so later ones come from the arenas too) leave those arenas full of free pages.
The resident memory an operator sees then reflects the busiest moment so far, not what the
sessions now hold: in the soak of ``docs/studies/serve-load.md`` (5 sessions × 10⁵ rows),
0.8 GiB of the server's 1.35 GiB resident was free heap while the live heap was 0.2 GiB.

:func:`start_memory_release` starts one daemon thread per process that calls glibc's
``malloc_trim(0)`` every :data:`RELEASE_INTERVAL_S` seconds: the free pages of every arena are
handed back (``madvise``), live allocations are untouched, and allocation speed during a
computation is unchanged (unlike a fixed mmap threshold). On a system without glibc (macOS,
Windows, musl) it does nothing.
"""

from __future__ import annotations

import ctypes
import sys
import threading
import time
from collections.abc import Callable

#: Seconds between two releases.
RELEASE_INTERVAL_S = 30.0

_started: threading.Thread | None = None
_lock = threading.Lock()


def malloc_trim() -> Callable[[], int] | None:
    """glibc's ``malloc_trim(0)`` as a function, or ``None`` where the C library has none."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        trim = ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return lambda: trim(0)


def start_memory_release(interval_s: float = RELEASE_INTERVAL_S) -> threading.Thread | None:
    """Start the release thread once per process; later calls return the same thread.

    Parameters
    ----------
    interval_s : float
        Seconds between two calls of ``malloc_trim(0)``.

    Returns
    -------
    threading.Thread or None
        The daemon thread, or ``None`` where ``malloc_trim`` does not exist.
    """
    global _started
    with _lock:
        if _started is None:
            trim = malloc_trim()
            if trim is None:
                return None

            def release() -> None:
                while True:
                    time.sleep(interval_s)
                    trim()

            _started = threading.Thread(target=release, name="memory-release", daemon=True)
            _started.start()
        return _started
