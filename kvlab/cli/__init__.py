"""Face: the `kvlab` command (kvlab.cli.main) and db_bench's command line (kvlab.cli.dbbench)."""
from .main import build_parser, entry, main, spec_from_args  # noqa: F401
