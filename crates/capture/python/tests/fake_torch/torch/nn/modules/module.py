hooks = []


class _Handle:
    def __init__(self, hook):
        self.hook = hook

    def remove(self):
        hooks.remove(self.hook)


def register_module_forward_pre_hook(hook):
    hooks.append(hook)
    return _Handle(hook)
