"""Targets: how compiled kernels run (cpu.py) and the host wrapper shared by all (wrapper.py)."""
