"""The served app gives the memory its computations freed back to the operating system.

glibc's allocator keeps freed memory for reuse instead of returning it. A Streamlit server
runs every session's script in a thread of its own; each thread that allocates gets an arena,
and the audits' large temporaries (numpy arrays, once freed, raise glibc's dynamic mmap
threshold, so later ones come from the arenas too) leave those arenas full of free pages.
The resident memory an operator sees then reflects the busiest moment so far, not what the
sessions now hold: in the soak of ``docs/studies/serve-load.md`` (5 sessions × 10⁵ rows),
0.8 GiB of the server's 1.35 GiB resident was free heap while the live heap was 0.2 GiB.

:func:`start_memory_release`, called once per process, does two things glibc offers for
multi-threaded servers:

* it caps the arenas at :data:`MAX_ARENAS` (``mallopt(M_ARENA_MAX)``, the runtime form of
  ``MALLOC_ARENA_MAX``): the script threads created later share them, so free pages are not
  spread over one arena per thread that ever ran (arenas made before the call stay);
* it starts a daemon thread that calls ``malloc_trim(0)`` every :data:`RELEASE_INTERVAL_S`
  seconds: the whole free pages of every arena are handed back (``madvise``); live
  allocations are untouched, and allocation during a computation is as fast as before
  (unlike a fixed mmap threshold).

On a system without glibc (macOS, Windows, musl) it does nothing.
"""

from __future__ import annotations

import ctypes
import sys
import threading
import time

#: Seconds between two releases.
RELEASE_INTERVAL_S = 30.0
#: Most malloc arenas the served app's threads share.
MAX_ARENAS = 2
#: ``mallopt`` parameter number of the arena cap (glibc's ``malloc.h``).
M_ARENA_MAX = -8

_started: threading.Thread | None = None
_lock = threading.Lock()


def glibc() -> ctypes.CDLL | None:
    """The C library when it is glibc (it has ``malloc_trim``), else ``None``."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.malloc_trim.argtypes, libc.malloc_trim.restype = [ctypes.c_size_t], ctypes.c_int
        libc.mallopt.argtypes, libc.mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    except (OSError, AttributeError):  # not glibc
        return None
    return libc


def start_memory_release(interval_s: float = RELEASE_INTERVAL_S,
                         arenas: int = MAX_ARENAS) -> threading.Thread | None:
    """Cap the arenas and start the release thread, once per process; later calls return the
    same thread.

    Parameters
    ----------
    interval_s : float
        Seconds between two calls of ``malloc_trim(0)``.
    arenas : int
        Most arenas (``mallopt(M_ARENA_MAX, arenas)``).

    Returns
    -------
    threading.Thread or None
        The daemon thread, or ``None`` where the C library is not glibc.
    """
    global _started
    with _lock:
        if _started is None:
            libc = glibc()
            if libc is None:
                return None
            libc.mallopt(M_ARENA_MAX, arenas)

            def release() -> None:
                while True:
                    time.sleep(interval_s)
                    libc.malloc_trim(0)

            _started = threading.Thread(target=release, name="memory-release", daemon=True)
            _started.start()
        return _started
