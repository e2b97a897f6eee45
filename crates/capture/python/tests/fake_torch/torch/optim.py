class Optimizer:
    hooks = []

    @classmethod
    def register_optimizer_step_post_hook(cls, hook):
        cls.hooks.append(hook)
