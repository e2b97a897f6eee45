# As in torch: the global step hooks are a module-level function of torch.optim.optimizer, not a method.
_global_optimizer_post_hooks = []


class Optimizer:
    pass


def register_optimizer_step_post_hook(hook):
    _global_optimizer_post_hooks.append(hook)
