"""Translation of free-form steps into admissible skills by sentence-embedding similarity."""
