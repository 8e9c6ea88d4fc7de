//! kvlab's fjall shim: fjall (an LSM-tree in pure Rust) behind a few `extern "C"` calls, declared in
//! ../kvfjall.h, in the shape of kvlab's redb shim.
//!
//! The database is a `SingleWriterTxDatabase` with one keyspace, "kv".  A write transaction is fjall's
//! single-writer `WriteTransaction`: begin takes the database's writer mutex (one writer at a time, as redb), its
//! puts and deletes go to a memtable of its own (so its reads see its own writes over the snapshot it began at),
//! and commit hands them all to one `WriteBatch`, which writes them to the journal as one batch under one sequence
//! number, makes the journal durable with the transaction's `PersistMode`, applies them to the keyspace's memtable
//! and only then publishes that sequence number to readers: atomic to readers and to recovery (the journal replays
//! a batch whole or not at all).
//!
//! The transaction borrows the database (its writer mutex guard); the database lives in a box that outlives every
//! context (kvfjall.h's contract), so the borrow's lifetime is erased and the transaction kept in the context.
//!
//! Reads outside a transaction read the keyspace itself (every published commit); a read transaction holds a
//! `Snapshot`.  Errors cross as a code and a kvfjall_error; a panic inside fjall is caught here (unwinding into C
//! is undefined) and reported as an error of kind PANIC.
// Every extern "C" call is unsafe for the one reason kvfjall.h states: its pointers are the ones this shim handed
// out (or a C string, a key, a value of the length given), used by one thread at a time.
#![allow(clippy::missing_safety_doc)]
use std::ffi::{c_char, c_int, CStr};
use std::ops::Bound;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use fjall::config::{BlockSizePolicy, BloomConstructionPolicy, CompressionPolicy, FilterPolicy, FilterPolicyEntry};
use fjall::{
    CompressionType, Error, Guard, Iter, KeyspaceCreateOptions, KvSeparationOptions, LsmError, PersistMode, Readable,
    SingleWriterTxDatabase, SingleWriterTxKeyspace, SingleWriterWriteTx, Snapshot,
};

const KEYSPACE: &str = "kv";
const VERSION_MARKER: &str = "version"; // the file fjall's create_or_recover looks for (fjall/src/file.rs)
const MAX_KEY: usize = u16::MAX as usize; // lsm-tree's InternalKey::new asserts these (it panics past them)
const MAX_VALUE: usize = u32::MAX as usize;

pub const OK: c_int = 0;
pub const NOTFOUND: c_int = 1;
pub const ERROR: c_int = -1;

// enum kvfjall_kind
const E_OTHER: c_int = 1;
const E_IO: c_int = 2;
const E_FULL: c_int = 3;
const E_CONFIG: c_int = 4;
const E_CORRUPT: c_int = 5;
const E_BUSY: c_int = 6;
const E_PANIC: c_int = 7;

const DURABILITY_NONE: c_int = 0;
const DURABILITY_SYNC_DATA: c_int = 1;
const DURABILITY_SYNC_ALL: c_int = 2;

const COMPRESSION_DEFAULT: c_int = 0;
const COMPRESSION_NONE: c_int = 1;
const COMPRESSION_LZ4: c_int = 2;

#[repr(C)]
pub struct KvfjallError {
    kind: c_int,
    os_errno: c_int,
    name: *const c_char,
    text: [c_char; 400],
}

#[repr(C)]
pub struct KvfjallOptions {
    cache_size: u64,
    create: c_int,
    durability: c_int,
    max_memtable_size: u64,
    max_journaling_size: u64,
    block_size: u32,
    compression: c_int,
    bloom_bits_per_key: c_int,
    kv_separation: u32,
    worker_threads: c_int,
}

#[repr(C)]
pub struct KvfjallStats {
    disk_space: u64,
    journal_disk_space: u64,
    journal_count: u64,
    table_count: u64,
    l0_table_count: u64,
    blob_file_count: u64,
    approximate_len: u64,
    write_buffer_size: u64,
    outstanding_flushes: u64,
    active_compactions: u64,
    compactions_completed: u64,
    cache_capacity: u64,
    cache_used: u64,
    commits: u64,
    durable_commits: u64,
}

