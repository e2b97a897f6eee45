from .optimizer import Optimizer  # noqa: F401

# As torch 2.11's torch/optim/__init__.py does: the submodule is imported, but its name is deleted from the
# package (`torch.optim.optimizer` is an AttributeError; sys.modules still holds it).
del optimizer  # noqa: F821
