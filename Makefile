# kvlab: the two commands in the README are `make compare` and `make test`.
.PHONY: setup compare test test-timing test-fast lint format-c bench engines docs clean

setup:
	bash scripts/setup.sh

compare: setup
	.venv/bin/kvlab compare

# The suite CI runs (.ci/run): every tier but the timing one, on both cores (pytest-xdist, a test file to a worker,
# so that a file's shared fixture, the wheel's build, is made once), then the browser tests alone, then the docs'
# examples (each a page's commands in its own folder) on both cores.  The timing tier asserts wall-clock bounds that
# hold only on an idle machine, and CI may share its machine: `make test-timing` runs it (tiers: tests/conftest.py).
test: setup
	.venv/bin/python -m pytest -q -ra -n 2 --dist loadfile -m "not timing and not browser" --ignore=tests/test_docs.py tests
	.venv/bin/python -m pytest -q -ra -m "browser and not timing" tests
	.venv/bin/python -m pytest -q -ra -n 2 tests/test_docs.py

# the wall-clock tier, alone, on an idle machine
test-timing: setup
	.venv/bin/python -m pytest -q -ra -m timing tests

# ruff (pyflakes, pycodestyle, import order, bugbear), codespell, cython-lint on cython_ext's .pyx/.pxd files
# (it runs pycodestyle from PATH, hence the venv's bin first) and mypy on kvlab/model and kvlab/results;
# each tool's settings are in pyproject.toml.  The same checks as pre-commit hooks: .pre-commit-config.yaml
lint: setup
	.venv/bin/ruff check
	.venv/bin/codespell
	PATH="$(CURDIR)/.venv/bin:$$PATH" .venv/bin/cython-lint cython_ext
	.venv/bin/mypy

# clang-format (cython_ext/.clang-format): the lines changed since the last commit in cython_ext's C files
# (git clang-format) and its new C files whole, or FILES="a.c b.h" whole; the existing code is not
# reformatted wholesale (see .clang-format)
format-c:
	@if [ -n "$(FILES)" ]; then echo "clang-format -i $(FILES)"; clang-format -i $(FILES); exit 0; fi; \
	git clang-format --force --extensions c,h -- cython_ext; \
	new=$$(git ls-files -o --exclude-standard -- 'cython_ext/*.c' 'cython_ext/*.h'); \
	if [ -n "$$new" ]; then echo "clang-format -i (new files)" $$new; clang-format -i $$new; fi

# the edit-test loop, under 150 s: everything but the long runs and whole commands end to end, the browser, the
# engine matrix beyond LMDB and RocksDB and the wall-clock tier (tiers: tests/conftest.py MARKERS, FAST_ENGINES,
# END_TO_END), on both cores (pytest-xdist); `make test` runs all of it but the wall-clock tier, which
# `make test-timing` runs on an idle machine
test-fast: setup
	.venv/bin/python -m pytest -q -ra -n 2 -m "not slow and not browser and not timing and not matrix" tests

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
