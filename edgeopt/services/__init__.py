"""Services: what the API offers, built on the families and the formulations (lookup, instances, running, comparison, plots, variants)."""
