"""LLM backends behind one small interface: k samples, stop at end of line, token log-probs."""
