"""The S4 kernel: DPLR data, bilinear step, C~, the filter and its float64 route."""
