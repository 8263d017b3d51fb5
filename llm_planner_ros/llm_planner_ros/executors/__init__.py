"""Skill executors: any PDDL world (:mod:`.pddl_world`); a world given in code brings its own simulator."""
