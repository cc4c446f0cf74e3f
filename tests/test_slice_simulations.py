"""The simulated audits of the slice studies: sizes, calibration, planted cells."""

from __future__ import annotations

import numpy as np
import pytest

from core.data.slice_simulations import SETTINGS, simulate_slices


@pytest.mark.parametrize("setting", list(SETTINGS))
def test_settings_draw_their_audits(setting: str) -> None:
    audit = simulate_slices(setting, np.random.default_rng(0), n=2000)
    assert audit.y.shape == (2000,) and len(audit.features) == 2000
    if setting in ("planted-2pct", "mixture"):
        assert audit.cells and audit.affected.any()
        shift = (audit.truth - audit.probs)[audit.cells[0]]
        assert np.all(shift > 0)  # the first planted cell is underestimated
    else:
        assert not audit.affected.any()
        np.testing.assert_array_equal(audit.truth, audit.probs)


def test_the_planted_cell_holds_two_percent_of_the_rows() -> None:
    """race D (8 %) in the top age quartile (25 %): 2 % of the rows, ± 4 binomial SE
    (SE = √(0.02·0.98/20,000) = 0.001)."""
    audit = simulate_slices("planted-2pct", np.random.default_rng(1))
    assert abs(audit.cells[0].mean() - 0.02) < 4 * 0.001
    with pytest.raises(ValueError, match="Unknown slice simulation 'other'"):
        simulate_slices("other", np.random.default_rng(0))
