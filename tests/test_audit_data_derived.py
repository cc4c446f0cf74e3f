"""AuditData.with_probs: a derived dataset (new probabilities of the same rows) with its own
fingerprint, its probabilities checked like a table's."""

from __future__ import annotations

import numpy as np
import pytest

from core.data.audit_data import AuditData
from core.data.problems import DataError
from tests.test_data import binary_frame, multiclass_frame


def binary_audit() -> AuditData:
    return AuditData.from_frame(binary_frame(), label="y", prob="p", features=["age", "race"],
                                groups=["race"], split="split")


def test_a_derivation_has_its_own_fingerprint_and_keeps_the_rows() -> None:
    audit = binary_audit()
    sharper = np.clip(audit.probs[:, 1] * 1.2, 0.0, 1.0)
    derived = audit.with_probs(np.column_stack([1 - sharper, sharper]), name="recalibrated")
    np.testing.assert_array_equal(derived.probs[:, 1], sharper)
    np.testing.assert_array_equal(derived.y, audit.y)
    np.testing.assert_array_equal(derived.X, audit.X)
    np.testing.assert_array_equal(derived.split, audit.split)
    assert derived.groups.equals(audit.groups) and derived.name == "recalibrated"
    assert derived.model_probs[derived.model] is derived.probs
    assert derived.fingerprint != audit.fingerprint
    # another derivation differs; the same one repeated (binary (n,) form too) is the same
    flatter = 0.5 + 0.5 * (audit.probs[:, 1] - 0.5)
    other = audit.with_probs(np.column_stack([1 - flatter, flatter]))
    assert other.fingerprint not in (audit.fingerprint, derived.fingerprint)
    assert audit.with_probs(sharper).fingerprint == derived.fingerprint
    # derived from a derivation: a third fingerprint; same probabilities as the parent: not the
    # parent's (a derivation is named by its parent and its probabilities)
    assert derived.with_probs(audit.probs).fingerprint not in (
        audit.fingerprint, derived.fingerprint, other.fingerprint)
    assert audit.with_probs(audit.probs).fingerprint != audit.fingerprint


def test_members_of_a_derivation_enter_its_fingerprint() -> None:
    frame = binary_frame()
    frame["q"] = np.clip(frame["p"] + 0.05, 0, 1)
    frame["r"] = np.clip(frame["p"] - 0.05, 0, 1)
    audit = AuditData.from_frame(frame, label="y", prob="p", members=[["q"], ["r"]])
    assert audit.members is not None and audit.members.shape == (audit.n, 2, 2)
    mean = audit.members.mean(axis=1)
    plain = audit.with_probs(mean)
    with_members = audit.with_probs(mean, members=audit.members[:, ::-1],
                                    member_names=("r", "q"))
    assert with_members.member_names == ("r", "q")
    assert with_members.fingerprint != plain.fingerprint
    with pytest.raises(DataError, match=r"probabilities of new member 1 must have shape"):
        audit.with_probs(mean, members=audit.members[:5])


@pytest.mark.parametrize("change, sentence", [
    (lambda p: p[:10], r"The new probabilities must have shape \(60, 2\) — one row per row of "
                       r"the data, one column per class, or \(60,\) P\(y = positive\) — but have "
                       r"shape \(10, 2\)\."),
    (lambda p: np.where(np.arange(60)[:, None] == 3, np.nan, p),
     r"The new probabilities must be finite, but 1 row \(row 4\) hold NaN or infinite values\."),
    (lambda p: p * 1.5, r"The new probabilities must lie between 0 and 1, but \d+ rows \(rows "),
    (lambda p: np.column_stack([p[:, 0], p[:, 1] + np.where(np.arange(60) == 7, 0.2, 0.0)]),
     r"The new probabilities must sum to 1 in every row, but 1 row \(row 8\) differ from 1 by "
     r"more than 0.001 \(row 8 sums to 1\.2\)\."),
])
def test_bad_probabilities_give_the_sentence(change, sentence) -> None:
    audit = binary_audit()
    with pytest.raises(DataError, match=sentence):
        audit.with_probs(change(audit.probs.copy()))


def test_multiclass_shape_and_strings() -> None:
    audit = AuditData.from_frame(multiclass_frame(), label="label",
                                 probs=["p_cat", "p_dog", "p_bird"])
    with pytest.raises(DataError, match=r"must have shape \(60, 3\) — one row per row of the "
                                        r"data, one column per class — but have shape \(60,\)"):
        audit.with_probs(audit.probs[:, 0])
    with pytest.raises(DataError, match="must be numbers"):
        audit.with_probs([["a", "b", "c"]] * 60)
    assert audit.with_probs(audit.probs[:, ::-1]).n_classes == 3
