"""Measurements of one case: latency, memory, the output comparison and dtype drift."""
