"""The settings of an audit and of each of its sections.

:class:`AuditSettings` holds every setting of a whole audit, flat, as the command line and
``results.json`` name them. Each section of the audit is computed from a small frozen settings
object of its own — :class:`ReliabilitySettings`, :class:`TrustSettings`,
:class:`LocalBiasSettings`, :class:`FindingsSettings`, :class:`LandscapeSettings` — which is
also the key under which a cache keeps the section (with the data's fingerprint). A page
builds its section's settings from its widgets; :func:`compose` builds the audit's settings
from the sections the pages showed, so the report computes (or finds cached) exactly those.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import ClassVar

from core.data.validation import check_choice, check_count, check_positive
from core.kernels.computation import COMPUTATIONS
from core.kernels.rff import TEST_FEATURES
from core.local.lcb_estimate import COMPUTATIONS as LCB_COMPUTATIONS
from core.local.lce_plan import METHODS as LCE_COMPUTATIONS
from core.local.slice_discovery import ERROR_RATES
from core.stattests.klce import DEFAULT_NULL, NULLS

PARTS = ("test", "calibration", "train", "all")
#: Most bootstrap resamples of the extended metrics (each refits every curve).
EXTENDED_RESAMPLES = 100
#: Above this many rows the Reliability page offers fewer bootstrap resamples by default.
LARGE_ROWS = 100_000
#: Rows of the seeded sample of a large audit: a streamed audit computes the sections that are
#: not sums over rows on it, and an in-memory audit of more rows draws its slice findings'
#: max-|T| null on it (:func:`core.audit.findings.slice_section`), so both give the same findings.
SAMPLE_ROWS = 200_000
#: Each counted setting and its least value.
_COUNTS = {"n_bins": 1, "n_bootstrap": 0, "test_resamples": 1, "group_bins": 1,
           "grid_resamples": 1, "slice_ranges": 2, "slice_depth": 1, "slice_resamples": 1,
           "seed": 0, "grid_features": 2}


def default_bootstrap(n: int) -> int:
    """The Reliability page's default bootstrap resamples: 200, or 50 above
    :data:`LARGE_ROWS` rows, where each resample of every metric costs a pass over the rows
    (about 0.3 s at 10⁶) while the intervals are already narrow; the page shows the value and
    the user may raise it.

    Parameters
    ----------
    n : int
        Rows audited.
    """
    return 50 if n > LARGE_ROWS else 200


def check_settings(settings: object) -> None:
    """Validate whichever of the known settings ``settings`` (a settings dataclass) holds: one
    rule per setting, shared by the audit's settings and every section's."""
    values = {f.name: getattr(settings, f.name) for f in fields(settings)}
    if "part" in values:
        check_choice(values["part"], PARTS, "part", f"choose one of {', '.join(PARTS)}")
    if "null" in values:
        check_choice(values["null"], NULLS, "null", f"choose one of {', '.join(NULLS)}")
    if "embedding" in values:
        check_choice(values["embedding"], ("pca", "tsne", "umap"), "embedding method")
    if "computation" in values:
        choices = getattr(settings, "computations", COMPUTATIONS)
        check_choice(values["computation"], choices, "computation",
                     f"choose one of {', '.join(choices)}")
    if "error_rate" in values:
        check_choice(values["error_rate"], ERROR_RATES, "error rate",
                     "choose 'fwer' (family-wise) or 'fdr' (false discovery rate)")
    for name, minimum in _COUNTS.items():
        if name in values:
            check_count(name, values[name], minimum)
    if values.get("slice_depth", 1) > 3:
        raise ValueError(f"slice_depth must be 1, 2 or 3 (columns in one slice), not "
                         f"{values['slice_depth']}.")
    if "gamma" in values:
        check_positive("gamma", values["gamma"])
    for name in ("alpha", "slice_alpha"):
        value = values.get(name)
        if value is not None and not 0.0 < value < 1.0:
            raise ValueError(f"{name} must lie strictly between 0 and 1, not {value!r}.")


class _Checked:
    """Settings validated once, when they are made (:func:`check_settings`)."""

    def __post_init__(self) -> None:
        check_settings(self)

    def keeping(self, *names: str):
        """These settings with every field but ``names`` at its default: the key of a piece
        of a section that reads only those fields (so a change elsewhere finds it cached)."""
        default = type(self)()
        return replace(default, **{name: getattr(self, name) for name in names})


@dataclass(frozen=True)
class ReliabilitySettings(_Checked):
    """The Reliability page: binned table, metrics with bootstrap intervals, tests, groups.

    ``notion`` ``None`` is the data's default notion; ``class_index`` counts only for the
    classwise notion (:meth:`resolved` drops it otherwise)."""

    notion: str | None = None
    class_index: int | None = None
    n_bins: int = 15
    strategy: str = "uniform"
    interval: str = "wilson"
    n_bootstrap: int = 200
    bootstrap_method: str = "basic"
    test_resamples: int = 500
    group_bins: int = 10
    computation: str = "auto"
    seed: int = 0


@dataclass(frozen=True)
class TrustSettings(_Checked):
    """The Trust page's bandwidth grid and aggregated KLCE test over the audit ``features``
    for the class ``class_index`` one-vs-rest (``None``: the positive class, or class 0)."""

    features: tuple[str, ...] = ()
    class_index: int | None = None
    null: str = DEFAULT_NULL
    grid_resamples: int = 200
    computation: str = "auto"
    grid_features: int = TEST_FEATURES
    seed: int = 0


@dataclass(frozen=True)
class LocalBiasSettings(_Checked):
    """The Local bias page: the LCB of the query rows at the bandwidths ``prob_bandwidth``
    and ``feature_bandwidth`` (``None``: cross-validated); ``computation`` ``"auto"`` or
    ``"exact"`` or ``"sampled"`` (:func:`core.local.lcb_estimate.plan_lcb`)."""

    computations: ClassVar = LCB_COMPUTATIONS

    features: tuple[str, ...] = ()
    class_index: int | None = None
    computation: str = "auto"
    seed: int = 0
    prob_bandwidth: float | None = None
    feature_bandwidth: float | None = None


@dataclass(frozen=True)
class FindingsSettings(_Checked):
    """The Findings page: every slice of the columns ``names`` tested for a calibration gap
    at level ``alpha`` with ``error_rate`` control."""

    names: tuple[str, ...] = ()
    alpha: float = 0.05
    error_rate: str = "fwer"
    slice_ranges: int = 4
    slice_depth: int = 2
    slice_resamples: int = 1000
    notion: str | None = None
    seed: int = 0


@dataclass(frozen=True)
class LandscapeSettings(_Checked):
    """The LCE landscape page: MLCE over γ on a ``embedding`` map of the audit features, by
    the LCE ``computation`` (one of :data:`core.local.lce_plan.METHODS`; see
    :func:`~core.local.lce_plan.plan_method`).

    Attributes
    ----------
    features : tuple of str
        The audit features mapped.
    embedding : str
        ``"pca"``, ``"tsne"`` or ``"umap"``.
    gamma : float
        The LCE bandwidth γ.
    seed : int
        Seed of the map and of the curve's sample.
    computation : str
        The LCE method.
    """

    computations: ClassVar = LCE_COMPUTATIONS

    features: tuple[str, ...] = ()
    embedding: str = "pca"
    gamma: float = 0.2
    seed: int = 0
    computation: str = "auto"


@dataclass(frozen=True)
class AuditSettings(_Checked):
    """Every setting of an audit; the defaults are the pages' defaults.

    ``part`` picks the rows audited (the test split by default when the data has one);
    ``features`` the audit features of the local tests (``None``: all mapped ones);
    ``class_index`` the class tested one-vs-rest in a multiclass problem (``None``: the
    positive class, or class 0 for multiclass). ``alpha`` is the level of the audit's
    verdicts (the Trust test's); ``slice_alpha`` the Findings page's, when it differs
    (``None``: ``alpha``). Each section's own settings are :meth:`reliability`,
    :meth:`trust`, :meth:`local_bias`, :meth:`findings` and :meth:`landscape`.
    """

    part: str = "test"
    notion: str | None = None
    class_index: int | None = None
    n_bins: int = 15
    strategy: str = "uniform"
    interval: str = "wilson"
    n_bootstrap: int = 200
    bootstrap_method: str = "basic"
    test_resamples: int = 500
    group_bins: int = 10
    features: tuple[str, ...] | None = None
    null: str = DEFAULT_NULL
    grid_resamples: int = 200
    computation: str = "auto"
    grid_features: int = TEST_FEATURES
    embedding: str = "pca"
    gamma: float = 0.2
    slice_ranges: int = 4
    slice_depth: int = 2
    slice_resamples: int = 1000
    slice_notion: str | None = None
    error_rate: str = "fwer"
    alpha: float = 0.05
    seed: int = 0
    slice_alpha: float | None = None

    @property
    def findings_alpha(self) -> float:
        """The level of the Findings section: ``slice_alpha``, else ``alpha``."""
        return self.alpha if self.slice_alpha is None else self.slice_alpha

    def reliability(self) -> ReliabilitySettings:
        # the Reliability section's fields carry the same names here
        return ReliabilitySettings(**{f.name: getattr(self, f.name)
                                      for f in fields(ReliabilitySettings)})

    def trust(self, features: tuple[str, ...]) -> TrustSettings:
        return TrustSettings(tuple(features), self.class_index, self.null, self.grid_resamples,
                             self.computation, self.grid_features, self.seed)

    def local_bias(self, features: tuple[str, ...]) -> LocalBiasSettings:
        # LCB chooses exact or sampled by its own time estimate (the audit's ``computation``
        # is the kernel tests')
        return LocalBiasSettings(tuple(features), self.class_index, "auto", self.seed)

    def findings(self, names: tuple[str, ...]) -> FindingsSettings:
        return FindingsSettings(tuple(names), self.findings_alpha, self.error_rate,
                                self.slice_ranges, self.slice_depth, self.slice_resamples,
                                self.slice_notion, self.seed)

    def landscape(self, features: tuple[str, ...]) -> LandscapeSettings:
        return LandscapeSettings(tuple(features), self.embedding, self.gamma, self.seed)


@dataclass(frozen=True)
class PageSettings:
    """The sections the pages showed (``None``: a page not opened), with the rows the
    Reliability page audited and the Trust page's verdict level."""

    part: str = "test"
    reliability: ReliabilitySettings | None = None
    trust: TrustSettings | None = None
    trust_alpha: float | None = None
    local_bias: LocalBiasSettings | None = None
    findings: FindingsSettings | None = None
    landscape: LandscapeSettings | None = None


def compose(pages: PageSettings) -> tuple[dict, tuple[str, ...]]:
    """The :class:`AuditSettings` fields that reproduce the sections the pages showed, and a
    sentence for each setting two pages chose differently (the flat audit settings hold one
    class and one feature list: the Trust page's win, then the Local bias page's, then the
    LCE landscape page's).

    Parameters
    ----------
    pages : PageSettings
        The sections the pages showed.
    """
    values: dict = {"part": pages.part}
    if pages.reliability is not None:
        values.update({f.name: getattr(pages.reliability, f.name)
                       for f in fields(pages.reliability) if f.name != "class_index"})
        if pages.reliability.notion == "classwise":
            values["class_index"] = pages.reliability.class_index
    differences = []
    chosen: dict[str, tuple[str, object]] = {}
    for page, settings in (("LCE landscape", pages.landscape), ("Local bias", pages.local_bias),
                           ("Trust", pages.trust)):
        if settings is None:
            continue
        for name in ("features", "class_index"):
            if hasattr(settings, name):
                value = getattr(settings, name)
                if name in chosen and chosen[name][1] != value:
                    differences.append(
                        f"The {chosen[name][0]} page used {name.replace('_', ' ')} "
                        f"{chosen[name][1]!r}; the report uses the {page} page's {value!r}.")
                chosen[name] = (page, value)
    values.update({name: value for name, (_, value) in chosen.items()})
    if pages.trust is not None:
        values.update(null=pages.trust.null, grid_resamples=pages.trust.grid_resamples,
                      grid_features=pages.trust.grid_features)
    if pages.trust_alpha is not None:
        values["alpha"] = pages.trust_alpha
    if pages.landscape is not None:
        values.update(embedding=pages.landscape.embedding, gamma=pages.landscape.gamma)
    if pages.findings is not None:
        found = pages.findings
        values.update(slice_alpha=found.alpha, error_rate=found.error_rate,
                      slice_ranges=found.slice_ranges, slice_depth=found.slice_depth,
                      slice_resamples=found.slice_resamples, slice_notion=found.notion)
    return values, tuple(differences)


def settings_for(audit, overrides: dict) -> AuditSettings:
    """:class:`AuditSettings` with ``overrides`` (field → value) that fit ``audit`` (an
    :class:`~core.data.audit_data.AuditData`): audit features it does not map and a class
    index beyond its classes are dropped (they come from widgets of an earlier dataset), as
    is a notion it has no use for. Without an ``n_bootstrap`` the Reliability page's default
    for this size applies (:func:`default_bootstrap`).

    Parameters
    ----------
    audit : AuditData
        The data the settings are for.
    overrides : dict
        Field → value, e.g. the pages' or the command line's.
    """
    values = dict(overrides)
    values.setdefault("n_bootstrap", default_bootstrap(audit.n))  # the Reliability page's
    if values.get("features") is not None:
        mapped = set(audit.feature_frame.columns)
        values["features"] = tuple(f for f in values["features"] if f in mapped)
    if values.get("class_index") is not None and not 0 <= values["class_index"] < \
            audit.n_classes:
        del values["class_index"]
    notions = ("positive", "top-label") if audit.is_binary else ("top-label", "classwise")
    if values.get("notion") is not None and values["notion"] not in notions:
        del values["notion"]
    return AuditSettings(**values)
