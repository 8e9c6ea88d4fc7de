"""`python -m kvlab.cli ...`: the same as the `kvlab` command."""
import sys

from .main import main

sys.exit(main())
