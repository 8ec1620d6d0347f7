"""The lab: a verify run after the lock, its scenarios (collect, baseline, mutants), judged."""
