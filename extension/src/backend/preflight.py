# The backend's preflight: run with `python -c <this text>` under the candidate interpreter, with
# the server's PYTHONPATH (bundled libraries, then pybackend), before the language client starts.
# It prints one JSON line: the version, the executable, and whether the modules that
# `python -m torchdoctor.server` imports (torchdoctor/server/__main__.py) import here.
#
# The one copy of this script: esbuild inlines it into the extension as text
# (extension/src/backend/preflightCheck.ts), and tests/python/unit/test_bundled_requirements.py
# runs this file against the bundle on every supported Python. Written to parse on old Pythons
# too (no f-strings), so a Python 3.5 is told its version instead of failing with a SyntaxError.
import json
import sys

# What torchdoctor/server/__main__.py imports beyond the standard library (the test checks it).
SERVER_MODULES = ("torchdoctor.server.log_bridge", "torchdoctor.server.app", "torchdoctor.background")

r = {"version": list(sys.version_info[:3]), "executable": sys.executable}
try:
    for name in SERVER_MODULES:
        __import__(name)
    r["libs"] = "ok"
except Exception as e:
    r["libs"] = "%s: %s" % (type(e).__name__, e)
    if isinstance(e, ImportError) and getattr(e, "name", None):
        # The module that is missing, and the module whose import statement asked for it.
        r["missing"] = e.name
        tb = e.__traceback__
        while tb is not None and tb.tb_next is not None:
            tb = tb.tb_next
        if tb is not None:
            r["neededBy"] = tb.tb_frame.f_globals.get("__name__")
print(json.dumps(r))
