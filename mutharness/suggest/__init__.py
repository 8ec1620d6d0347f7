"""`mutharness suggest`: mutations on the lines a change touched, drafted as a spec."""
