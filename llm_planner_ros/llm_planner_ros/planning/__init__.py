"""Planning methods: each implements :class:`llm_planner_ros.core.planner.Planner`."""
