# A namespace shared with debugpy's vendored pydevd (same pattern as its own __init__): pydevd
# walks every ``pydevd_plugins/extensions`` directory on sys.path, so ours is found through the
# debuggee's PYTHONPATH next to debugpy's built-in plugins.
import pkgutil

__path__ = pkgutil.extend_path(__path__, __name__)