pub struct Db {
    // The keyspace holds a handle on the database: declared (so dropped) first
    ks: SingleWriterTxKeyspace,
    db: SingleWriterTxDatabase,
    persist: PersistMode,
    commits: AtomicU64,
    durable_commits: AtomicU64,
}

type WTx = SingleWriterWriteTx<'static>;

pub struct Thread {
    db: *const Db,
    // Dropped in declaration order: the range, then the transaction (Drop below says it again).
    range: Option<Iter>,
    wtx: Option<WTx>,
    snap: Option<Snapshot>, // in a read transaction
    range_lost: bool,       // a write in this write transaction dropped `range`: the next `next` seeks past `key`
    key: Vec<u8>,
    value: Vec<u8>,
}

impl Drop for Thread {
    fn drop(&mut self) {
        self.range = None;
        if let Some(tx) = self.wtx.take() {
            tx.rollback();
        }
        self.snap = None;
    }
}

/// A shim-made failure (not fjall's)
struct Misuse(&'static CStr, c_int, c_int, String); // name, kind, errno, text

enum Fail {
    Fjall(Error),
    Shim(Misuse),
}

impl From<Error> for Fail {
    fn from(e: Error) -> Self {
        Fail::Fjall(e)
    }
}

impl From<Misuse> for Fail {
    fn from(m: Misuse) -> Self {
        Fail::Shim(m)
    }
}

fn config(text: String) -> Misuse {
    Misuse(c"kvlab", E_CONFIG, 0, text)
}

fn storage_name(e: &LsmError) -> &'static CStr {
    match e {
        LsmError::Io(_) => c"Storage.Io",
        LsmError::Decompress(_) => c"Storage.Decompress",
        LsmError::InvalidVersion(_) => c"Storage.InvalidVersion",
        LsmError::Unrecoverable => c"Storage.Unrecoverable",
        LsmError::ChecksumMismatch { .. } => c"Storage.ChecksumMismatch",
        LsmError::InvalidTag(_) => c"Storage.InvalidTag",
        LsmError::InvalidTrailer => c"Storage.InvalidTrailer",
        LsmError::InvalidHeader(_) => c"Storage.InvalidHeader",
        LsmError::Utf8(_) => c"Storage.Utf8",
        _ => c"Storage",
    }
}

fn error_name(e: &Error) -> &'static CStr {
    match e {
        Error::Storage(s) => storage_name(s),
        Error::Io(_) => c"Io",
        Error::JournalRecovery(_) => c"JournalRecovery",
        Error::InvalidVersion(_) => c"InvalidVersion",
        Error::Decompress(_) => c"Decompress",
        Error::InvalidTrailer => c"InvalidTrailer",
        Error::InvalidTag(_) => c"InvalidTag",
        Error::Poisoned => c"Poisoned",
        Error::KeyspaceDeleted => c"KeyspaceDeleted",
        Error::Locked => c"Locked",
        Error::Unrecoverable => c"Unrecoverable",
        _ => c"Error",
    }
}

// Linux's values (the shim is built for Linux only, as kvlab is)
const ENOENT: i32 = 2;
const ENOSPC: i32 = 28;
const EDQUOT: i32 = 122;

fn io_kind(io: &std::io::Error) -> (c_int, c_int) {
    let errno = io.raw_os_error().unwrap_or(0);
    (
        if errno == ENOSPC || errno == EDQUOT {
            E_FULL
        } else {
            E_IO
        },
        errno,
    )
}

fn classify(e: &Error) -> (c_int, c_int) {
    match e {
        Error::Io(io) | Error::Storage(LsmError::Io(io)) => io_kind(io),
        Error::Poisoned => (E_IO, 0),
        Error::Locked => (E_BUSY, 0),
        Error::Storage(LsmError::Utf8(_)) => (E_OTHER, 0),
        Error::Storage(_)
        | Error::JournalRecovery(_)
        | Error::InvalidVersion(_)
        | Error::Decompress(_)
        | Error::InvalidTrailer
        | Error::InvalidTag(_)
        | Error::Unrecoverable => (E_CORRUPT, 0),
        _ => (E_OTHER, 0),
    }
}

