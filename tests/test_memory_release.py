"""The served app hands freed heap back to the operating system (dashboard.memory_release, issue 32:
the soak's resident memory followed glibc's retained free pages, not the sessions)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from dashboard.memory_release import glibc, start_memory_release

libc = glibc()
needs_glibc = pytest.mark.skipif(libc is None, reason="malloc_trim is glibc's (Linux)")


#: Run in a fresh interpreter: where each block lands depends on the heap's history, and in a
#: long test process the small blocks fill old holes, leaving the large ones contiguous so
#: that free() itself returns them.
FREED_BUT_KEPT = """
from dashboard.memory_release import glibc
def resident():
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096
blocks, pins = [], []
for _ in range(3_000):
    blocks.append(bytearray(100_000))
    pins.append(bytearray(1_000))
before_free = resident()
del blocks
kept = resident()
glibc().malloc_trim(0)
print(before_free, kept, resident())
"""


@needs_glibc
def test_malloc_trim_returns_the_free_pages_that_free_keeps() -> None:
    # 3,000 blocks of 100 kB (below glibc's mmap threshold, so from the heap), each followed
    # by a small block kept alive: freeing the large ones leaves free pages inside the heap,
    # which free() keeps and malloc_trim hands back.
    done = subprocess.run([sys.executable, "-c", FREED_BUT_KEPT], capture_output=True,
                          text=True, check=True, cwd=Path(__file__).resolve().parents[1])
    before_free, kept, after_trim = map(int, done.stdout.split())
    assert before_free - kept < 100e6  # free() alone kept most of the 300 MB resident
    assert kept - after_trim > 200e6   # the trim handed at least 200 MB back


@needs_glibc
def test_the_release_thread_starts_once_per_process() -> None:
    first = start_memory_release(interval_s=3600)
    assert first is not None and first.is_alive() and first.daemon
    assert start_memory_release() is first
