"""redb's engine events: what the adapter's `stats` call returns (the shim's counts and the file's size; redb's own
table statistics walk the whole tree, too costly to sample), as named fields (kvlab.results.events)."""
from ..descriptor import EngineEvents, Field, pick


def _redb(numbers: dict, text: str) -> dict:
    return pick(numbers, {"file_size": "file_size", "commits": "commits", "durable_commits": "durable_commits"})


EVENTS = EngineEvents(_redb, {
    "file_size": Field("bytes", "gauge", "the database file's size (redb grows it by regions)"),
    "commits": Field("count", "counter", "write transactions committed through the shim"),
    "durable_commits": Field("count", "counter", "of them with Durability::Immediate (fsynced at commit)"),
})
