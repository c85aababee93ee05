"""Exact models (Pyomo + HiGHS, OR-Tools CP-SAT) of the five papers' programs."""
