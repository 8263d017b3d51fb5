# The two commands of the README: `make demo` and `make test`. Both set up what is missing.
SHELL := /bin/bash
TASK ?= Wash hands
.PHONY: demo test bootstrap clean

bootstrap:
	@./scripts/bootstrap.sh

demo: bootstrap
	@source env.sh && ./scripts/demo.sh "$(TASK)"

test: bootstrap
	@./scripts/install_browser.sh
	@source env.sh && ./scripts/lint.sh && python -m pytest test

clean:
	rm -rf build install log env.sh
