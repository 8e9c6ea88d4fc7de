"""Face: the `kvlab` command. main.py builds the parser from one module per subcommand (run, ycsb,
dbbench, compare, results, ...); parsing.py is the grammar they share, common.py what every running
command does around its run, output.py how numbers are printed."""
from .main import build_parser, entry, main, spec_from_args  # noqa: F401
