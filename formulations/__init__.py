"""Exact models (Pyomo + HiGHS, OR-Tools CP-SAT) of the five papers' programs."""

#: Each family's exact methods by name, known without importing Pyomo or OR-Tools (``edgeopt algorithms``
#: lists them at start-up speed); tests/test_cli_startup.py checks it against every family's ``METHODS``.
METHOD_NAMES: dict[str, tuple[str, ...]] = {
    "edgecloud": ("milp", "cpsat"),
    "hetero": ("milp", "cpsat"),
    "tapfinger": ("milp", "cpsat"),
    "preemptive": ("milp", "cpsat"),
    "okita": ("milp", "cpsat"),
}
