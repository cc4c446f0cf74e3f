"""Calibration Atlas: the numeric library behind the dashboard.

Everything here is pure computation (numpy, scipy, pandas, scikit-learn); no module under
``core`` imports Streamlit. The one validated input container is
:class:`core.data.audit_data.AuditData`.
"""

__version__ = "0.1.0"
