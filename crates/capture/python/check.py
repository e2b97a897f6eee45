"""memograph-capture's preflight: one line on stdout, exit 3 when recording cannot work."""
import sys

try:
    import torch
except Exception as e:
    print(f"torch is not importable by {sys.executable} ({type(e).__name__}: {e})")
    sys.exit(3)
if not getattr(torch.version, "cuda", None):
    print(f"torch {torch.__version__} was built without CUDA (a CPU-only build)")
    sys.exit(3)
if torch.cuda.device_count() == 0:
    print("no CUDA GPU is visible (torch.cuda.device_count() is 0: check the driver and CUDA_VISIBLE_DEVICES)")
    sys.exit(3)
print(f"torch {torch.__version__}, CUDA {torch.version.cuda}, {torch.cuda.get_device_name(0)}")