#[cold]
#[inline(never)]
fn set(err: *mut KvfjallError, kind: c_int, os_errno: c_int, name: &'static CStr, text: &str) -> c_int {
    if let Some(err) = unsafe { err.as_mut() } {
        err.kind = kind;
        err.os_errno = os_errno;
        err.name = name.as_ptr();
        let n = text.len().min(err.text.len() - 1);
        for (dst, src) in err.text.iter_mut().zip(&text.as_bytes()[..n]) {
            *dst = *src as c_char;
        }
        err.text[n] = 0;
    }
    ERROR
}

#[cold]
#[inline(never)]
fn fail(err: *mut KvfjallError, e: impl Into<Fail>) -> c_int {
    match e.into() {
        Fail::Fjall(e) => {
            let (kind, errno) = classify(&e);
            set(err, kind, errno, error_name(&e), &e.to_string())
        }
        Fail::Shim(Misuse(name, kind, errno, text)) => set(err, kind, errno, name, &text),
    }
}

/// Runs `f`, turning a panic into an error of kind PANIC.
#[inline]
fn guard(err: *mut KvfjallError, f: impl FnOnce() -> c_int) -> c_int {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(rc) => rc,
        Err(payload) => panicked(err, payload),
    }
}

#[cold]
#[inline(never)]
fn panicked(err: *mut KvfjallError, payload: Box<dyn std::any::Any + Send>) -> c_int {
    let text = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into());
    set(err, E_PANIC, 0, c"panic", &format!("fjall panicked: {text}"))
}

unsafe fn bytes<'a>(p: *const c_char, n: usize) -> &'a [u8] {
    if n == 0 {
        &[]
    } else {
        std::slice::from_raw_parts(p as *const u8, n)
    }
}

fn check_key(k: &[u8]) -> Result<(), Misuse> {
    if k.is_empty() || k.len() > MAX_KEY {
        return Err(config(format!("fjall keys are 1 to {MAX_KEY} bytes, not {}", k.len())));
    }
    Ok(())
}

fn persist_mode(d: c_int) -> Result<PersistMode, Misuse> {
    match d {
        DURABILITY_NONE => Ok(PersistMode::Buffer),
        DURABILITY_SYNC_DATA => Ok(PersistMode::SyncData),
        DURABILITY_SYNC_ALL => Ok(PersistMode::SyncAll),
        _ => Err(config(format!("durability {d} is not one of KVFJALL_DURABILITY_*"))),
    }
}

/// The keyspace's creation options, from the C options (checked first: fjall asserts some of them)
fn keyspace_options(o: &KvfjallOptions) -> Result<KeyspaceCreateOptions, Misuse> {
    let mut ko = KeyspaceCreateOptions::default();
    if o.max_memtable_size != 0 {
        ko = ko.max_memtable_size(o.max_memtable_size);
    }
    if o.block_size != 0 {
        if !(1024..=1024 * 1024).contains(&o.block_size) {
            return Err(config(format!("block_size {} is not 1 KiB to 1 MiB", o.block_size)));
        }
        ko = ko.data_block_size_policy(BlockSizePolicy::all(o.block_size));
    }
    ko = match o.compression {
        COMPRESSION_DEFAULT => ko,
        COMPRESSION_NONE => ko.data_block_compression_policy(CompressionPolicy::all(CompressionType::None)),
        COMPRESSION_LZ4 => ko.data_block_compression_policy(CompressionPolicy::all(CompressionType::Lz4)),
        c => return Err(config(format!("compression {c} is not one of KVFJALL_COMPRESSION_*"))),
    };
    ko = match o.bloom_bits_per_key {
        0 => ko,
        b if b < 0 => ko.filter_policy(FilterPolicy::disabled()),
        b => ko.filter_policy(FilterPolicy::all(FilterPolicyEntry::Bloom(
            BloomConstructionPolicy::BitsPerKey(b as f32),
        ))),
    };
    if o.kv_separation != 0 {
        ko = ko.with_kv_separation(Some(
            KvSeparationOptions::default().separation_threshold(o.kv_separation),
        ));
    }
    Ok(ko)
}

