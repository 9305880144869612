"""The exported program: `torch.export` of a case, and the analysis of its dtype paths."""
