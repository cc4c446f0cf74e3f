"""The kernel machinery: kernel functions and their settings, the tile engine and where it
runs, random Fourier features, and the resampling schemes of the tests.

This is the public face (``from core import kernels``); one concept per module:

* :mod:`core.kernels.tiles` — kernel blocks, the median heuristic, standardisation and the
  tile sums ``diag(Eᵀ K E)`` and ``K V`` that never hold the n×n matrix;
* :mod:`core.kernels.spec` — :class:`KernelSpec`, the one frozen value of kernel settings,
  and the inputs of a local kernel statistic;
* :mod:`core.kernels.engine` — where tiles run: threads, a Dask cluster or a GPU;
* :mod:`core.kernels.computation` — exact tiles, random features or blocks, chosen by the
  estimated time, and the plan's D and B (:func:`plan`);
* :mod:`core.kernels.rff` — random Fourier features, accumulated chunk by chunk;
* :mod:`core.kernels.resampling` — consistency, permutation, bootstrap and wild resamples,
  and the counter-based generator of per-row draws (the same wherever a row is read).
"""

from core.kernels import engine
from core.kernels.computation import COMPUTATIONS, Plan, choose, exact_seconds, plan
from core.kernels.computation import summary as computation_summary
from core.kernels.declared import (
    LOCAL,
    DaskTls,
    Declaration,
    DeclaredEngine,
    connect,
    declared_engines,
    read_config,
)
from core.kernels.engine import current as current_engine
from core.kernels.engine import gpu_available, take_fallback
from core.kernels.engine import reset as reset_engine
from core.kernels.engine import set as set_engine
from core.kernels.resampling import SCHEMES, resample_residuals, row_sample
from core.kernels.rff import DEFAULT_FEATURES, FourierMap
from core.kernels.spec import KernelInputs, KernelSpec, kernel_inputs, one_vs_rest
from core.kernels.tiles import (
    Standardizer,
    gaussian_block,
    kernel_matmul,
    laplacian_block,
    median_heuristic,
    quadratic_forms,
    scale_blocks,
)

__all__ = [
    "COMPUTATIONS",
    "DEFAULT_FEATURES",
    "LOCAL",
    "SCHEMES",
    "DaskTls",
    "Declaration",
    "DeclaredEngine",
    "FourierMap",
    "KernelInputs",
    "KernelSpec",
    "Plan",
    "Standardizer",
    "choose",
    "computation_summary",
    "connect",
    "declared_engines",
    "engine",
    "current_engine",
    "gpu_available",
    "reset_engine",
    "set_engine",
    "take_fallback",
    "exact_seconds",
    "gaussian_block",
    "kernel_inputs",
    "kernel_matmul",
    "laplacian_block",
    "median_heuristic",
    "one_vs_rest",
    "plan",
    "quadratic_forms",
    "read_config",
    "resample_residuals",
    "row_sample",
    "scale_blocks",
]
