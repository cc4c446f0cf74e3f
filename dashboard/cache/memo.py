"""A small per-process memo for results Streamlit's cache cannot hash (fitted models, embeddings,
grids of tests): least recently used entries are dropped beyond ``limit``.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable


class ProcessMemo:
    """A small least-recently-used store shared by all sessions of the server process.

    For computations that report progress into a bar drawn outside them: Streamlit's
    ``st.cache_data`` records such calls and fails to replay them on a hit.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.store: OrderedDict = OrderedDict()

    def get(self, key, compute: Callable[[], object]):
        if key not in self.store:
            self.store[key] = compute()
            while len(self.store) > self.limit:
                self.store.popitem(last=False)
        self.store.move_to_end(key)
        return self.store[key]

