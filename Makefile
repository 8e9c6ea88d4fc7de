# kvlab: the two commands in the README are `make compare` and `make test`.
.PHONY: setup compare test bench clean

setup:
	bash scripts/setup.sh

compare: setup
	.venv/bin/kvlab compare

test: setup
	.venv/bin/python -m pytest -q -ra tests

bench: setup
	.venv/bin/python benchmarks/run_all.py

clean:
	rm -rf build kvlab/_native*.so cython_ext/_native.c kvlab/_build_config.json