fn open(path: PathBuf, o: &KvfjallOptions) -> Result<Box<Db>, Fail> {
    let persist = persist_mode(o.durability)?;
    let ko = keyspace_options(o)?;
    if o.create == 0 && !path.join(VERSION_MARKER).try_exists().map_err(Error::Io)? {
        let text = format!("no fjall database at {} (create is off)", path.display());
        return Err(Misuse(c"NotFound", E_IO, ENOENT, text).into());
    }
    let mut b = SingleWriterTxDatabase::builder(&path);
    if o.cache_size != 0 {
        b = b.cache_size(o.cache_size);
    }
    if o.max_journaling_size != 0 {
        if o.max_journaling_size < 64 << 20 {
            return Err(config(format!("max_journaling_size {} is under 64 MiB", o.max_journaling_size)).into());
        }
        b = b.max_journaling_size(o.max_journaling_size);
    }
    match o.worker_threads {
        0 => {}
        n if n < 0 => return Err(config(format!("worker_threads {n} is negative")).into()),
        n => b = b.worker_threads(n as usize),
    }
    let db = b.open()?;
    let ks = db.keyspace(KEYSPACE, || ko)?;
    Ok(Box::new(Db {
        ks,
        db,
        persist,
        commits: AtomicU64::new(0),
        durable_commits: AtomicU64::new(0),
    }))
}

type Bounds<'a> = (Bound<&'a [u8]>, Bound<&'a [u8]>);

impl Thread {
    fn db(&self) -> &'static Db {
        // The database outlives every context (kvfjall.h's contract)
        unsafe { &*self.db }
    }

    fn write_begin(&mut self) {
        let db = self.db();
        let tx = db.db.write_tx().durability(Some(db.persist));
        self.wtx = Some(tx);
    }

    fn write_commit(&mut self) -> Result<(), Error> {
        self.range = None;
        self.range_lost = false;
        let tx = self.wtx.take().expect("a write transaction");
        tx.commit()?;
        let db = self.db();
        if !matches!(db.persist, PersistMode::Buffer) {
            db.durable_commits.fetch_add(1, Ordering::Relaxed);
        }
        db.commits.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    fn write_abort(&mut self) {
        self.range = None;
        self.range_lost = false;
        if let Some(tx) = self.wtx.take() {
            tx.rollback();
        }
    }

    /// A write inside the write transaction ends a range over it (as the redb shim does): the next `next` re-seeks
    /// past the last key handed out, so the range goes on over the transaction's writes as they are now.
    fn before_write(&mut self) -> Result<&mut WTx, Misuse> {
        if self.range.is_some() && self.wtx.is_some() {
            self.range = None;
            self.range_lost = true;
        }
        self.wtx
            .as_mut()
            .ok_or_else(|| config("a write outside a write transaction".into()))
    }

    fn get(&self, key: &[u8]) -> Result<Option<fjall::Slice>, Error> {
        let db = self.db();
        if let Some(tx) = self.wtx.as_ref() {
            tx.get(&db.ks, key)
        } else if let Some(snap) = self.snap.as_ref() {
            snap.get(&db.ks, key)
        } else {
            db.ks.inner().get(key)
        }
    }

    fn range(&self, bounds: Bounds<'_>) -> Iter {
        let db = self.db();
        if let Some(tx) = self.wtx.as_ref() {
            tx.range::<&[u8], _>(&db.ks, bounds)
        } else if let Some(snap) = self.snap.as_ref() {
            snap.range::<&[u8], _>(&db.ks, bounds)
        } else {
            db.ks.inner().range::<&[u8], _>(bounds)
        }
    }

    fn out(&mut self, item: Option<Guard>) -> Result<bool, Error> {
        match item {
            None => Ok(false),
            Some(g) => {
                let (k, v) = g.into_inner()?;
                self.key.clear();
                self.key.extend_from_slice(&k);
                self.value.clear();
                self.value.extend_from_slice(&v);
                Ok(true)
            }
        }
    }

    fn seek(&mut self, lower: Bound<&[u8]>) -> Result<bool, Error> {
        self.range = None;
        self.range_lost = false;
        // The empty key is below every key (fjall has none): from the start
        let lower = match lower {
            Bound::Included([]) => Bound::Unbounded,
            b => b,
        };
        let mut range = self.range((lower, Bound::Unbounded));
        let item = range.next();
        self.range = Some(range);
        self.out(item)
    }

    fn next(&mut self) -> Result<bool, Error> {
        if self.range_lost {
            let key = std::mem::take(&mut self.key);
            let found = self.seek(Bound::Excluded(&key));
            if !found.as_ref().is_ok_and(|f| *f) {
                self.key = key;
            }
            return found;
        }
        let item = match self.range.as_mut() {
            Some(r) => r.next(),
            None => return Ok(false),
        };
        self.out(item)
    }
}

