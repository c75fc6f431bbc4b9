"""Independent audit of kernel files and of other implementations' kernels."""
