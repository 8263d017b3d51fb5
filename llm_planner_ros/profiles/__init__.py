"""World profiles: a robot's skills, facts, objects and words, as data beside a PDDL domain."""
