"""Where the tile engine's tiles run: a thread pool (default), a Dask cluster, or a GPU.

:mod:`core.kernels` holds the mathematics — every kernel sum is a list of independent tile
tasks, each a pure function of shared arrays and its own tile index that returns a partial
sum — and asks the engine chosen here to schedule them:

* ``"threads"`` — a thread pool on this machine (numpy releases the GIL in ``exp`` and BLAS),
  BLAS held to one thread per worker;
* ``"dask"`` — the tasks run on a ``dask.distributed`` cluster: the shared arrays are
  scattered to the workers once per call, every task returns its partial sum there and the
  partial sums are added up on the cluster, so only the result travels back. The statistic
  is the threaded engine's, to rounding (the tiles and their sums are the same; only the
  order of the final additions differs);
* ``"gpu"`` — the same tile functions with CuPy as the array module (float64 by default;
  ``dtype="float32"`` trades about seven digits for speed, with partial sums still added in
  float64).

The choice is a context variable, so it holds per thread and per Streamlit session::

    from core import engine
    with engine.use("dask", client=client):
        local.klce_test(...)
    engine.set("threads")

Every result of a kernel test records ``engine.current().describe()``. With no choice made,
:func:`current` takes the default engine the operator declared
(:mod:`core.kernels.declared`): ``CALIBRATION_ATLAS_DASK`` (a scheduler address, e.g.
``tcp://10.0.0.5:8786``) selects a Dask cluster, ``CALIBRATION_ATLAS_ENGINE=gpu`` the GPU.

A Dask engine made with ``fallback=True`` survives the loss of its cluster: when the
scheduler stops answering mid-computation (Dask cancels every future), the tiles of that call
run again on this machine's threads — they are pure, so the result is the same — the rest of
the context computes on threads, and :func:`take_fallback` returns one sentence saying so.
Without ``fallback`` the loss raises :class:`ClusterLost`. A worker that dies is Dask's
business: the scheduler reruns its tasks elsewhere and the result does not change.
"""

from __future__ import annotations

import collections
import contextvars
import functools
import itertools
import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from types import ModuleType

import numpy as np
from threadpoolctl import threadpool_limits

from core.data.validation import check_choice
from core.kernels.declared import connect, declared_engines

ENGINES = ("threads", "dask", "gpu")
DTYPES = ("float64", "float32")
#: Tile edge on the GPU: one tile of 8,192² float64 is 512 MiB, far from any card's limit,
#: and large enough to keep the device busy.
GPU_TILE = 8192


class ClusterLost(RuntimeError):
    """The Dask cluster stopped answering in the middle of a computation."""


@dataclass(frozen=True)
class Engine:
    """Where tiles run: ``name`` in :data:`ENGINES`, a Dask ``client`` for ``"dask"``, the
    compute ``dtype`` of the GPU, and for Dask whether a lost cluster falls back to threads
    (``fallback``) under the name the operator gave it (``label``)."""

    name: str = "threads"
    client: object | None = field(default=None, compare=False, repr=False)
    dtype: str = "float64"
    fallback: bool = False
    label: str = ""

    def __post_init__(self) -> None:
        check_choice(self.name, ENGINES, "engine", f"choose one of {', '.join(ENGINES)}")
        check_choice(self.dtype, DTYPES, "dtype", "choose 'float64' or 'float32'")
        if self.name == "dask" and self.client is None:
            raise ValueError("The Dask engine needs a client: engine.use('dask', "
                             "client=dask.distributed.Client(address)).")
        if self.name == "gpu" and not gpu_available():
            raise ValueError("The GPU engine needs CuPy with a CUDA device, and none was found; "
                             "use the 'threads' engine (the default).")
        if self.name != "gpu" and self.dtype != "float64":
            raise ValueError("dtype='float32' is offered on the GPU engine only.")

    def describe(self) -> str:
        """One line for a result's parameters, e.g. ``"threads"`` or ``"gpu (float32)"``."""
        if self.name == "dask":
            workers = len(getattr(self.client, "scheduler_info", dict)().get("workers", {}))
            named = f" “{self.label}”" if self.label else ""
            return f"dask{named} ({workers} workers)"
        return f"gpu ({self.dtype})" if self.name == "gpu" else "threads"


