"""From words to goal conditions: rendered conditions, embedding translation, LLM interpretation."""
