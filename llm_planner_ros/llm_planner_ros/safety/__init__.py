"""Gates between planning and execution: only admissible, allowed and (optionally) approved
skills reach an executor."""
