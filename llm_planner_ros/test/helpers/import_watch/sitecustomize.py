"""Loaded by every Python process started with this folder first on PYTHONPATH: each import of a
module under one of the prefixes in IMPORT_WATCH (comma-separated) is appended, as it happens, to
the file IMPORT_WATCH_FILE, so that a test can tell what a node it started ever imported."""
import os
import sys

_FILE = os.environ.get("IMPORT_WATCH_FILE", "")
_PREFIXES = tuple(p for p in os.environ.get("IMPORT_WATCH", "").split(",") if p)


class _Watch:
    def find_spec(self, name, path=None, target=None):
        if _FILE and name.startswith(_PREFIXES):
            with open(_FILE, "a") as f:
                f.write(f"{os.getpid()} {sys.argv[0]} {name}\n")
        return None   # the import goes on as usual


if _FILE and _PREFIXES:
    sys.meta_path.insert(0, _Watch())
