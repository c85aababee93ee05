"""The `edgeopt` command, one module per command group; `edgeopt.cli` is the entry point that registers them."""
