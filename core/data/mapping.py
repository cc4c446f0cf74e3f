"""Which column plays which role: :class:`ColumnMapping` (label, probability or logit
columns, audit features, group attributes, split, ensemble members) and the checks that a
mapping is complete, unambiguous and uses each column in one role only.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from core.data.problems import DataError, quote_list


@dataclass(frozen=True)
class ColumnMapping:
    """Which column of a table plays which role; the keyword arguments of ``from_frame``.

    ``probs`` with one column means a binary problem and holds P(y = positive); with m
    columns it holds one probability (or logit) per class, in class order.
    ``members`` lists ensemble members, each as one column (binary) or m columns.
    """

    label: str
    probs: tuple[str, ...]
    logits: bool = False
    positive: str | None = None
    features: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()
    split: str | None = None
    members: tuple[tuple[str, ...], ...] = ()

    def as_kwargs(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def _mapped_columns(mapping: ColumnMapping) -> list[tuple[str, str]]:
    """Every (column, role) pair of a mapping, in the order roles are checked."""
    pairs = [(mapping.label, "the label")]
    pairs += [(c, "a probability column") for c in mapping.probs]
    pairs += [(c, "an audit feature") for c in mapping.features]
    pairs += [(mapping.split, "the split column")] if mapping.split else []
    pairs += [(c, "an ensemble member column") for m in mapping.members for c in m]
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
    if len(set(mapping.groups)) != len(mapping.groups):
        raise DataError("A group attribute is listed twice; list each group column once.")
    for column in mapping.groups:
        if column in (mapping.label, *mapping.probs):
            raise DataError(
                f"Column '{column}' is the label or a probability and cannot be a group attribute."
            )

