"""The cache traces' CSV (cacheMon's: Twitter's 2020 cluster traces, and Meta's KV cache traces of 2022 as cacheMon
converts them): one request a line,

    timestamp,key,key_size,value_size,client_id,operation,ttl

timestamp in seconds (a fraction allowed), the key as written (anonymised), sizes in bytes, the client an id.  A
first line that names the columns is skipped.  Each client is a recorded thread.  The operations, as kvlab runs
them: get and gets read; set, add, replace and cas write a value of value_size; append, prepend, incr and decr
change the value they find (an rmw of value_size); delete deletes.  Any other is counted and skipped.
"""
from __future__ import annotations

import csv
from collections import Counter

from . import imported
from .fileformat import TraceError

FORMAT = "csv"
COLUMNS = ("timestamp", "key", "key_size", "value_size", "client_id", "operation", "ttl")
OPS = {"get": "read", "gets": "read", "set": "write", "add": "write", "replace": "write", "cas": "write",
       "append": "rmw", "prepend": "rmw", "incr": "rmw", "decr": "rmw", "delete": "delete"}
_SIZED = {"write", "rmw"}


def read(path) -> imported.Trace:
    path = str(path)
    rows: list = []
    skipped: Counter = Counter()
    try:
        with open(path, newline="", encoding="utf-8", errors="surrogateescape") as f:
            for n, line in enumerate(csv.reader(f), 1):
                if not line or (n == 1 and line[0].strip().lower() in ("timestamp", "time", "ts")):
                    continue
                if len(line) < 6:
                    raise TraceError(f"cache trace {path!r}, line {n}: {len(line)} columns; a line is "
                                     f"{','.join(COLUMNS)} (ttl may be left out)")
                try:
                    ts = round(float(line[0]) * 1e9)
                    size = int(line[3])
                except ValueError:
                    raise TraceError(f"cache trace {path!r}, line {n}: timestamp {line[0]!r} and value_size "
                                     f"{line[3]!r} must be numbers (columns: {','.join(COLUMNS)})") from None
                op = OPS.get(line[5].strip().lower())
                if op is None:
                    skipped[line[5].strip().lower() or "(empty)"] += 1
                    continue
                rows.append((ts, line[4].strip(), op, line[1].encode("utf-8", "surrogateescape"),
                             max(size, 0) if op in _SIZED else 0))
    except OSError as exc:
        raise TraceError(f"cache trace {path!r}: cannot read it: {exc.strerror}") from None
    except UnicodeError as exc:
        raise TraceError(f"cache trace {path!r} is not text: {exc}") from None
    if not rows and not skipped:
        raise TraceError(f"cache trace {path!r} holds no requests (columns: {','.join(COLUMNS)})")
    return imported.build(path, FORMAT, rows, skipped, {"columns": list(COLUMNS)})
