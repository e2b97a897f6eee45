"""Memograph's bootstrap, first on PYTHONPATH of every Python process that memograph-capture starts.

It installs the capture (which waits for the program to import torch) and then runs the sitecustomize the
user already had, if any, so nothing the user set up is lost.
"""
import os
import sys


def _chain_user_sitecustomize():
    here = os.path.dirname(os.path.abspath(__file__))
    saved_path = list(sys.path)
    ours = sys.modules.pop("sitecustomize", None)
    try:
        sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
        import importlib

        try:
            importlib.import_module("sitecustomize")
        except ModuleNotFoundError as e:
            if e.name != "sitecustomize":
                raise
    finally:
        sys.path[:] = saved_path
        # site.py looks its import up by this name afterwards: it must be ours again; the user's, if any,
        # stays importable under its own name.
        user = sys.modules.pop("sitecustomize", None)
        if user is not None:
            sys.modules["memograph_user_sitecustomize"] = user
        if ours is not None:
            sys.modules["sitecustomize"] = ours


try:
    import memograph_capture

    memograph_capture.install_from_env()
except Exception as e:  # never break the user's program
    print(f"memograph-capture: bootstrap disabled: {e}", file=sys.stderr)

_chain_user_sitecustomize()
