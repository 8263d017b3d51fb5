# The two commands of the README: `make demo` and `make test`. Both set up what is missing.
SHELL := /bin/bash
TASK ?= Wash hands
.PHONY: demo test docs bootstrap warm clean

bootstrap:
	@./scripts/bootstrap.sh

# What a goal would otherwise embed (the skill banks, the default scene's conditions), into the
# cache once; the planner node does the same before it serves, from the cache after this.
warm: bootstrap
	@source env.sh && python -m llm_planner_ros warm --config llm_planner_ros/config/planner.yaml

demo: warm
	@source env.sh && ./scripts/demo.sh "$(TASK)"

test: warm docs
	@./scripts/install_browser.sh
	@source env.sh && ./scripts/lint.sh && python -m pytest llm_planner_ros/test

# docs/ with Sphinx + MyST, warnings as errors (a broken link or a stale reference fails);
# `rosdoc2 build --package-path llm_planner_ros` builds the same pages (rosdoc2.yaml)
docs: bootstrap
	@source env.sh && python -m sphinx -W --keep-going -q -b html docs docs/_build/html

clean:
	rm -rf build install log env.sh docs/_build docs/_generated
