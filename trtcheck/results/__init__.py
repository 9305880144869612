"""The results layer, without torch: rows, the record, baselines, merging and the run environment."""
