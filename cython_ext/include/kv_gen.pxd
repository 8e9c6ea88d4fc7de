# Cython's view of kv_gen.h: the key encoding.
from libc.stdint cimport uint64_t


cdef extern from "kv_gen.h":
    const char *KV_KEY_ENCODING
    enum:
        KV_KEY_MAX
        KV_VALUE_BUFFER
    void kv_make_key(char *buf, int key_size, uint64_t index) nogil
    void kv_make_key_portable(char *buf, int key_size, uint64_t index) nogil
