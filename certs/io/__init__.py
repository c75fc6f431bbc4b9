"""Files: exact numbers (``numbers``), kernel files (``kernel_file``, where the JSON
``s4cert.kernel/1`` format is documented; ``kernel_npz``, the binary ``s4cert.kernel.npz/1``
format; ``kernel_disks``, the disks both hold; ``disk_bounds``, certified bounds on their
arrays), parameter files (``params``) and atomic writes (``atomic``)."""
from .kernel_file import KernelFile, load_kernel, save_kernel
from .params import Params, load_params

__all__ = ["KernelFile", "Params", "load_kernel", "load_params", "save_kernel"]
