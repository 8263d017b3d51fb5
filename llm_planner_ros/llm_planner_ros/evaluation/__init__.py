"""Evaluation: the papers metrics and EAI's own scorer, shared by tests and the benchmark."""
