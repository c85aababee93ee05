"""edgeopt: scheduling distributed ML training on edge-cloud networks and ML clusters."""
__version__ = "0.1.0"
