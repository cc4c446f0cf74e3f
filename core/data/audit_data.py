"""The validated audit container: labels, predicted probabilities, audit features, groups.

Every computation in ``core`` takes an :class:`AuditData`. It is built once, at the boundary,
from a user's table plus a :class:`ColumnMapping`, by :meth:`AuditData.from_frame`; all checks
happen there, and every problem raises :class:`DataError` with a sentence that names the
column, the number of rows affected (with the first few row numbers, counting the first data
row as 1) and the fix. Small, harmless repairs (probability overshoots of at most 1e-6,
rows summing to 1 within 1e-3) are made and reported in :attr:`AuditData.report`, never
silently. The caller's DataFrame is never modified.

Conventions (DESIGN.md): ``probs`` is ``(n, m)`` with rows on the simplex, ``y`` holds integer
labels ``0..m-1`` indexing the columns of ``probs``; a binary problem has ``m = 2`` and its
positive class is column 1.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from core.data.features import SPLITS, encode_features, group_attributes, split_values
from core.data.mapping import ColumnMapping, check_roles_distinct, check_unambiguous
from core.data.predictions import (
    binary_labels,
    given_probabilities,
    label_strings,
    member_matrix,
    model_matrix,
    multiclass_labels,
    probability_columns,
)
from core.data.problems import DataError, ValidationNote, describe_rows, quote_list
from core.data.table import deduplicate_columns, require_column
from core.data.time_column import TimeValues, parse_times

#: Fewest rows any calibration statistic is computed on.
MIN_ROWS = 20


# --------------------------------------------------------------------------- the container


@dataclass(frozen=True, eq=False)
class AuditData:
    """Validated audit data: what every computation in ``core`` takes.

    Attributes
    ----------
    y
        ``(n,)`` integer labels ``0..m-1``.
    probs
        ``(n, m)`` predicted class probabilities, rows summing to 1.
    classes
        the m class names, in column order (binary: ``(negative, positive)``).
    X
        ``(n, d)`` numeric audit features (categoricals one-hot encoded), unstandardised.
    feature_names
        the d encoded feature names (``race=Black`` for one-hot columns).
    feature_frame
        the audit features as given (categoricals as strings), for display.
    groups
        group attributes as strings, one column each (may have no columns).
    split
        ``(n,)`` of ``"train" | "calibration" | "test"``, or ``None``.
    members
        ``(n, K, m)`` ensemble members' probabilities, or ``None``.
    report
        what validation found and repaired.
    model
        the name of the prediction set in ``probs`` (the audited model).
    model_probs
        every prediction set of the table by name, ``(n, m)`` each, the audited
        one included; :meth:`with_model` audits another.
    times
        the validated time column (:class:`~core.data.time_column.TimeValues`) of
        monitoring over time, or ``None``.
    """

    y: np.ndarray
    probs: np.ndarray
    classes: tuple[str, ...]
    X: np.ndarray
    feature_names: tuple[str, ...]
    feature_frame: pd.DataFrame
    groups: pd.DataFrame
    split: np.ndarray | None = None
    members: np.ndarray | None = None
    member_names: tuple[str, ...] = ()
    report: tuple[ValidationNote, ...] = ()
    mapping: ColumnMapping | None = None
    name: str = "uploaded data"
    description: str = ""
    fingerprint: str = field(default="", repr=False)
    model: str = "model"
    model_probs: dict[str, np.ndarray] = field(default_factory=dict, repr=False)
    times: TimeValues | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.model_probs.get(self.model) is not self.probs:
            # the audited model's entry is always ``probs`` (a container whose probabilities
            # were replaced, e.g. recalibrated, audits and compares the replacement)
            object.__setattr__(self, "model_probs", {**self.model_probs, self.model: self.probs})
        if not self.fingerprint:
            object.__setattr__(self, "fingerprint", self._compute_fingerprint())

    # ---------------------------------------------------------------- construction

    @classmethod
    def from_frame(
        cls,
        df: pd.DataFrame,
        *,
        label: str,
        prob: str | None = None,
        probs: Sequence[str] | None = None,
        logits: bool = False,
        positive: str | None = None,
        features: Sequence[str] = (),
        groups: Sequence[str] = (),
        split: str | None = None,
        members: Sequence[Sequence[str]] | Sequence[str] = (),
        models: Mapping[str, Sequence[str] | str] | None = None,
        model: str = "",
        name: str = "uploaded data",
        description: str = "",
        time: str | None = None,
    ) -> AuditData:
        """Validate a table and build the audit container; raises :class:`DataError`.

        Give the probabilities either as ``prob="p"`` (binary, P(y = positive)) or as
        ``probs=[...]`` (one column for binary, m columns for m classes). With
        ``logits=True`` the columns are mapped through the sigmoid or softmax first.
        ``models`` names further prediction sets of other models on the same rows
        (``{"p_new": "p_new"}`` or ``{"new": ["new_cat", "new_dog"]}``), validated like
        ``probs``; ``model`` names the one in ``probs``.
        """
        if not isinstance(df, pd.DataFrame):
            raise DataError("Expected a table (pandas DataFrame).")
        if (prob is None) == (probs is None or len(probs) == 0):
            raise DataError("Give the probability columns either as 'prob' or as 'probs'.")
        prob_columns = (prob,) if prob is not None else tuple(probs)
        members = tuple((m,) if isinstance(m, str) else tuple(m) for m in members)
        mapping = ColumnMapping(
            label=label, probs=prob_columns, logits=logits, positive=positive,
            features=tuple(features), groups=tuple(groups), split=split, members=members,
            models=tuple((str(k), (v,) if isinstance(v, str) else tuple(v))
                         for k, v in (models or {}).items()),
            model=model, time=time,
        )
        return cls.from_mapping(df, mapping, name=name, description=description)

    @classmethod
    def from_mapping(
        cls, df: pd.DataFrame, mapping: ColumnMapping, name: str = "uploaded data",
        description: str = "",
    ) -> AuditData:
        """Like :meth:`from_frame`, with the columns given as a :class:`ColumnMapping`."""
        deduplicated = deduplicate_columns(df)
        check_unambiguous(mapping, deduplicated.ambiguous)
        df = deduplicated.frame
        if len(df) == 0:
            raise DataError("The table has no rows. Load a file with data below the header line.")
        check_roles_distinct(mapping)
        notes: list[ValidationNote] = [ValidationNote("info", n) for n in deduplicated.notes]

        label_series = require_column(df, mapping.label, "label")
        missing = label_series.isna().to_numpy()
        if missing.any():
            raise DataError(
                f"Label column '{mapping.label}' is empty in {describe_rows(missing)}. Remove "
                "those rows or fill in their labels, then load the table again."
            )
        if len(df) < MIN_ROWS:
            raise DataError(
                f"The table has only {len(df)} rows; at least {MIN_ROWS} are needed to assess "
                "calibration. Load more data."
            )
        probs = probability_columns(df, mapping.probs, mapping.logits, "probability", notes)
        others = {name: model_matrix(df, name, columns, mapping.logits, probs.shape[1], notes)
                  for name, columns in mapping.models}
        labels = label_strings(label_series)
        if len(mapping.probs) == 1:
            y, classes = binary_labels(labels, mapping.label, mapping.probs[0], mapping.positive)
        else:
            y, classes = multiclass_labels(labels, mapping.label, mapping.probs)
            if mapping.positive is not None and len(classes) == 2:
                if str(mapping.positive) == classes[0]:
                    y, classes, probs = 1 - y, classes[::-1], probs[:, ::-1]
                    others = {k: v[:, ::-1] for k, v in others.items()}
                elif str(mapping.positive) != classes[1]:
                    raise DataError(
                        f"The positive class '{mapping.positive}' is not one of the classes "
                        f"{quote_list(classes)}."
                    )
            if np.unique(y).size < 2:
                raise DataError(
                    f"Label column '{mapping.label}' holds only one class ('{classes[y[0]]}') in "
                    f"all {len(y):,} rows. Calibration cannot be assessed from a single class; "
                    "load data that contains several classes."
                )
            absent = [c for i, c in enumerate(classes) if not np.any(y == i)]
            if absent:
                notes.append(ValidationNote(
                    "info", f"No row has the label {quote_list(absent)}; those classes have "
                    "predicted probabilities but no observations.",
                ))

        feature_frame, encoded = encode_features(df, mapping.features, notes)
        group_frame = group_attributes(df, mapping.groups, notes)
        split = split_values(df, mapping.split) if mapping.split else None
        times = parse_times(require_column(df, mapping.time, "time"), mapping.time) \
            if mapping.time else None
        member_probs = None
        if mapping.members:
            member_probs = np.stack([
                member_matrix(df, cols, mapping.logits, probs.shape[1], notes)
                for cols in mapping.members
            ], axis=1)
        names = mapping.model_names
        model_probs = {names[0]: probs, **others}
        return cls(
            y=y, probs=probs, classes=tuple(classes), X=encoded.to_numpy(dtype=float),
            feature_names=tuple(encoded.columns), feature_frame=feature_frame,
            groups=group_frame, split=split, members=member_probs,
            member_names=tuple(", ".join(m) for m in mapping.members), report=tuple(notes),
            mapping=mapping, name=name, description=description, model=names[0],
            model_probs=model_probs, times=times,
        )

    # ---------------------------------------------------------------- views

    @property
    def n(self) -> int:
        return int(self.y.shape[0])

    @property
    def n_classes(self) -> int:
        return int(self.probs.shape[1])

    @property
    def is_binary(self) -> bool:
        return self.n_classes == 2

    @property
    def model_names(self) -> tuple[str, ...]:
        """The names of the table's prediction sets, in mapping order."""
        return tuple(self.model_probs)

    def with_model(self, name: str) -> AuditData:
        """The same rows with the prediction set ``name`` audited (its own fingerprint)."""
        if name not in self.model_probs:
            raise ValueError(f"Unknown model '{name}'; this table has "
                             f"{quote_list(list(self.model_probs))}.")
        if name == self.model:
            return self
        return replace(self, probs=self.model_probs[name], model=name, fingerprint="")

    def with_probs(self, probs, *, name: str | None = None, members=None,
                   member_names: Sequence[str] | None = None) -> AuditData:
        """A derived dataset: the same labels, features, groups and split with new
        probabilities (a recalibrated model, an ensemble's mean), with its own fingerprint.

        Parameters
        ----------
        probs : array_like
            ``(n, m)`` class probabilities of the same rows, in class order (binary: also
            ``(n,)`` P(y = positive)); checked like a table's probability columns.
        name : str, optional
            The derived dataset's name (default: this one's).
        members : array_like, optional
            ``(n, K, m)`` ensemble members' probabilities replacing this one's, each member
            checked like ``probs``; with ``member_names`` (K names).
        member_names : sequence of str, optional
            The members' names (default: this one's).

        Returns
        -------
        AuditData
            Its ``fingerprint`` is a hash of this one's and of the new probabilities (and
            members): two derivations differ, the same derivation repeated is the same.

        Raises
        ------
        DataError
            Probabilities (or members) of the wrong shape, NaN or infinite, outside [0, 1] or
            with rows not summing to 1, in a sentence naming the rows.
        """
        probs = given_probabilities(probs, self.n, self.n_classes, "new probabilities")
        digest = hashlib.sha1(self.fingerprint.encode())
        digest.update(probs.tobytes())
        changes = {}
        if members is not None:
            given = np.asarray(members, dtype=np.float64)
            if given.ndim != 3:
                raise DataError(f"The new ensemble members must have shape (n, K, m) = "
                                f"({self.n}, K, {self.n_classes}); got shape {given.shape}.")
            members = np.stack([given_probabilities(given[:, k], self.n, self.n_classes,
                                                    f"probabilities of new member {k + 1}")
                                for k in range(given.shape[1])], axis=1)
            names = tuple(member_names) if member_names is not None else self.member_names
            if len(names) != members.shape[1]:
                raise DataError(f"{members.shape[1]} new ensemble members need as many names; "
                                f"got {len(names)}.")
            digest.update(members.tobytes())
            digest.update(repr(names).encode())
            changes = {"members": members, "member_names": names}
        elif member_names is not None:
            raise ValueError("member_names renames new members; pass them with members.")
        return replace(self, probs=probs, name=self.name if name is None else name,
                       fingerprint=digest.hexdigest()[:16], **changes)

    @property
    def positive_probs(self) -> np.ndarray:
        """P(y = positive class), the binary convention ``probs`` of shape ``(n,)``."""
        if not self.is_binary:
            raise ValueError("positive_probs is defined for binary problems only.")
        return self.probs[:, 1]

    def subset(self, rows: np.ndarray) -> AuditData:
        """The rows selected by a boolean mask or an index array, as a new container."""
        rows = np.asarray(rows)
        if rows.dtype == bool:
            rows = np.flatnonzero(rows)
        return replace(
            self,
            y=self.y[rows], probs=self.probs[rows], X=self.X[rows],
            feature_frame=self.feature_frame.iloc[rows].reset_index(drop=True),
            groups=self.groups.iloc[rows].reset_index(drop=True),
            split=None if self.split is None else self.split[rows],
            times=None if self.times is None else self.times.take(rows),
            members=None if self.members is None else self.members[rows],
            model_probs={k: v[rows] for k, v in self.model_probs.items()},
            fingerprint="",
        )

    def split_part(self, part: str) -> AuditData:
        """The rows of one split (``"calibration"`` or ``"test"``); all rows if no split."""
        if self.split is None:
            return self
        if part not in SPLITS:
            raise ValueError(f"Unknown split {part!r}; use one of {SPLITS}.")
        return self.subset(self.split == part)

    def encoded_names(self, names: Sequence[str]) -> list[str]:
        """The encoded columns of the named audit features (every one-hot column ``name=level``
        of a categorical feature), in ``feature_names`` order."""
        wanted = set(names)
        return [encoded for encoded in self.feature_names
                if encoded in wanted or encoded.split("=", 1)[0] in wanted]

    def feature_matrix(self, names: Sequence[str]) -> np.ndarray:
        """The :meth:`encoded_names` columns of ``X``; ``(n, 0)`` for no names."""
        chosen = set(self.encoded_names(names))
        return self.X[:, [i for i, name in enumerate(self.feature_names) if name in chosen]]

    def class_balance(self) -> pd.DataFrame:
        """Count and share of each class among the labels, with its mean predicted probability."""
        counts = np.bincount(self.y, minlength=self.n_classes)
        return pd.DataFrame({
            "class": list(self.classes),
            "count": counts,
            "share": counts / self.n,
            "mean predicted probability": self.probs.mean(axis=0),
        })

    def to_frame(self) -> pd.DataFrame:
        """One row per observation: label (class name), class probabilities, features, groups."""
        frame = pd.DataFrame({"label": np.asarray(self.classes, dtype=object)[self.y]})
        for j, name in enumerate(self.classes):
            frame[f"p_{name}"] = self.probs[:, j]
        frame = pd.concat([frame, self.feature_frame.add_prefix("feature: ")], axis=1)
        frame = pd.concat([frame, self.groups.add_prefix("group: ")], axis=1)
        if self.split is not None:
            frame["split"] = self.split
        return frame

    def _compute_fingerprint(self) -> str:
        digest = hashlib.sha1()
        for array in (self.y, self.probs, self.X):
            digest.update(np.ascontiguousarray(array).tobytes())
        if self.members is not None:
            digest.update(np.ascontiguousarray(self.members).tobytes())
        if len(self.model_probs) > 1:  # the other prediction sets, by name
            for name, values in self.model_probs.items():
                digest.update(name.encode())
                digest.update(np.ascontiguousarray(values).tobytes())
        if self.split is not None:
            digest.update("|".join(self.split).encode())
        if self.times is not None:  # the same rows with another time column monitor otherwise
            digest.update(self.times.column.encode())
            digest.update(np.ascontiguousarray(self.times.sort_key).tobytes())
        digest.update(pd.util.hash_pandas_object(self.groups, index=False).to_numpy().tobytes())
        digest.update(repr((self.classes, self.feature_names)).encode())
        return digest.hexdigest()[:16]

