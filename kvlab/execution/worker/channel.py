"""Framed, pickled messages over a socket: the one way a caller and a worker talk (a length, then the pickle)."""
from __future__ import annotations

import os
import pickle
import struct

_HEAD = struct.Struct("<Q")
STATUS = struct.Struct("<i")   # the fork server's word on a worker: its pid as it starts, its wait status as it ends


def send(fd: int, message) -> None:
    """Write one message whole (a tuple whose first item names its kind)."""
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    view = memoryview(_HEAD.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view):]


class Reader:
    """Messages from a descriptor as they arrive: feed() what read() returned, then take the whole ones."""

    def __init__(self):
        self.buf = bytearray()

    def feed(self, chunk: bytes) -> list:
        self.buf += chunk
        out = []
        while len(self.buf) >= _HEAD.size:
            n = _HEAD.unpack_from(self.buf)[0]
            if len(self.buf) < _HEAD.size + n:
                break
            out.append(pickle.loads(bytes(self.buf[_HEAD.size:_HEAD.size + n])))
            del self.buf[:_HEAD.size + n]
        return out
