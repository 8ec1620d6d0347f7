"""The lab: a verify run after the lock, its scenarios (baseline, mutants), judged."""
