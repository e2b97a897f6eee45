oom_observers = []


def _cuda_attach_out_of_memory_observer(callback):
    oom_observers.append(callback)
