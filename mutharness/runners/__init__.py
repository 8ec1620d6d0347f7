"""The test runners: a pure registry of their rules, and each runner with what it ships."""
