"""The decision a comparison supports: promote the challenger, do not, or inconclusive.

The rule (:data:`DECISION_RULE`), on the tests :func:`core.compare.comparison.compare_models`
already ran at level α:

* **do not promote** — the challenger is significantly worse on a criterion (difference
  B − A > 0 with p ≤ α) or in a group or slice (max-|T| adjusted p ≤ α, family-wise error
  ≈ α over every slice);
* **promote** — otherwise, when it is significantly better on at least one criterion;
* **inconclusive** — otherwise: no criterion shows a difference either way.

Each decision carries its reasons, one short sentence each, in the order a reader checks them.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.compare.comparison import CRITERION_NAMES, ComparisonResult

PROMOTE, DO_NOT_PROMOTE, INCONCLUSIVE = "promote", "do not promote", "inconclusive"
#: The rule in one line.
DECISION_RULE = (
    "Do not promote when the challenger is significantly worse on any criterion or in any "
    "group or slice (adjusted); promote when it is significantly better on at least one "
    "criterion and worse nowhere; otherwise inconclusive.")
#: Worse slices named in the reasons (the rest are counted).
NAMED_SLICES = 3


@dataclass(frozen=True)
class Decision:
    """The headline of a comparison.

    Attributes
    ----------
    decision : str
        ``"promote"``, ``"do not promote"`` or ``"inconclusive"``.
    headline : str
        One line: the decision and its main reason ("Do not promote: better on average,
        worse for race = Asian").
    reasons : tuple of str
        One sentence per reason (established differences, worse slices, what is not shown).
    rule : str
        :data:`DECISION_RULE`.
    """

    decision: str
    headline: str
    reasons: tuple[str, ...]
    rule: str = DECISION_RULE


def _difference(row, alpha: float) -> str:
    return (f"{row.name}: B − A = {row.difference:+.3g} ({1 - alpha:.0%} CI "
            f"{row.ci_low:+.3g} to {row.ci_high:+.3g}, p = {row.p_value:.3g})")


def decide(result: ComparisonResult) -> Decision:
    """The decision of :data:`DECISION_RULE` for one comparison, with its reasons.

    Parameters
    ----------
    result : ComparisonResult
        A comparison from :func:`core.compare.compare_models` or
        :func:`core.compare.compare_audit`.

    Returns
    -------
    Decision
        The decision, a one-line headline and the reasons as sentences.
    """
    alpha = result.alpha
    significant = result.table[result.table["p_value"] <= alpha]
    better = significant[significant["difference"] < 0]
    worse = significant[significant["difference"] > 0]
    slices = result.worse_slices().drop_duplicates("slice")
    reasons = []
    reasons += [f"Better on {_difference(row, alpha)}." for row in better.itertuples()]
    reasons += [f"Worse on {_difference(row, alpha)}." for row in worse.itertuples()]
    for row in slices.head(NAMED_SLICES).itertuples():
        reasons.append(f"Worse in {row.slice} ({row.rows:,} rows): "
                       f"{CRITERION_NAMES[row.criterion]} {row.difference:+.3g}, "
                       f"adjusted p = {row.p_adjusted:.3g}.")
    if len(slices) > NAMED_SLICES:
        reasons.append(f"Worse in {len(slices) - NAMED_SLICES} more group(s) or slice(s) "
                       "(the table below).")
    open_ = result.table[result.table["p_value"] > alpha]
    if len(open_):
        reasons.append("No difference shown on " + ", ".join(open_["name"])
                       + f" (p > {alpha:g}; not shown is not shown equal).")
    where = [f"worse on {', '.join(worse['name'])}"] if len(worse) else []
    if len(slices):
        named = ", ".join(slices["slice"].head(2))
        where.append(f"worse for {named}" + (" and more" if len(slices) > 2 else ""))
    if where:
        average = "better on average, " if len(better) else ""
        return Decision(DO_NOT_PROMOTE, f"Do not promote: {average}{'; '.join(where)}",
                        tuple(reasons))
    if len(better):
        return Decision(PROMOTE, f"Promote: better on {', '.join(better['name'])}, worse "
                                 "nowhere tested", tuple(reasons))
    return Decision(INCONCLUSIVE, "Inconclusive: no criterion shows a difference at "
                                  f"α = {alpha:g}", tuple(reasons))
