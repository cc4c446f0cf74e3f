"""The audited table: reading it, guessing and checking its columns, the validated container
:class:`AuditData`, groups, the generated demos and simulations, and the reference-model
workflow for a table without predictions.

This is the public face (``from core.data import AuditData``); one concept per module:

* :mod:`core.data.readers` — CSV/TSV/Parquet files into a frame, delimiter and encoding
  detected; :mod:`core.data.column_guess` — roles guessed from names and values;
* :mod:`core.data.table` — the raw table's columns (repeated names, numeric and categorical
  columns, per-column summaries); :mod:`core.data.mapping` — which column plays which role;
* :mod:`core.data.predictions` — labels, probabilities and ensemble members decoded and
  checked; :mod:`core.data.features` — audit features encoded, groups, splits;
* :mod:`core.data.audit_data` — :class:`AuditData`, the one validated input container;
* :mod:`core.data.problems` — :class:`DataError` and the validation report's notes;
* :mod:`core.data.validation` — the argument checks every public function runs once;
* :mod:`core.data.groups` — levels of a group attribute, largest first;
* :mod:`core.data.demo` — the four generated demos (their generators in
  :mod:`core.data.census_demo`, :mod:`core.data.land_cover_demo` and
  :mod:`core.data.ensemble_demo`, the shared draws in :mod:`core.data.demo_draws`);
  :mod:`core.data.simulations` — the papers' simulated data and the scale table;
  :mod:`core.data.public_tables` — generated stand-ins for public tables (ProPublica's
  COMPAS file, German credit);
* :mod:`core.data.reference_model` — train a model on a raw table and audit its predictions,
  with :mod:`core.data.reference_split` (labels, stratified split),
  :mod:`core.data.reference_estimators` (the models) and :mod:`core.data.outcome_check`
  (does the model read the outcome);
  :mod:`core.data.leakage` — which columns it may learn from (label leakage, identifiers,
  dates), with :mod:`core.data.leakage_statistics` (single-feature AUCs and their bounds)
  and :mod:`core.data.column_kinds` (identifiers, dates, names recorded after the outcome);
* :mod:`core.data.stream_sources` — a table larger than memory (Parquet files, a Dask
  DataFrame) read partition by partition, in batches (:func:`open_source`);
  :mod:`core.data.stream_schema` — its first pass: labels, levels, split counts;
  :mod:`core.data.stream_decoding` — each partition validated with AuditData's checks and
  decoded.
"""

from core.data.audit_data import AuditData
from core.data.column_guess import ColumnGuess, group_member_columns, guess_columns
from core.data.demo import DEFAULT_DEMO, DEMOS, demo_frame, demo_mapping, load_demo
from core.data.leakage import FeatureScreen, LeftOut, screen_features
from core.data.mapping import ColumnMapping, model_name
from core.data.outcome_check import ModelCheck
from core.data.problems import DataError, ValidationNote, describe_rows
from core.data.public_tables import compas_like_frame, german_credit_like_frame
from core.data.readers import SUPPORTED_SUFFIXES, LoadedTable, check_limits, read_table
from core.data.reference_estimators import REFERENCE_MODELS
from core.data.reference_model import (
    ReferenceModelResult,
    default_model_features,
    train_reference_model,
)
from core.data.stream_sources import TableSource, open_source
from core.data.table import (
    deduplicate_columns,
    is_categorical,
    is_numeric_feature,
    summarise_columns,
)
from core.data.time_column import PERIODS

__all__ = [
    "DEFAULT_DEMO",
    "DEMOS",
    "PERIODS",
    "REFERENCE_MODELS",
    "SUPPORTED_SUFFIXES",
    "AuditData",
    "ColumnGuess",
    "ColumnMapping",
    "DataError",
    "FeatureScreen",
    "LeftOut",
    "LoadedTable",
    "ModelCheck",
    "ReferenceModelResult",
    "TableSource",
    "ValidationNote",
    "check_limits",
    "compas_like_frame",
    "deduplicate_columns",
    "default_model_features",
    "demo_frame",
    "demo_mapping",
    "describe_rows",
    "german_credit_like_frame",
    "group_member_columns",
    "guess_columns",
    "is_categorical",
    "is_numeric_feature",
    "load_demo",
    "model_name",
    "open_source",
    "read_table",
    "screen_features",
    "summarise_columns",
    "train_reference_model",
]
