"""Goal-directed planning: a PDDL world model of the executor, goal conditions, Fast Downward."""
