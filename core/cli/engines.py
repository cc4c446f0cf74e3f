"""Where a command computes: the engine its options name (``--dask``, ``--engine``)."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

from core.kernels import engine
from core.kernels.declared import connect, declare_cluster, declared_engines


@contextmanager
def compute_engine(options: argparse.Namespace, stream: TextIO) -> Iterator[None]:
    """Run the block on the engine the options name (``--dask``, ``--engine``), else on the
    declared default; a cluster lost mid-run leaves a note and the rest runs on threads."""
    address, name = getattr(options, "dask", None), getattr(options, "engine", None)
    if address is None and name is None:
        yield
        return
    declared = declare_cluster("command line", address) if address is not None \
        else declared_engines().get(name)
    client = connect(declared) if declared.kind == "dask" else None
    try:
        with engine.use(declared.kind, client=client, fallback=client is not None,
                        label=declared.name if client is not None else "") as chosen:
            stream.write(f"Computing on: {chosen.describe()}\n")
            yield
    finally:
        if client is not None:
            client.close()
        message = engine.take_fallback()
        if message:
            stream.write(f"note: {message}\n")

