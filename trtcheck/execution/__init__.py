"""Running cases: one case through every step, the whole run, and the worker processes."""
