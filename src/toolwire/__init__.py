"""toolwire: the gate-and-bridge layer of an LLM proxy, the code under test for mutharness."""
