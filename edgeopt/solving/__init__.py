"""Solving services: exact solves, certified bounds, warm starts and LNS, and the certification of claims."""
