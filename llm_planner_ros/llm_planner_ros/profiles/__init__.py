"""World profiles: a robot's skills, facts, objects and words, as data beside a PDDL domain
(:mod:`.loader`). The worlds given in code are registered in ``worlds.yaml``, a line each, and
loaded by name (:func:`llm_planner_ros.planning.worlds.load_world`), as PlanSys2 loads its
planner plugins."""
