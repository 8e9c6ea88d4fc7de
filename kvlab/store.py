"""Public path of the results store: `kvlab.store.Store` (it lives in kvlab.results.store)."""
from .results.store import Store  # noqa: F401
