"""Slice findings of a large table in memory by the streamed audit's method: every slice's
sums over all rows, the max-|T| null drawn on a seeded sample of them.

:func:`core.local.slice_discovery.discover_slices` redraws every row's label B times (B = 1,000:
10⁹ Bernoulli draws at 10⁶ rows) and computes each slice's exact Poisson-binomial tail. A
streamed audit (:func:`core.local.slice_streamed.streamed_discovery`) cannot hold the rows and
does less: the counts, gaps, statistics T, intervals and per-slice p-values (the Edgeworth
expansion of the exact cumulants) come from sums over all rows, the max-|T| null from B
consistency resamples of a seeded sample of the rows, each slice standardised by the
sample's own Σp(1 − p) (the joint null law of the T's is, to first order, Gaussian with
correlations that the sample estimates; module doc of :mod:`core.local.slice_streamed`).

:func:`sampled_discovery` is that method on rows held in memory — the same family
(:func:`core.local.slice_space.enumerate_slices` on all rows), the same sums, the null on the
rows ``sample`` (a streamed audit's sample, :func:`core.kernels.resampling.row_sample`), the
same functions after that (:func:`core.local.slice_streamed.sample_parts`,
:func:`core.local.slice_discovery.finish_discovery`) — so an in-memory audit and a streamed
audit of the same rows report the same findings. The audit uses it above
:data:`core.audit.settings.SAMPLE_ROWS` rows (:func:`core.audit.findings.slice_section`); its
level is measured by ``benchmarks/slices_sampled.py`` (``docs/studies/slices.md``).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from core.local.slice_discovery import (
    DEFAULT_RESAMPLES,
    Progress,
    SliceDiscovery,
    checked_inputs,
    finish_discovery,
    slice_targets,
)
from core.local.slice_resampling import row_cells
from core.local.slice_space import DEFAULT_RANGES, SliceFamily, enumerate_slices, membership_matrix
from core.local.slice_streamed import row_targets, sample_parts, sampled_scope

#: Rows whose per-row terms are made at once by :func:`exact_sums`.
SUM_ROWS = 1 << 18


def exact_sums(family: SliceFamily, p: np.ndarray, labels: np.ndarray, notion: str,
               names: tuple[str, ...]) -> np.ndarray:
    """Every slice's sums over all rows of each tested class's Σy, Σp, Σp(1 − p) and two
    higher cumulants (:func:`core.local.slice_streamed.row_targets`), ``(K, classes ×
    TARGET_SUMS)``: rows with the same codes lie in the same slices, so a chunk's rows are
    summed within their cells first and the cells then over the slices.

    Parameters
    ----------
    family : SliceFamily
        The slices of the rows.
    p : numpy.ndarray
        ``(n,)`` or ``(n, m)`` probabilities.
    labels : numpy.ndarray
        ``(n,)`` labels.
    notion : str
        The notion tested.
    names : tuple of str
        The classes' names.

    Returns
    -------
    numpy.ndarray
    """
    total = None
    for start in range(0, family.n, SUM_ROWS):
        rows = slice(start, start + SUM_ROWS)
        terms = row_targets(p[rows], labels[rows], notion, names)
        first, cell_of = row_cells(family.codes[rows], family.codings_levels)
        cells = np.column_stack([np.bincount(cell_of, terms[:, k], first.size)
                                 for k in range(terms.shape[1])])
        ones = membership_matrix(family.codes[rows][first], family.codings_levels,
                                 family.blocks, family.cell_maps, family.n_slices)
        part = np.asarray(ones.T.astype(np.float64) @ cells)
        total = part if total is None else total + part
    return total


def sampled_discovery(
    probs: np.ndarray,
    y: np.ndarray,
    features,
    sample: np.ndarray,
    *,
    alpha: float = 0.05,
    error_rate: str = "fwer",
    n_ranges: int = DEFAULT_RANGES,
    depth: int = 2,
    n_resamples: int = DEFAULT_RESAMPLES,
    notion: str | None = None,
    class_names: tuple[str, ...] | None = None,
    seed: int = 0,
    progress: Progress | None = None,
) -> SliceDiscovery:
    """:func:`core.local.slice_discovery.discover_slices` by a streamed audit's method (module
    doc): every slice's counts, gaps, statistics, intervals and p-values from sums over all
    rows, the max-``|T|`` null from B consistency resamples of the rows ``sample``.

    Parameters
    ----------
    probs, y, features
        As :func:`~core.local.slice_discovery.discover_slices`.
    sample : numpy.ndarray
        Sorted indices of the rows the null is drawn on.
    alpha, error_rate, n_ranges, depth, n_resamples, notion, class_names, seed
        As :func:`~core.local.slice_discovery.discover_slices`.
    progress : callable, optional
        ``progress(fraction, message)``.

    Returns
    -------
    SliceDiscovery
        Its ``family`` holds every row; its statement says where the null came from.
    """
    p, labels, frame, alpha, n_resamples, seed, notion, names = checked_inputs(
        probs, y, features, alpha, error_rate, n_resamples, seed, notion, class_names)
    sample = np.asarray(sample, dtype=np.int64)

    def report(fraction: float, message: str) -> None:
        if progress is not None:
            progress(fraction, message)

    report(0.0, "Enumerating the slices…")
    family = enumerate_slices(frame, n_ranges, depth)
    report(0.05, f"Sums of {family.n_slices:,} slices over all {family.n:,} rows…")
    sums = exact_sums(family, p, labels, notion, names)
    scores, targets = slice_targets(p[sample], labels[sample], notion, names, n_resamples)
    report(0.1, f"Resampling {family.n_slices:,} slices on a seeded sample of "
                f"{sample.size:,} rows, B = {n_resamples:,}…")
    parts, null = sample_parts(
        dataclasses.replace(family, codes=family.codes[sample]), sums, scores, targets,
        n_resamples, seed, lambda f: report(0.1 + 0.85 * f, f"Resampling: {f:.0%} of the sample"))
    scope = sampled_scope("In memory, as a streamed audit computes them", family.n,
                          sample.size, n_resamples)
    result = finish_discovery(family, parts, null, alpha, error_rate, notion, n_resamples, seed,
                              scope)
    report(1.0, "Slices tested")
    return result
