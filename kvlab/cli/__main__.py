"""`python -m kvlab.cli ...`: the same as the `kvlab` command."""
from .main import entry

entry()