unsafe fn give_entry(t: &Thread, ko: *mut *const c_char, klo: *mut usize, vo: *mut *const c_char, vlo: *mut usize) {
    *ko = t.key.as_ptr() as *const c_char;
    *klo = t.key.len();
    *vo = t.value.as_ptr() as *const c_char;
    *vlo = t.value.len();
}

#[no_mangle]
pub unsafe extern "C" fn kvfjall_open(
    path: *const c_char,
    opts: *const KvfjallOptions,
    out: *mut *mut Db,
    err: *mut KvfjallError,
) -> c_int {
    guard(err, || {
        let path = PathBuf::from(CStr::from_ptr(path).to_string_lossy().into_owned());
        match open(path, &*opts) {
            Ok(db) => {
                *out = Box::into_raw(db);
                OK
            }
            Err(e) => fail(err, e),
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn kvfjall_close(db: *mut Db, err: *mut KvfjallError) -> c_int {
    guard(err, || {
        let db = Box::from_raw(db);
        // fjall's drop persists the journal too (Journal::drop, SyncAll) but only logs a failure: persist first so
        // that a failure is reported
        let persisted = db.db.persist(PersistMode::SyncAll);
        drop(db);
        match persisted {
            Ok(()) => OK,
            Err(e) => fail(err, e),
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn kvfjall_thread_open(db: *mut Db) -> *mut Thread {
    Box::into_raw(Box::new(Thread {
        db,
        range: None,
        wtx: None,
        snap: None,
        range_lost: false,
        key: Vec::new(),
        value: Vec::new(),
    }))
}

#[no_mangle]
pub unsafe extern "C" fn kvfjall_thread_close(t: *mut Thread) {
    let _ = catch_unwind(AssertUnwindSafe(|| drop(Box::from_raw(t))));
}

#[no_mangle]
pub unsafe extern "C" fn kvfjall_write_begin(t: *mut Thread, err: *mut KvfjallError) -> c_int {
    let t = &mut *t;
    guard(err, || {
        if t.wtx.is_some() {
            return set(err, E_CONFIG, 0, c"kvlab", "a write transaction is already open");
        }
        t.range = None;
        t.range_lost = false;
        t.write_begin();
        OK
    })
}

#[no_mangle]
pub unsafe extern "C" fn kvfjall_write_commit(t: *mut Thread, err: *mut KvfjallError) -> c_int {
    let t = &mut *t;
    guard(err, || {
        if t.wtx.is_none() {
            return set(err, E_CONFIG, 0, c"kvlab", "no write transaction is open");
        }
        match t.write_commit() {
            Ok(()) => OK,
            Err(e) => fail(err, e),
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn kvfjall_write_abort(t: *mut Thread) {
    let t = &mut *t;
    let _ = catch_unwind(AssertUnwindSafe(|| t.write_abort()));
}

#[no_mangle]
pub unsafe extern "C" fn kvfjall_in_write(t: *const Thread) -> c_int {
    (*t).wtx.is_some() as c_int
}

#[no_mangle]
pub unsafe extern "C" fn kvfjall_put(
    t: *mut Thread,
    k: *const c_char,
    kl: usize,
    v: *const c_char,
    vl: usize,
    err: *mut KvfjallError,
) -> c_int {
    let t = &mut *t;
    guard(err, || {
        let (key, value) = (bytes(k, kl), bytes(v, vl));
        if let Err(m) = check_key(key) {
            return fail(err, m);
        }
        if value.len() > MAX_VALUE {
            return fail(
                err,
                config(format!("fjall values are at most {MAX_VALUE} bytes, not {vl}")),
            );
        }
        let db = t.db();
        match t.before_write() {
            Ok(tx) => {
                tx.insert(&db.ks, key, value);
                OK
            }
            Err(m) => fail(err, m),
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn kvfjall_del(t: *mut Thread, k: *const c_char, kl: usize, err: *mut KvfjallError) -> c_int {
    let t = &mut *t;
    guard(err, || {
        let key = bytes(k, kl);
        if let Err(m) = check_key(key) {
            return fail(err, m);
        }
        let db = t.db();
        match t.before_write() {
            Ok(tx) => {
                tx.remove(&db.ks, key);
                OK
            }
            Err(m) => fail(err, m),
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn kvfjall_read_begin(t: *mut Thread, err: *mut KvfjallError) -> c_int {
    let t = &mut *t;
    guard(err, || {
        t.snap = Some(t.db().db.read_tx());
        OK
    })
}

#[no_mangle]
pub unsafe extern "C" fn kvfjall_read_end(t: *mut Thread) {
    let t = &mut *t;
    let _ = catch_unwind(AssertUnwindSafe(|| t.snap = None));
}

#[no_mangle]
pub unsafe extern "C" fn kvfjall_get(
    t: *mut Thread,
    k: *const c_char,
    kl: usize,
    v: *mut *const c_char,
    vl: *mut usize,
    err: *mut KvfjallError,
) -> c_int {
    let t = &mut *t;
    guard(err, || {
        let key = bytes(k, kl);
        if check_key(key).is_err() {
            return NOTFOUND; // no such key can be stored
        }
        match t.get(key) {
            Ok(Some(value)) => {
                t.value.clear();
                t.value.extend_from_slice(&value);
                *v = t.value.as_ptr() as *const c_char;
                *vl = t.value.len();
                OK
            }
            Ok(None) => NOTFOUND,
            Err(e) => fail(err, e),
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn kvfjall_seek(
    t: *mut Thread,
    k: *const c_char,
    kl: usize,
    ko: *mut *const c_char,
    klo: *mut usize,
    vo: *mut *const c_char,
    vlo: *mut usize,
    err: *mut KvfjallError,
) -> c_int {
    let t = &mut *t;
    guard(err, || match t.seek(Bound::Included(bytes(k, kl))) {
        Ok(true) => {
            give_entry(t, ko, klo, vo, vlo);
            OK
        }
        Ok(false) => NOTFOUND,
        Err(e) => fail(err, e),
    })
}

#[no_mangle]
pub unsafe extern "C" fn kvfjall_next(
    t: *mut Thread,
    ko: *mut *const c_char,
    klo: *mut usize,
    vo: *mut *const c_char,
    vlo: *mut usize,
    err: *mut KvfjallError,
) -> c_int {
    let t = &mut *t;
    guard(err, || match t.next() {
        Ok(true) => {
            give_entry(t, ko, klo, vo, vlo);
            OK
        }
        Ok(false) => NOTFOUND,
        Err(e) => fail(err, e),
    })
}

#[no_mangle]
pub unsafe extern "C" fn kvfjall_iter_close(t: *mut Thread) {
    let t = &mut *t;
    let _ = catch_unwind(AssertUnwindSafe(|| {
        t.range = None;
        t.range_lost = false;
    }));
}

#[no_mangle]
pub unsafe extern "C" fn kvfjall_get_stats(db: *const Db, out: *mut KvfjallStats) {
    let db = &*db;
    let stats = catch_unwind(AssertUnwindSafe(|| {
        let inner = db.db.inner();
        let ks = db.ks.inner();
        KvfjallStats {
            disk_space: db.db.disk_space().unwrap_or(0),
            journal_disk_space: inner.journal_disk_space().unwrap_or(0),
            journal_count: db.db.journal_count() as u64,
            table_count: ks.table_count() as u64,
            l0_table_count: ks.l0_table_count() as u64,
            blob_file_count: ks.blob_file_count() as u64,
            approximate_len: ks.approximate_len() as u64,
            write_buffer_size: db.db.write_buffer_size(),
            outstanding_flushes: inner.outstanding_flushes() as u64,
            active_compactions: inner.active_compactions() as u64,
            compactions_completed: inner.compactions_completed() as u64,
            cache_capacity: inner.cache_capacity(),
            cache_used: inner.cache_size(),
            commits: db.commits.load(Ordering::Relaxed),
            durable_commits: db.durable_commits.load(Ordering::Relaxed),
        }
    }));
    *out = stats.unwrap_or_else(|_| std::mem::zeroed());
}

#[no_mangle]
pub extern "C" fn kvfjall_version() -> *const c_char {
    const VERSION: &str = concat!(env!("KVFJALL_FJALL_VERSION"), "\0");
    VERSION.as_ptr() as *const c_char
}
