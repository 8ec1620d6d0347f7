"""The pytest runner: its rules (pure), the runner, and what it ships into a run."""
