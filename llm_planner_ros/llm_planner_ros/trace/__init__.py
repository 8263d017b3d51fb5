"""Per-goal traces: every prompt, sample, log-prob, score, skill, error and timing, appended to
a JSONL file line by line (fsync'd), so a crash of the node loses nothing already written."""
