"""A power cut is a reboot.  After a forgetfs cut the host is still up: the recovering process would see the same
/proc/sys/kernel/random/boot_id as the writer, which no real power cut allows, and an engine that trusts what it
wrote "in this boot" would trust it (libmdbx keeps a weak meta page when the boot id in it matches, because the page
cache would have survived).  So a crash test with power cuts runs every process in a boot of its own: the writer of
round i and the database's making in boot i, the reopen after the i'th cut (and the next writer) in boot i + 1.
Each process gets the boot's id from cython_ext/tools/bootid.c, an LD_PRELOAD interposer that serves it to whoever
opens the boot-id file and says the file is on procfs (libmdbx's reader checks both) and, on stderr, that it was read;
the reopen runs in a process of its own, started after the cut (libmdbx reads the id once, as it loads), for an engine
whose writer read the id (any other reopens in the fork server's worker: no process of it can tell the boots apart).  The page cache of the cut
files is gone too: they were only ever cached under the mount, which the cut removed.  Nothing on the host changes.
"""
from __future__ import annotations

import os
import random
import uuid

from ... import errors
from . import toolbuild

SOURCE = toolbuild.TOOLS / "bootid.c"
SAID = "kvlab bootid: pid"   # how the interposer tells, on stderr, that a process read the boot id it served


class RebootUnavailable(errors.KvlabError):
    """The interposer could not be built here: the message says why."""


def library() -> str:
    """The interposer, built on first use."""
    return str(toolbuild.compiled(SOURCE, "libkvlab_bootid.so", ["-shared", "-fPIC", "-ldl"], RebootUnavailable))


def boot_id(seed: int, boot: int) -> str:
    """The id of a campaign's boot `boot` (a UUID, as the kernel writes one), the same for the same seed."""
    return str(uuid.UUID(int=random.Random(f"{seed}:{boot}").getrandbits(128), version=4))


def environ(base: dict, boot: str) -> dict:
    """`base` for a process that lives in the boot whose id is `boot`."""
    preload = " ".join(p for p in (library(), base.get("LD_PRELOAD", "")) if p)
    return {**base, "LD_PRELOAD": preload, "KVLAB_BOOT_ID": boot, "KVLAB_BOOT_ID_SAY": "1"}


def prefix(boot: str) -> tuple:
    """The command line a worker runs under to live in the boot `boot` (its own process: execution.worker)."""
    env = environ(dict(os.environ), boot)
    return ("env", *(f"{k}={env[k]}" for k in ("LD_PRELOAD", "KVLAB_BOOT_ID", "KVLAB_BOOT_ID_SAY")))
