# The two commands of the README: `make demo` and `make test`. Both set up what is missing.
SHELL := /bin/bash
TASK ?= Wash hands
.PHONY: demo test docs bootstrap clean

bootstrap:
	@./scripts/bootstrap.sh

demo: bootstrap
	@source env.sh && ./scripts/demo.sh "$(TASK)"

test: bootstrap docs
	@./scripts/install_browser.sh
	@source env.sh && ./scripts/lint.sh && python -m pytest test

# docs/ with Sphinx + MyST, warnings as errors (a broken link or a stale reference fails);
# `rosdoc2 build --package-path .` builds the same pages (rosdoc2.yaml)
docs: bootstrap
	@source env.sh && python -m sphinx -W --keep-going -q -b html docs docs/_build/html

clean:
	rm -rf build install log env.sh docs/_build docs/_generated
