#!/usr/bin/env bash
# The full fuzz campaign: the suite's two fuzzes (tests/test_fuzz.py, tests/test_fuzz_argv.py) at 10,000
# cases each instead of the suite's 2,000.  Fixed cases up to 10,000; a larger count draws new random ones
# on every run:  scripts/fuzz_campaign.sh [CASES]
set -euo pipefail
cd "$(dirname "$0")/.."
export KVLAB_FUZZ_EXAMPLES="${1:-10000}"
exec .venv/bin/python -m pytest -q -ra -p no:cacheprovider tests/test_fuzz.py tests/test_fuzz_argv.py
