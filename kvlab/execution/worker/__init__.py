"""Every measured trial in a worker process of its own (pyperf's workers, ann-benchmarks' container per algorithm).

`server.py` is the fork server: a fresh interpreter (exec'd, never a fork of the caller) that imports kvlab's
runner and the extension once, opens no engine and loads none at run time, and forks one worker per trial.
`spawn.py` is the caller's side: it starts the server, asks it for a worker, hands the worker its job and reads
what comes back over `channel.py`'s framed messages (progress, each phase's record, the trial's records or its
error); a worker that dies is read from the server's account of how it ended.
"""
