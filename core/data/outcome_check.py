"""Whether a trained reference model reads the outcome as a whole (issue 29): its test AUC
against a ceiling and against the same model without the columns the leakage screen flags,
and the drop-column importance that names the columns it reads.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from core.data.reference_estimators import fit_model, model_auc

#: A reference model whose test AUC reaches this reads the outcome more often than not: few
#: real prediction problems of the kind audited here allow it.
HIGH_AUC = 0.95
#: A test AUC this far above that of the same model without the flagged columns says the
#: flagged columns carry the outcome.
AUC_MARGIN = 0.05
#: Most model features whose drop-column importance is computed (refits of the model).
MAX_DROPPED = 5


@dataclass(frozen=True)
class ModelCheck:
    """Whether a trained reference model reads the outcome as a whole (issue 29).

    A single column can pass the leakage screen and a model still read the outcome from
    several together. After training, the model's AUC on the test rows is compared with
    :data:`HIGH_AUC` and with the AUC of the same model trained without the chosen columns
    the screen flags (the *baseline*); when it is high, or above the baseline by
    :data:`AUC_MARGIN`, the columns whose removal lowers the AUC on the calibration rows
    most (drop-column importance: the model refitted without each) are named.

    Attributes
    ----------
    test_auc : float
        AUC on the test rows (Hand & Till's M for several classes).
    baseline_auc : float or None
        The same for the model without the flagged chosen columns (``None`` when none was
        chosen, or nothing else was).
    flagged : tuple of str
        The chosen columns the leakage screen flags.
    importance : tuple of (str, float)
        Drop-column importance on the calibration rows, largest first (computed only when
        the check fires).
    warning : str or None
        The sentence for the Data page and the validation report, ``None`` when the check
        passes.
    """

    test_auc: float
    baseline_auc: float | None = None
    flagged: tuple[str, ...] = ()
    importance: tuple[tuple[str, float], ...] = ()
    warning: str | None = None


def check_model(model: str, inputs: pd.DataFrame, y: np.ndarray, split: np.ndarray,
                numeric: list[str], categorical: list[str], seed: int, probs: np.ndarray,
                flagged: tuple[str, ...], label: str,
                strength: dict[str, float] | None = None) -> ModelCheck:
    """The whole-model check of :class:`ModelCheck` for a model already fitted.

    Parameters
    ----------
    model : str
        A key of :data:`REFERENCE_MODELS`.
    inputs : pandas.DataFrame
        The model features of every row, as the estimator sees them.
    y : numpy.ndarray
        Integer labels of every row.
    split : numpy.ndarray
        ``train`` / ``calibration`` / ``test`` of every row.
    numeric, categorical : list of str
        The model features by kind.
    seed : int
        Seeds the refits as the model.
    probs : numpy.ndarray
        The fitted model's class probabilities on the rows outside ``train``, in order.
    flagged : tuple of str
        The chosen model features the leakage screen flags.
    label : str
        The label's name, for the sentence.
    strength : dict, optional
        Single-feature AUCs: after the flagged columns, the strongest are dropped first.

    Returns
    -------
    ModelCheck
    """
    train = split == "train"
    held = split[~train]
    test_auc = model_auc(y[~train][held == "test"], probs[held == "test"])
    flagged = tuple(c for c in numeric + categorical if c in flagged)
    honest = ([c for c in numeric if c not in flagged],
              [c for c in categorical if c not in flagged])
    baseline = None
    if flagged and (honest[0] or honest[1]):
        refit = fit_model(model, inputs, y, train, *honest, seed)
        test = split == "test"
        baseline = model_auc(y[test], refit.predict_proba(inputs.loc[test, honest[0] + honest[1]]))
    high = np.isfinite(test_auc) and test_auc >= HIGH_AUC
    gap = baseline is not None and np.isfinite(baseline) and test_auc - baseline >= AUC_MARGIN
    if not (high or gap):
        return ModelCheck(test_auc, baseline, flagged)
    importance = _drop_column_importance(model, inputs, y, split, numeric, categorical, seed,
                                         probs[held == "calibration"], flagged, strength or {})
    named = [(c, drop) for c, drop in importance[:3] if drop > 0]
    if gap:
        sentence = (f"The reference model reaches a test AUC of {test_auc:.3f}, against "
                    f"{baseline:.3f} for the same model without "
                    f"{', '.join(repr(c) for c in flagged)}, which the leakage screen flags: "
                    "those columns carry much of the outcome.")
    else:
        sentence = (f"The reference model reaches a test AUC of {test_auc:.3f} on '{label}': "
                    "higher than real prediction problems of this kind usually allow, which "
                    "often means the model features hold the outcome in another form.")
    if named:
        sentence += (f" Removing '{named[0][0]}' lowers the AUC on the calibration rows most "
                     f"(by {named[0][1]:.3f})" + "".join(f", then '{c}' (by {drop:.3f})"
                                                         for c, drop in named[1:]) + ".")
    sentence += (" Check that every model feature is known when the prediction is made: an "
                 "audit of a model that reads the outcome looks better than the truth.")
    return ModelCheck(test_auc, baseline, flagged, tuple(importance), sentence)


def _drop_column_importance(model: str, inputs: pd.DataFrame, y: np.ndarray,
                            split: np.ndarray, numeric: list[str], categorical: list[str],
                            seed: int, calibration_probs: np.ndarray,
                            flagged: tuple[str, ...],
                            strength: dict[str, float]) -> list[tuple[str, float]]:
    """AUC on the calibration rows of the fitted model minus that of the model refitted
    without each column, largest first; at most :data:`MAX_DROPPED` columns (the flagged
    ones, then the others by their single-feature AUC), none when only one column is used."""
    columns = numeric + categorical
    if len(columns) < 2:
        return []
    calibration = split == "calibration"
    full = model_auc(y[calibration], calibration_probs)
    others = sorted((c for c in columns if c not in flagged),
                    key=lambda c: -np.nan_to_num(strength.get(c, 0.5), nan=0.5))
    candidates = [*flagged, *others][:MAX_DROPPED]
    drops = []
    for column in candidates:
        kept = ([c for c in numeric if c != column], [c for c in categorical if c != column])
        refit = fit_model(model, inputs, y, split == "train", *kept, seed)
        without = model_auc(y[calibration],
                       refit.predict_proba(inputs.loc[calibration, kept[0] + kept[1]]))
        drops.append((column, float(full - without)))
    return sorted(drops, key=lambda item: -item[1])
