"""A test double of the few torch entry points memograph_capture uses (tests only)."""
__version__ = "0.0+fake"


import os as _os


class version:
    cuda = _os.environ.get("FAKE_TORCH_BUILD_CUDA", "12.4") or None


from . import _C, cuda, nn, optim  # noqa: E402,F401