_CHOSEN: ContextVar[Engine | None] = ContextVar("calibration_atlas_engine", default=None)
_FELL_BACK: ContextVar[str | None] = ContextVar("calibration_atlas_fallback", default=None)


@functools.cache
def gpu_available() -> bool:
    """True when CuPy imports and sees at least one CUDA device."""
    try:
        import cupy
        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # noqa: BLE001 — no CuPy, no driver, no device: all mean "no GPU"
        return False


@functools.cache
def _from_environment() -> Engine:
    declaration = declared_engines()
    chosen = declaration.get(declaration.default)
    if chosen.kind == "dask":
        return Engine("dask", client=connect(chosen), label=chosen.name)
    return Engine(chosen.kind)


def current() -> Engine:
    """The engine chosen in this context, else the one the environment names (threads)."""
    chosen = _CHOSEN.get()
    return chosen if chosen is not None else _from_environment()


def set(name: str = "threads", client: object | None = None,  # noqa: A001 — engine.set(...)
        dtype: str = "float64", fallback: bool = False, label: str = "") -> Engine:
    """Choose the engine for the rest of this context (thread / Streamlit session).

    Parameters
    ----------
    name : str, default "threads"
        ``"threads"``, ``"dask"`` or ``"gpu"``.
    client : object, optional
        The Dask client of ``"dask"``.
    dtype : str, default "float64"
        The GPU's float type.
    fallback : bool, default False
        Fall back to threads (once, with a message) when the engine fails.
    label : str, default ""
        The engine's name in captions.
    """
    chosen = Engine(name, client, dtype, fallback, label)
    _CHOSEN.set(chosen)
    return chosen


def reset() -> None:
    """Forget this context's choice (:func:`current` names the environment's engine again)
    and any fallback not yet taken."""
    _CHOSEN.set(None)
    _FELL_BACK.set(None)


def take_fallback() -> str | None:
    """The sentence saying that this context's Dask cluster was lost and the computation went
    on on threads, once (``None`` when that did not happen)."""
    message = _FELL_BACK.get()
    _FELL_BACK.set(None)
    return message


@contextmanager
def use(name: str, client: object | None = None, dtype: str = "float64",
        fallback: bool = False, label: str = "") -> Iterator[Engine]:
    """Run the block's kernel sums on another engine, then restore the previous choice."""
    token = _CHOSEN.set(Engine(name, client, dtype, fallback, label))
    try:
        yield _CHOSEN.get()
    finally:
        _CHOSEN.reset(token)


# --------------------------------------------------------------------------- array modules


def array_module(name: str) -> ModuleType:
    """numpy, or CuPy for ``"cupy"`` (tiles name their module, so they pickle for Dask)."""
    if name == "cupy":
        import cupy
        return cupy
    return np


def to_host(array: object) -> np.ndarray:
    """A numpy array from a numpy or CuPy array."""
    return array.get() if hasattr(array, "get") else np.asarray(array)


# --------------------------------------------------------------------------- scheduling


def machine_workers() -> int:
    """Threads a pool of this machine uses when nothing shares it: the cores, at most 4."""
    return max(1, min(4, os.cpu_count() or 1))


