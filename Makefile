# kvlab: the two commands in the README are `make compare` and `make test`.
.PHONY: setup compare test test-fast lint bench engines docs clean

setup:
	bash scripts/setup.sh

compare: setup
	.venv/bin/kvlab compare

test: setup
	.venv/bin/python -m pytest -q -ra tests

# ruff (pyflakes, pycodestyle, import order, bugbear; pyproject.toml's [tool.ruff]) and codespell
lint: setup
	.venv/bin/ruff check
	.venv/bin/codespell

# the edit-test loop: everything but the long runs and the browser (tiers: tests/conftest.py MARKERS), on both
# cores (pytest-xdist); the tests that assert a wall-clock bound run after, alone, as they do in `make test`
test-fast: setup
	.venv/bin/python -m pytest -q -ra -n 2 -m "not slow and not browser and not timing" tests
	.venv/bin/python -m pytest -q -ra -m "timing and not slow and not browser" tests

# Optional: release builds of RocksDB, LevelDB (Debian source) and WiredTiger 11.3.1 (PyPI sdist);
# kvlab is rebuilt against them, and `make setup` keeps using them once they exist.
engines: setup
	bash scripts/build_engines.sh

# The docs site (mkdocs.yml) into site/, warnings as errors; the reference pages are generated from the code
# as it builds (scripts/gen_docs.py).
docs: setup
	.venv/bin/mkdocs build --strict

bench: setup
	.venv/bin/python benchmarks/run_all.py

clean:
	rm -rf build kvlab/_native*.so cython_ext/_native.c kvlab/_build_config.json
