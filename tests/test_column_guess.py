"""Column-role guesses that pre-fill the mapping form."""

from __future__ import annotations

import numpy as np
import pandas as pd

from core.data.column_guess import group_member_columns, guess_columns


def test_guesses_roles_from_names_and_contents() -> None:
    rng = np.random.default_rng(0)
    n = 100
    frame = pd.DataFrame({
        "person_id": [f"id{i}" for i in range(n)],
        "target": rng.integers(0, 2, n),
        "prob_1": rng.random(n),
        "age": rng.integers(18, 90, n),
        "race": rng.choice(list("ABCD"), n),
        "zip": [f"z{i}" for i in range(n)],
        "fold": rng.choice(["train", "test"], n),
        "member_1": rng.random(n),
    })
    guess = guess_columns(frame)
    assert guess.label == "target"
    assert guess.probs == ("prob_1",) and not guess.logits
    assert guess.split == "fold"
    assert guess.members == ("member_1",)
    assert guess.features == ("age", "race")  # ids and 100-level text are left out
    assert guess.groups == ("race",)


def test_logit_columns_are_recognised() -> None:
    frame = pd.DataFrame({"y": [0, 1] * 20, "logit_a": np.arange(40.0),
                          "logit_b": -np.arange(40.0)})
    guess = guess_columns(frame)
    assert guess.probs == ("logit_a", "logit_b") and guess.logits


def test_no_label_found() -> None:
    assert guess_columns(pd.DataFrame({"a": [1, 2, 3], "b": [3, 4, 5]})).label is None


def test_label_falls_back_to_the_last_two_valued_column() -> None:
    frame = pd.DataFrame({"sex": ["f", "m", "f"], "defaulted": [0, 1, 1], "p": [0.2, 0.5, 0.9]})
    assert guess_columns(frame).label == "defaulted"


def test_member_grouping() -> None:
    assert group_member_columns(["m1", "m2"], 2) == (("m1",), ("m2",))
    columns = ["m1_cat", "m1_dog", "m1_bird", "m2_cat", "m2_dog", "m2_bird"]
    assert group_member_columns(columns, 3) == (tuple(columns[:3]), tuple(columns[3:]))


def test_a_two_valued_split_column_is_not_the_label() -> None:
    """The reference model's own download (label, p_1, split with calibration/test) read
    back: the split column has two values but is no label."""
    frame = pd.DataFrame({"two_year_recid": [0, 1, 1, 0], "p_1": [0.2, 0.7, 0.6, 0.1],
                          "split": ["calibration", "test", "test", "calibration"],
                          "age": [20, 30, 40, 50]})
    guess = guess_columns(frame)
    assert guess.label == "two_year_recid" and guess.split == "split"
