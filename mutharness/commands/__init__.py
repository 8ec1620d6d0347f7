"""The commands: one module each, from its parsed command line to its exit code."""
