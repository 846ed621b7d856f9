"""Helpers shared by the Python test layers, imported as ``support.<module>``.

``paths`` (where the repository, the backend and the samples are), ``anomaly`` and
``broken_cases`` (the anomaly watch tests and the broken samples they run), ``checks`` (model
files and examples for the checks), ``collect`` (a collector on a tiny model), ``stats_reference``
(float64 reference statistics), ``dap_client``/``dap_env`` (a DAP client and the debuggee's
environment), ``code_size`` (files and functions over the size limits, for test_code_size.py).
pytest.ini puts tests/python on sys.path (``pythonpath``) and imports test modules in importlib
mode, so test basenames may repeat across folders.
"""
