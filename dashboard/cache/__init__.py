"""What the pages compute, cached: one module a family of ``core``.

* :mod:`dashboard.cache.diagnostics` — the audit of one model (Reliability, Trust test,
  Local bias, LCE landscape, Export), with ``st.cache_data`` keyed on the data fingerprint;
* :mod:`dashboard.cache.recalibration`, :mod:`dashboard.cache.ensembles`,
  :mod:`dashboard.cache.estimators` — the families whose results hold objects Streamlit
  cannot hash, memoised per process;
* :mod:`dashboard.cache.monitor` — monitoring over time (the Over time page), memoised
  per process;
* :mod:`dashboard.cache.memo` — that per-process memo (:class:`ProcessMemo`).
"""