class CoreShare:
    """Pieces of work running side by side on this machine's threads (the audit's two
    threads of sections), sharing its cores: while ``k`` of them run, each thread pool
    started inside one of them gets ``1/k`` of :func:`machine_workers` (at least one
    thread), so two lanes on two cores run one thread each instead of four threads
    contending for two cores. A lane calls
    :meth:`finish` when it is done, and the pools the others start after that get the freed
    cores."""

    def __init__(self, lanes: int) -> None:
        self.running = max(1, lanes)

    def finish(self) -> None:
        self.running = max(1, self.running - 1)

    def workers(self) -> int:
        return max(1, machine_workers() // self.running)


_SHARE: ContextVar[CoreShare | None] = ContextVar("core_share", default=None)


@contextmanager
def sharing(share: CoreShare) -> Iterator[None]:
    """Run the body as one of the lanes of ``share`` (:class:`CoreShare`); the lane counts as
    finished when the body ends."""
    token = _SHARE.set(share)
    try:
        yield
    finally:
        share.finish()
        _SHARE.reset(token)


@contextmanager
def whole_machine() -> Iterator[None]:
    """Thread pools started in the body use all of :func:`machine_workers`, inside a lane of
    :func:`sharing` too: the speed probes that plans are made from measure the machine, so
    a lane's plan is the plan the same data gets anywhere else on it."""
    token = _SHARE.set(None)
    try:
        yield
    finally:
        _SHARE.reset(token)


def default_workers() -> int:
    """Threads of a pool started here: :func:`machine_workers`, or this lane's share of them
    inside :func:`sharing`."""
    share = _SHARE.get()
    return machine_workers() if share is None else share.workers()


def _add(parts: Sequence[np.ndarray]) -> np.ndarray:
    total = np.zeros_like(np.asarray(parts[0]), dtype=np.float64)
    for part in parts:
        total += part
    return total


def run_tiles(
    task: Callable[..., np.ndarray],
    shared: tuple[np.ndarray, ...],
    items: Sequence[object],
    reduce: str,
    n_jobs: int | None = None,
) -> np.ndarray | list[np.ndarray]:
    """``[task(xp, *shared, item) for item in items]``, scheduled by the current engine.

    ``task`` must be a module-level function (Dask pickles it) whose first argument is the
    array module's name (``"numpy"`` or ``"cupy"``); ``reduce="sum"`` adds the partial sums
    and ``reduce="stack"`` returns the parts in order.
    """
    engine = current()
    if engine.name == "dask":
        try:
            return _run_dask(engine.client, task, shared, items, reduce)
        except Exception as error:
            _fall_back(engine, error)
    if engine.name == "gpu":
        xp = array_module("cupy")
        dtype = xp.float32 if engine.dtype == "float32" else xp.float64
        device = tuple(xp.asarray(a, dtype=dtype) for a in shared)
        parts = [to_host(task("cupy", *device, item)).astype(np.float64) for item in items]
        return _add(parts) if reduce == "sum" else parts
    parts = in_threads(lambda item: task("numpy", *shared, item), items, n_jobs)
    return _add(parts) if reduce == "sum" else parts


def _fall_back(engine: Engine, error: Exception) -> None:
    """After ``error`` on a Dask engine: re-raise it unless the cluster was lost; raise
    :class:`ClusterLost` without ``fallback``; else note the loss and compute on threads."""
    if not _cluster_lost(error):
        raise error
    lost = (f"The Dask cluster{f' “{engine.label}”' if engine.label else ''} stopped "
            f"answering during the computation ({type(error).__name__})")
    if not engine.fallback:
        raise ClusterLost(f"{lost}. Start it again, or compute on this machine "
                          "(engine.use('threads')).") from error
    _FELL_BACK.set(f"{lost}; the computation finished on this machine's threads, and "
                   "this session computes here from now on.")
    _CHOSEN.set(Engine("threads"))


def in_threads(function: Callable[[object], object], items: Sequence[object],
               n_jobs: int | None = None, tick: Callable[[], None] | None = None) -> list:
    """``[function(item) for item in items]`` on a pool of this machine's threads, BLAS held
    to one thread each (numpy releases the GIL in BLAS and large ufuncs; a BLAS call split
    over threads stalls when other processes share the cores), each in a copy of the calling
    thread's context (the engine chosen there holds). ``tick()`` is called from the calling
    thread about four times a second until all are done (a progress bar updates there, as a
    Streamlit page requires)."""
    n_jobs = default_workers() if n_jobs is None else n_jobs
    if n_jobs <= 1 or len(items) <= 1:
        results = []
        for item in items:
            results.append(function(item))
            if tick is not None:
                tick()
        return results
    with threadpool_limits(limits=1, user_api="blas"), ThreadPoolExecutor(n_jobs) as pool:
        # each task in a copy of the caller's context: the engine chosen there holds there
        futures = [pool.submit(contextvars.copy_context().run, function, item)
                   for item in items]
        while True:
            _, pending = wait(futures, timeout=0.25)
            if tick is not None:
                tick()
            if not pending:
                break
        return [future.result() for future in futures]


def _cluster_lost(error: BaseException) -> bool:
    """Whether ``error`` is Dask saying that the cluster is gone (futures cancelled because
    the scheduler connection was lost, a closed comm, a refused or timed-out connection)."""
    from concurrent.futures import CancelledError

    from distributed.comm.core import CommClosedError

    return isinstance(error, (CancelledError, CommClosedError, OSError, TimeoutError))


#: How many times the tiles a cluster lost are submitted again while it is still connected.
DASK_RETRIES = 3


def _run_dask(client, task: Callable[..., np.ndarray], shared: tuple[np.ndarray, ...],
              items: Sequence[object], reduce: str) -> np.ndarray | list[np.ndarray]:
    """The tiles on a Dask cluster: ``shared`` copied to every worker, one task a tile, the
    parts gathered and added here.

    A worker that dies mid-computation is only a lost part, which the scheduler recomputes
    for the futures this client holds — mostly. At times the scheduler forgets a task while
    it removes the dead worker, and cancels the client's future (``"already forgotten"``;
    ``tests/test_cluster.py`` kills a worker while tasks run and met it). While this client
    is still connected to the scheduler the cancelled tiles are therefore submitted again
    (the arrays scattered anew), at most :data:`DASK_RETRIES` times; each tile's result
    depends on its item alone, so a retried tile gives the same numbers. A cancellation
    after the scheduler itself went away (the client no longer ``"running"``) is raised, for
    :func:`_fall_back` to handle."""
    from concurrent.futures import CancelledError

    if getattr(client, "status", "running") != "running":
        raise ConnectionError(f"the client is {client.status}")
    parts: list[np.ndarray | None] = [None] * len(items)
    pending = list(range(len(items)))
    for attempt in range(DASK_RETRIES + 1):
        # hash=False: equal arrays (query and reference of one call, or of successive
        # calls) get keys of their own, so releasing one never loses another's data
        scattered = client.scatter(list(shared), broadcast=True, hash=False) if shared else []
        futures = {i: client.submit(task, "numpy", *scattered, items[i], pure=False)
                   for i in pending}
        lost = []
        for i, future in futures.items():
            try:
                parts[i] = future.result()
            except CancelledError:
                if attempt == DASK_RETRIES or client.status != "running":
                    raise
                lost.append(i)
        if not lost:
            break
        client.cancel(list(futures.values()))
        pending = lost
    return _add(parts) if reduce == "sum" else parts


# --------------------------------------------------------------------------- partitions


def map_partitions(task: Callable[[object, object], object], source: object,
                   columns: Sequence[str], merge: Callable[[object, object], object],
                   progress: Callable[[int, int], None] | None = None,
                   n_jobs: int | None = None) -> object:
    """One pass of a streamed computation over ``source``'s partitions (its batches, once
    :meth:`~core.data.stream_sources.TableSource.batched`): every partition's ``task(partition,
    frame)``, combined by ``merge(a, b)`` (``a`` the partitions before ``b``'s, so an
    order-sensitive result — rows kept in row order — is the same on every run), on the
    current engine.

    ``source`` is a :class:`core.data.stream_sources.TableSource`. On threads this thread reads the
    batches in order (:meth:`~core.data.stream_sources.TableSource.batches`: a row group or frame
    partition a batch at a time) and hands each to a pool of ``n_jobs`` workers, at most
    :func:`in_flight` ``(n_jobs)`` batches at a time; the results are merged in partition
    order as they arrive, so this machine holds that many batches and partial results at a
    time, whatever the sizes of the table's row groups. On Dask every read unit (a row group,
    a frame partition) is one task that reads its batches in order on a worker (Parquet:
    from the file, which the workers must see at the same path; a Dask DataFrame: the frame's
    own tasks), runs ``task`` on each and merges them there, and returns only its partial
    result; the units' results are merged on the cluster by a balanced tree of ``merge``
    tasks over neighbouring units, and only the final result travels back. ``task`` and
    ``merge`` must pickle (module-level classes or functions). ``progress(done, total)`` is
    called from the calling thread as partitions finish. A cluster lost mid-pass is handled
    as :func:`run_tiles` does (the pass reruns on threads when the engine has ``fallback``,
    else :class:`ClusterLost`).
    """
    partitions = list(source.partitions)
    engine = current()
    if engine.name == "dask":
        try:
            return _dask_partitions(engine.client, task, source, partitions, list(columns),
                                    merge, progress)
        except Exception as error:
            _fall_back(engine, error)
    workers = max(1, default_workers() if n_jobs is None else n_jobs)
    batches = source.batches(columns)
    if workers == 1 or len(partitions) == 1:
        total = None
        with threadpool_limits(limits=1, user_api="blas"):
            for k, (partition, frame) in enumerate(batches):
                result = task(partition, frame)
                total = result if total is None else merge(total, result)
                if progress is not None:
                    progress(k + 1, len(partitions))
        return total
    total, done = None, 0
    pending: collections.deque = collections.deque()
    with threadpool_limits(limits=1, user_api="blas"), ThreadPoolExecutor(workers) as pool:
        for item in itertools.chain(batches, [None]):
            if item is not None:
                pending.append(pool.submit(contextvars.copy_context().run, task, *item))
            # fold the finished results in order; wait while the pool is full (or at the end)
            while pending and (pending[0].done() or len(pending) >= in_flight(workers)
                               or item is None):
                wait([pending[0]], timeout=0.25)
                if pending[0].done():
                    result = pending.popleft().result()
                    total = result if total is None else merge(total, result)
                    done += 1
                if progress is not None:
                    progress(done, len(partitions))
    return total


def in_flight(workers: int) -> int:
    """Batches a threaded pass holds at once: one running on each worker and one read ahead
    for each (the memory plan counts them, :mod:`core.kernels.memory`)."""
    return 2 * max(1, workers)


def _run_unit(task: Callable, merge: Callable, source: object, batches: list,
              columns: list, frame: object = None) -> object:
    """The batches of one read unit on a worker, merged in order (``frame``: the unit's rows
    when the source has no files, a Dask partition computed there)."""
    with threadpool_limits(limits=1, user_api="blas"):  # as on threads: one BLAS thread a task
        if frame is None:
            pieces = source.batches(columns, batches)
        else:
            whole = frame.reset_index(drop=True)
            # a pandas unit's rows begin at its first batch's; a Dask partition's at offset 0
            at = [b.start - batches[0].start if source.kind == "pandas" else b.offset
                  for b in batches]
            pieces = ((b, whole.iloc[a:a + b.rows].reset_index(drop=True))
                      for a, b in zip(at, batches, strict=True))
        total = None
        for partition, rows in pieces:
            result = task(partition, rows)
            total = result if total is None else merge(total, result)
        return total


def _dask_partitions(client, task: Callable, source: object, partitions: list,
                     columns: list, merge: Callable[[object, object], object],
                     progress: Callable[[int, int], None] | None) -> object:
    from dask import delayed
    from distributed import as_completed

    [shared] = client.scatter([task], broadcast=True, hash=False)
    units: dict = {}
    for partition in partitions:  # the batches of each read unit, in order
        units.setdefault(partition.read_unit(), []).append(partition)
    kind = getattr(source, "kind", "parquet")
    if kind == "parquet":
        light = source.without_frame()
        futures = [client.submit(_run_unit, shared, merge, light, batches, columns,
                                 pure=False) for batches in units.values()]
    elif kind == "pandas":  # rows in this process: each unit's are sent with its task
        light = source.without_frame()
        futures = [client.submit(_run_unit, shared, merge, light, batches, columns,
                                 _unit_rows(source, batches, columns), pure=False)
                   for batches in units.values()]
    else:
        pieces = source.frame[columns].to_delayed()
        light = source.without_frame()
        futures = client.compute([delayed(_run_unit)(task, merge, light, batches, columns,
                                                     pieces[batches[0].unit_index])
                                  for batches in units.values()])
    level, merges = list(futures), []
    while len(level) > 1:  # neighbours merged pairwise, in order: a balanced tree
        level = [client.submit(merge, level[i], level[i + 1], pure=False)
                 if i + 1 < len(level) else level[i] for i in range(0, len(level), 2)]
        merges += level
    done = 0
    sizes = [len(batches) for batches in units.values()]
    order = {future.key: size for future, size in zip(futures, sizes, strict=True)}
    for future in as_completed(futures, loop=client.loop):
        done += order[future.key]
        if progress is not None:
            progress(done, len(partitions))
    result = level[0].result()
    client.cancel([*futures, *merges, shared])
    return result


def _unit_rows(source: object, batches: list, columns: list) -> object:
    """The rows of a pandas source's batches, as one frame (sent with a Dask task)."""
    first, last = batches[0], batches[-1]
    return source.frame.iloc[first.start:last.start + last.rows][columns]
