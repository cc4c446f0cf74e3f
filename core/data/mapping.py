"""Which column plays which role: :class:`ColumnMapping` (label, probability or logit
columns, audit features, group attributes, split, ensemble members) and the checks that a
mapping is complete, unambiguous and uses each column in one role only.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from core.data.predictions import common_prefix
from core.data.problems import DataError, quote_list


@dataclass(frozen=True)
class ColumnMapping:
    """Which column of a table plays which role; the keyword arguments of ``from_frame``.

    ``probs`` with one column means a binary problem and holds P(y = positive); with m
    columns it holds one probability (or logit) per class, in class order.
    ``members`` lists ensemble members, each as one column (binary) or m columns.
    ``time`` names the time column of monitoring over time (:mod:`core.data.time_column`).
    ``models`` lists further prediction sets of other models on the same rows, each as
    ``(name, columns)`` with one column (binary) or m columns in class order; ``model`` names
    the prediction set in ``probs`` (empty: :func:`model_name` of its columns). Every page
    audits one of them (:meth:`core.data.audit_data.AuditData.with_model`); the comparison
    (:mod:`core.compare`) takes two.

    Attributes
    ----------
    label : str
        The label column.
    probs : tuple of str
        The audited prediction set's columns.
    logits : bool
        The prediction columns hold logits or scores.
    positive : str or None
        The positive class of a binary label.
    features, groups : tuple of str
        Audit features and group attributes.
    split : str or None
        The split column.
    members : tuple of tuple of str
        Ensemble members' columns.
    models : tuple of (str, tuple of str)
        Further prediction sets by name.
    model : str
        The name of the prediction set in ``probs``.
    """

    label: str
    probs: tuple[str, ...]
    logits: bool = False
    positive: str | None = None
    features: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()
    split: str | None = None
    members: tuple[tuple[str, ...], ...] = ()
    models: tuple[tuple[str, tuple[str, ...]], ...] = ()
    model: str = ""
    time: str | None = None

    @property
    def model_names(self) -> tuple[str, ...]:
        """Every prediction set's name, the one in ``probs`` first."""
        return (self.model or model_name(self.probs), *(name for name, _ in self.models))

    def as_kwargs(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def model_name(columns: tuple[str, ...]) -> str:
    """The default name of a prediction set: its column (binary), else the columns' common
    prefix without a trailing ``_``/``-``/``.`` (``a_cat, a_dog`` → ``a``), else ``model``.

    Parameters
    ----------
    columns : tuple of str
        The probability columns of one model.
    """
    if len(columns) == 1:
        return str(columns[0])
    return common_prefix([str(c) for c in columns]).rstrip("_-. ") or "model"


def _mapped_columns(mapping: ColumnMapping) -> list[tuple[str, str]]:
    """Every (column, role) pair of a mapping, in the order roles are checked."""
    pairs = [(mapping.label, "the label")]
    pairs += [(c, "a probability column") for c in mapping.probs]
    pairs += [(c, "an audit feature") for c in mapping.features]
    pairs += [(mapping.split, "the split column")] if mapping.split else []
    pairs += [(mapping.time, "the time column")] if mapping.time else []
    pairs += [(c, "an ensemble member column") for m in mapping.members for c in m]
    pairs += [(c, f"a probability column of model '{name}'") for name, cols in mapping.models
              for c in cols]
    pairs += [(c, "a group attribute") for c in mapping.groups]
    return pairs


def check_unambiguous(mapping: ColumnMapping, ambiguous: dict[str, tuple[str, ...]]) -> None:
    """Refuse a role mapped to a name that several differing columns share."""
    for column, role in _mapped_columns(mapping):
        if str(column) in ambiguous:
            kept = ambiguous[str(column)]
            raise DataError(
                f"The table has more than one column named '{column}', with different values, "
                f"and '{column}' is mapped as {role}. Map one of {quote_list(kept)} instead, "
                "or rename the duplicates so every column name is unique, then load the table "
                "again."
            )


def check_roles_distinct(mapping: ColumnMapping) -> None:
    """A column plays one role: the label cannot also be a feature, and so on."""
    roles: dict[str, str] = {}
    assignments = [(c, r) for c, r in _mapped_columns(mapping) if r != "a group attribute"]
    for column, role in assignments:
        if column in roles:
            raise DataError(
                f"Column '{column}' is mapped both as {roles[column]} and as {role}; each "
                "column can play one role only (group attributes may repeat a feature)."
            )
        roles[column] = role
    names = mapping.model_names
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise DataError(
            f"Two prediction sets are both named {quote_list(repeated)}; give each model its "
            "own name."
        )
    if len(set(mapping.groups)) != len(mapping.groups):
        raise DataError("A group attribute is listed twice; list each group column once.")
    for column in mapping.groups:
        model_columns = [c for _, cols in mapping.models for c in cols]
        if column in (mapping.label, *mapping.probs, *model_columns):
            raise DataError(
                f"Column '{column}' is the label or a probability and cannot be a group attribute."
            )

