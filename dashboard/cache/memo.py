"""A small per-process memo for results Streamlit's cache cannot hash (fitted models, embeddings,
grids of tests, the audit's sections): least recently used entries are dropped beyond ``limit``.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable


class ProcessMemo:
    """A small least-recently-used store shared by all sessions of the server process.

    For computations that report progress into a bar drawn outside them: Streamlit's
    ``st.cache_data`` records such calls and fails to replay them on a hit. Sessions run in
    threads of their own: the store is changed under a lock (a computation runs outside it,
    so two sessions asking for the same new entry may both compute it; the first kept wins).
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.store: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key, compute: Callable[[], object]):
        with self._lock:
            if key in self.store:
                self.store.move_to_end(key)
                return self.store[key]
        value = compute()
        with self._lock:
            value = self.store.setdefault(key, value)
            self.store.move_to_end(key)
            while len(self.store) > self.limit:
                self.store.popitem(last=False)
        return value

    def clear(self) -> None:
        with self._lock:
            self.store.clear()

    def __contains__(self, key) -> bool:
        with self._lock:
            return key in self.store
