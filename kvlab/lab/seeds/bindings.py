"""The engines' own Python bindings, for the baseline the native loop is compared with: one small adapter class
per binding with the same interface (ann-benchmarks' BaseANN is the model), and BINDINGS, the registry the
baseline walks.  A new binding is one class and one row; nothing branches on a binding's name."""
from __future__ import annotations

import os
import threading


class Binding:
    """One engine through its Python binding.  open() makes the store in `folder` with the imported `module`
    and sets put(key, value) and get(key): the binding's own callables where it has them, so that the loop
    times the binding, not an extra Python call; get must be callable from several threads at once.  close()
    lets the store go."""
    engine = ""     # the engine's name in the baseline's rows
    module = ""     # what to import; a binding that is not installed is skipped

    def open(self, module, folder: str) -> None:
        raise NotImplementedError

    def put(self, key: bytes, value: bytes) -> None:
        raise NotImplementedError

    def get(self, key: bytes):
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError


class Lmdb(Binding):
    """python-lmdb: one write transaction per put, one read transaction per get."""
    engine, module = "lmdb", "lmdb"

    def open(self, module, folder):
        env = self.env = module.open(f"{folder}/lmdb", map_size=1 << 32, sync=False)

        def put(k, v):
            with env.begin(write=True) as txn:
                txn.put(k, v)

        def get(k):
            with env.begin() as txn:
                return txn.get(k)
        self.put, self.get = put, get

    def close(self):
        self.env.close()


class Plyvel(Binding):
    """plyvel, LevelDB's binding."""
    engine, module = "leveldb", "plyvel"

    def open(self, module, folder):
        self.db = module.DB(f"{folder}/leveldb", create_if_missing=True)
        self.put, self.get = self.db.put, self.db.get

    def close(self):
        self.db.close()


class Rocksdict(Binding):
    """rocksdict, a RocksDB binding."""
    engine, module = "rocksdb", "rocksdict"

    def open(self, module, folder):
        self.db = module.Rdict(f"{folder}/rocksdb")
        self.put, self.get = self.db.put, self.db.get

    def close(self):
        self.db.close()


class WiredTiger(Binding):
    """The wiredtiger module (built from its PyPI sdist by `make engines`); its sessions and cursors are per
    thread, so each thread opens its own cursor on first use."""
    engine, module = "wiredtiger-btree", "wiredtiger"

    def open(self, module, folder):
        os.makedirs(f"{folder}/wt")
        conn = self.conn = module.wiredtiger_open(f"{folder}/wt", "create,cache_size=512MB")
        conn.open_session().create("table:kv", "key_format=u,value_format=u")
        local = threading.local()

        def cursor():
            if not hasattr(local, "cursor"):
                local.cursor = conn.open_session().open_cursor("table:kv")
            return local.cursor

        def put(k, v):
            cursor()[k] = v

        def get(k):
            c = cursor()
            c.set_key(k)
            return c.get_value() if c.search() == 0 else None
        self.put, self.get = put, get

    def close(self):
        self.conn.close()


# in the order the baseline's rows list them
BINDINGS = (Lmdb, Plyvel, Rocksdict, WiredTiger)
