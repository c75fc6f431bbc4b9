"""Files: exact numbers (``numbers``), kernel files (``kernel_file``, where the
``s4cert.kernel/1`` format is documented), parameter files (``params``) and atomic
writes (``atomic``)."""
from .kernel_file import KernelFile, load_kernel, save_kernel
from .params import Params, load_params

__all__ = ["KernelFile", "Params", "load_kernel", "load_params", "save_kernel"]
