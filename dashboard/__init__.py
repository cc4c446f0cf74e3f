"""Calibration Atlas dashboard: a Streamlit multipage app on top of ``core``."""
