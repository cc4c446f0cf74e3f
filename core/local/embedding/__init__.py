"""Low-dimensional embeddings of the audit features: PCA, t-SNE and UMAP.

Luo et al. ("Local Calibration: Metrics and Recalibration", §3–4) compute the local
calibration error LCE on a feature map ``φ = φ₂ ∘ φ₁`` whose last step ``φ₂`` reduces the
features to a few dimensions with t-SNE (2 or 3 dimensions) or PCA (20–50 dimensions), and draw
the LCE *landscape* over a 2-D t-SNE map (their Fig. 2). This package provides ``φ₂`` for the
audit features of an :class:`~core.data.AuditData`:

* :func:`prepare_features` z-scores every encoded feature column, so that no unit dominates the
  Euclidean distances all three methods start from.
* :func:`embed` fits a map on at most ``max_fit`` rows (a seeded random subsample when there
  are more) and *places* the remaining rows with the fitted map, so the cost of the nonlinear
  methods stays bounded on large tables: PCA projects them (``PCA.transform``), t-SNE
  optimises each new point against the fixed reference map (openTSNE's
  ``TSNEEmbedding.transform``, Poličar et al. 2019), UMAP places them through its fuzzy
  neighbour graph (``UMAP.transform``).
* t-SNE and UMAP embed each distinct feature vector once and give repeated vectors its
  coordinates (see :func:`embed`): categorical audit features repeat vectors a lot, and a
  nearest-neighbour graph of many identical points falls apart.
* :func:`embedding_cache_key` gives a stable key per dataset fingerprint and parameters.
* :func:`landscape_coordinates` z-scores the first two dimensions of a map, the plane the LCE
  landscape is computed on; :func:`profile_coordinates` does the same for a single feature,
  the 1-D view when only one audit feature is chosen.

The settings of each method (chosen by timing on the 10,000-row census demo on a 2-core
machine, ``benchmarks/embedding.py``) and how each is made deterministic are documented in its
module. Determinism: the same inputs and ``seed`` give identical coordinates.

One concept per module: :mod:`~core.local.embedding.inputs` (settings and their checks),
:mod:`~core.local.embedding.method_pca`, :mod:`~core.local.embedding.method_tsne` and
:mod:`~core.local.embedding.method_umap` (each method's fit and placement),
:mod:`~core.local.embedding.placement` (placing rows batch by batch with progress),
:mod:`~core.local.embedding.maps` (:func:`embed`, distinct rows, cache keys, coordinates) and
:mod:`~core.local.embedding.fitted` (a map kept to place new rows later).
"""

from core.local.embedding.fitted import FittedEmbedding, fit_embedding
from core.local.embedding.inputs import (
    DEFAULT_PARAMS,
    METHOD_PARAMS,
    METHODS,
    MIN_ROWS,
    SETTINGS_VERSION,
    prepare_features,
)
from core.local.embedding.maps import (
    Embedding,
    distinct_rows,
    embed,
    embedding_cache_key,
    landscape_coordinates,
    profile_coordinates,
)

__all__ = [
    "DEFAULT_PARAMS",
    "METHODS",
    "METHOD_PARAMS",
    "MIN_ROWS",
    "SETTINGS_VERSION",
    "Embedding",
    "FittedEmbedding",
    "distinct_rows",
    "embed",
    "embedding_cache_key",
    "fit_embedding",
    "landscape_coordinates",
    "prepare_features",
    "profile_coordinates",
]
