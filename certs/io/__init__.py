"""Files: exact numbers, kernel files, parameter files, atomic writes."""
