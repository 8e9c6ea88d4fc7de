//! kvlab's redb shim: redb (a copy-on-write B-tree in pure Rust) behind a few `extern "C"` calls, declared in
//! ../kvredb.h, which kvlab's adapter (../../engine_redb.c) fills kvlab's engine contract with.
//!
//! The shim holds what a C caller cannot: redb's transactions and tables, whose lifetimes borrow one another.  A
//! write transaction lives in the thread's slot (a box made once per thread, so its address never changes and a
//! write transaction costs the shim no allocation) and its table is kept beside it with the borrow's lifetime
//! erased; the table (and any range over it) is always dropped before the transaction ends, which is what the
//! borrow would have enforced.
//!
//! A read outside a transaction sees every commit made through this database before it: the thread's snapshot (a
//! table opened in a read transaction) is kept while no commit has happened since, and renewed otherwise.  redb's
//! file lock (ConcurrencyMode::ExclusiveWriter) makes this process the file's only writer, so the commits counted
//! here are all there are.  A kept snapshot pins the pages it reads until the thread's next read renews it.
//!
//! Errors cross as a code and a kvredb_error; a panic inside redb is caught here (unwinding into C is undefined)
//! and reported as an error of kind PANIC.
// Every extern "C" call is unsafe for the one reason kvredb.h states: its pointers are the ones this shim handed out
// (or a C string, a key, a value of the length given), used by one thread at a time.
#![allow(clippy::missing_safety_doc)]
use std::ffi::{c_char, c_int, CStr};
use std::ops::Bound;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use redb::{
    Database, Durability, Error, Range, ReadOnlyTable, ReadableDatabase, ReadableTable, Table, TableDefinition,
    WriteTransaction,
};

const TABLE: TableDefinition<&[u8], &[u8]> = TableDefinition::new("kv");
const PAGE_SIZE: u64 = 4096; // redb's, not configurable (Builder's default)
const DEFAULT_CACHE: u64 = 1 << 30; // Builder's default cache

pub const OK: c_int = 0;
pub const NOTFOUND: c_int = 1;
pub const ERROR: c_int = -1;

// enum kvredb_kind
const E_OTHER: c_int = 1;
const E_IO: c_int = 2;
const E_FULL: c_int = 3;
const E_CONFIG: c_int = 4;
const E_CORRUPT: c_int = 5;
const E_BUSY: c_int = 6;
const E_PANIC: c_int = 7;

#[repr(C)]
pub struct KvredbError {
    kind: c_int,
    os_errno: c_int,
    name: *const c_char,
    text: [c_char; 400],
}

#[repr(C)]
pub struct KvredbOptions {
    cache_size: u64,
    create: c_int,
    durability: c_int,
    two_phase_commit: c_int,
    quick_repair: c_int,
    check_integrity: c_int,
}

#[repr(C)]
pub struct KvredbStats {
    file_size: u64,
    commits: u64,
    durable_commits: u64,
    cache_size: u64,
    page_size: u64,
}

pub struct Db {
    db: Database,
    path: PathBuf,
    durability: Durability,
    two_phase: bool,
    quick_repair: bool,
    cache_size: u64,
    commits: AtomicU64,
    durable_commits: AtomicU64,
}

type RTable = ReadOnlyTable<&'static [u8], &'static [u8]>;
type WTable = Table<'static, &'static [u8], &'static [u8]>;
type Iter = Range<'static, &'static [u8], &'static [u8]>;
type Entry<'a> = Option<
    redb::Result<(
        redb::AccessGuard<'a, &'static [u8]>,
        redb::AccessGuard<'a, &'static [u8]>,
    )>,
>;

pub struct Thread {
    db: *const Db,
    // Declared in the order they must be dropped: a range before the table it reads, the table before its
    // transaction (Rust drops fields in declaration order; Drop below says it again).
    range: Option<Iter>,
    wtable: Option<WTable>,
    wtxn: Box<Option<WriteTransaction>>, // the slot: allocated with the thread, never moved
    snap: Option<RTable>,
    snap_commits: u64, // the commit count `snap` was opened at
    pinned: bool,      // in a read transaction: `snap` is kept until its end
    range_lost: bool,  // a write in this write transaction dropped `range`: the next `next` seeks past `key`
    key: Vec<u8>,
    value: Vec<u8>,
}

impl Drop for Thread {
    fn drop(&mut self) {
        self.range = None;
        self.wtable = None;
        *self.wtxn = None;
        self.snap = None;
    }
}

fn error_name(e: &Error) -> &'static CStr {
    match e {
        Error::Io(_) => c"Io",
        Error::PreviousIo => c"PreviousIo",
        Error::Corrupted(_) => c"Corrupted",
        Error::UpgradeRequired(_) => c"UpgradeRequired",
        Error::ValueTooLarge(_) => c"ValueTooLarge",
        Error::DatabaseAlreadyOpen => c"DatabaseAlreadyOpen",
        Error::LockProtocolMismatch => c"LockProtocolMismatch",
        Error::TransactionInProgress => c"TransactionInProgress",
        Error::TransactionPoisoned => c"TransactionPoisoned",
        Error::TableDoesNotExist(_) => c"TableDoesNotExist",
        Error::DatabaseClosed => c"DatabaseClosed",
        Error::RepairAborted => c"RepairAborted",
        _ => c"Error",
    }
}

#[cold]
#[inline(never)]
fn set(err: *mut KvredbError, kind: c_int, os_errno: c_int, name: &'static CStr, text: &str) -> c_int {
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
fn fail(err: *mut KvredbError, e: impl Into<Error>) -> c_int {
    let e: Error = e.into();
    let (kind, errno) = match &e {
        Error::Io(io) => {
            let errno = io.raw_os_error().unwrap_or(0);
            (
                if errno == libc_enospc() || errno == libc_edquot() {
                    E_FULL
                } else {
                    E_IO
                },
                errno,
            )
        }
        Error::PreviousIo => (E_IO, 0),
        Error::Corrupted(_) | Error::UpgradeRequired(_) => (E_CORRUPT, 0),
        Error::ValueTooLarge(_) => (E_CONFIG, 0),
        Error::DatabaseAlreadyOpen | Error::LockProtocolMismatch => (E_BUSY, 0),
        _ => (E_OTHER, 0),
    };
    set(err, kind, errno, error_name(&e), &e.to_string())
}

// Linux's values (the shim is built for Linux only, as kvlab is)
fn libc_enospc() -> i32 {
    28
}
fn libc_edquot() -> i32 {
    122
}

/// Runs `f`, turning a panic into an error of kind PANIC.
#[inline]
fn guard(err: *mut KvredbError, f: impl FnOnce() -> c_int) -> c_int {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(rc) => rc,
        Err(payload) => panicked(err, payload),
    }
}

#[cold]
#[inline(never)]
fn panicked(err: *mut KvredbError, payload: Box<dyn std::any::Any + Send>) -> c_int {
    let text = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into());
    set(err, E_PANIC, 0, c"panic", &format!("redb panicked: {text}"))
}

unsafe fn bytes<'a>(p: *const c_char, n: usize) -> &'a [u8] {
    if n == 0 {
        &[]
    } else {
        std::slice::from_raw_parts(p as *const u8, n)
    }
}

impl Thread {
    fn db(&self) -> &Db {
        unsafe { &*self.db }
    }

    /// The table a read outside a write transaction uses: the pinned snapshot, or one no older than the last commit.
    #[inline]
    fn refresh(&mut self) -> Result<(), Error> {
        let commits = self.db().commits.load(Ordering::Acquire);
        if self.snap.is_some() && (self.pinned || self.snap_commits == commits) {
            return Ok(());
        }
        self.renew(commits)
    }

    #[cold]
    #[inline(never)]
    fn renew(&mut self, commits: u64) -> Result<(), Error> {
        self.snap = None;
        let txn = self.db().db.begin_read()?;
        self.snap = Some(txn.open_table(TABLE)?);
        self.snap_commits = commits;
        Ok(())
    }

    fn write_begin(&mut self) -> Result<(), Error> {
        let db = self.db();
        let mut txn = db.db.begin_write()?;
        txn.set_durability(db.durability)?;
        txn.set_two_phase_commit(db.two_phase);
        txn.set_quick_repair(db.quick_repair);
        let opened = self
            .wtxn
            .insert(txn)
            .open_table(TABLE)
            .map(|table: Table<'_, &[u8], &[u8]>| {
                // The table borrows the transaction in the slot, which does not move and outlives it (Drop's order)
                unsafe { std::mem::transmute::<Table<'_, &[u8], &[u8]>, WTable>(table) }
            });
        match opened {
            Ok(table) => self.wtable = Some(table),
            Err(e) => {
                *self.wtxn = None;
                return Err(e.into());
            }
        }
        Ok(())
    }

    fn write_commit(&mut self) -> Result<(), Error> {
        self.range = None;
        self.wtable = None;
        let txn = self.wtxn.take().expect("a write transaction"); // out of the slot: a move, no allocation
        txn.commit()?;
        let db = self.db();
        if matches!(db.durability, Durability::Immediate) {
            db.durable_commits.fetch_add(1, Ordering::Relaxed);
        }
        db.commits.fetch_add(1, Ordering::Release);
        Ok(())
    }

    fn write_abort(&mut self) {
        self.range = None;
        self.wtable = None;
        if let Some(txn) = self.wtxn.take() {
            let _ = txn.abort();
        }
    }

    /// A write inside the write transaction ends a range over its table (redb's borrow rule); remember to re-seek.
    fn before_write(&mut self) {
        if self.range.is_some() && self.wtable.is_some() {
            self.range = None;
            self.range_lost = true;
        }
    }

    fn out(&mut self, item: Entry<'_>) -> Result<bool, Error> {
        match item {
            None => Ok(false),
            Some(entry) => {
                let (k, v) = entry?;
                self.key.clear();
                self.key.extend_from_slice(k.value());
                self.value.clear();
                self.value.extend_from_slice(v.value());
                Ok(true)
            }
        }
    }

    fn seek(&mut self, lower: Bound<&[u8]>) -> Result<bool, Error> {
        self.range = None;
        self.range_lost = false;
        let range: Iter = if let Some(table) = self.wtable.as_ref() {
            let r = table.range::<&[u8]>((lower, Bound::Unbounded))?;
            // The range borrows the table, which stays in place until `range` is dropped (before_write, commit)
            unsafe { std::mem::transmute::<Range<'_, &[u8], &[u8]>, Iter>(r) }
        } else {
            self.refresh()?;
            self.snap.as_ref().unwrap().range::<&[u8]>((lower, Bound::Unbounded))?
        };
        self.range = Some(range);
        self.next()
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
pub unsafe extern "C" fn kvredb_open(
    path: *const c_char,
    opts: *const KvredbOptions,
    out: *mut *mut Db,
    err: *mut KvredbError,
) -> c_int {
    guard(err, || {
        let path = PathBuf::from(CStr::from_ptr(path).to_string_lossy().into_owned());
        let o = &*opts;
        let cache_size = if o.cache_size == 0 { DEFAULT_CACHE } else { o.cache_size };
        let mut builder = Database::builder();
        builder.set_cache_size(cache_size as usize);
        builder.set_check_integrity_on_open(o.check_integrity != 0);
        let opened = if o.create != 0 {
            builder.create(&path)
        } else {
            builder.open(&path)
        };
        let db = match opened {
            Ok(db) => db,
            Err(e) => return fail(err, e),
        };
        let db = Box::new(Db {
            db,
            path,
            durability: if o.durability != 0 {
                Durability::Immediate
            } else {
                Durability::None
            },
            two_phase: o.two_phase_commit != 0,
            quick_repair: o.quick_repair != 0,
            cache_size,
            commits: AtomicU64::new(0),
            durable_commits: AtomicU64::new(0),
        });
        // The table, made once, durably: a read transaction can only open a table that exists
        let made = (|| -> Result<(), Error> {
            let txn = db.db.begin_write()?;
            txn.open_table(TABLE)?;
            txn.commit()?;
            Ok(())
        })();
        if let Err(e) = made {
            return fail(err, e);
        }
        *out = Box::into_raw(db);
        OK
    })
}

#[no_mangle]
pub unsafe extern "C" fn kvredb_close(db: *mut Db, err: *mut KvredbError) -> c_int {
    guard(err, || {
        let db = Box::from_raw(db);
        match db.db.close() {
            Ok(()) => OK,
            Err(e) => fail(err, e),
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn kvredb_thread_open(db: *mut Db) -> *mut Thread {
    Box::into_raw(Box::new(Thread {
        db,
        range: None,
        wtable: None,
        wtxn: Box::new(None),
        snap: None,
        snap_commits: 0,
        pinned: false,
        range_lost: false,
        key: Vec::new(),
        value: Vec::new(),
    }))
}

#[no_mangle]
pub unsafe extern "C" fn kvredb_thread_close(t: *mut Thread) {
    let _ = catch_unwind(AssertUnwindSafe(|| drop(Box::from_raw(t))));
}

#[no_mangle]
pub unsafe extern "C" fn kvredb_write_begin(t: *mut Thread, err: *mut KvredbError) -> c_int {
    let t = &mut *t;
    guard(err, || {
        if t.wtxn.is_some() {
            return set(err, E_CONFIG, 0, c"kvlab", "a write transaction is already open");
        }
        t.range = None;
        match t.write_begin() {
            Ok(()) => OK,
            Err(e) => fail(err, e),
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn kvredb_write_commit(t: *mut Thread, err: *mut KvredbError) -> c_int {
    let t = &mut *t;
    guard(err, || {
        if t.wtxn.is_none() {
            return set(err, E_CONFIG, 0, c"kvlab", "no write transaction is open");
        }
        match t.write_commit() {
            Ok(()) => OK,
            Err(e) => fail(err, e),
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn kvredb_write_abort(t: *mut Thread) {
    let t = &mut *t;
    let _ = catch_unwind(AssertUnwindSafe(|| t.write_abort()));
}

#[no_mangle]
pub unsafe extern "C" fn kvredb_in_write(t: *const Thread) -> c_int {
    (*t).wtxn.is_some() as c_int
}

#[no_mangle]
pub unsafe extern "C" fn kvredb_put(
    t: *mut Thread,
    k: *const c_char,
    kl: usize,
    v: *const c_char,
    vl: usize,
    err: *mut KvredbError,
) -> c_int {
    let t = &mut *t;
    guard(err, || {
        t.before_write();
        let Some(table) = t.wtable.as_mut() else {
            return set(err, E_CONFIG, 0, c"kvlab", "put outside a write transaction");
        };
        match table.insert(bytes(k, kl), bytes(v, vl)) {
            Ok(_) => OK,
            Err(e) => fail(err, e),
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn kvredb_del(t: *mut Thread, k: *const c_char, kl: usize, err: *mut KvredbError) -> c_int {
    let t = &mut *t;
    guard(err, || {
        t.before_write();
        let Some(table) = t.wtable.as_mut() else {
            return set(err, E_CONFIG, 0, c"kvlab", "delete outside a write transaction");
        };
        match table.remove(bytes(k, kl)) {
            Ok(Some(_)) => OK,
            Ok(None) => NOTFOUND,
            Err(e) => fail(err, e),
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn kvredb_read_begin(t: *mut Thread, err: *mut KvredbError) -> c_int {
    let t = &mut *t;
    guard(err, || {
        t.pinned = false;
        match t.refresh() {
            Ok(()) => {
                t.pinned = true;
                OK
            }
            Err(e) => fail(err, e),
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn kvredb_read_end(t: *mut Thread) {
    (*t).pinned = false;
}

#[no_mangle]
pub unsafe extern "C" fn kvredb_get(
    t: *mut Thread,
    k: *const c_char,
    kl: usize,
    v: *mut *const c_char,
    vl: *mut usize,
    err: *mut KvredbError,
) -> c_int {
    let t = &mut *t;
    guard(err, || {
        let key = bytes(k, kl);
        let got = match t.wtable.as_ref() {
            Some(table) => table.get(key),
            None => match t.refresh() {
                Ok(()) => t.snap.as_ref().unwrap().get(key),
                Err(e) => return fail(err, e),
            },
        };
        match got {
            Ok(Some(value)) => {
                t.value.clear();
                t.value.extend_from_slice(value.value());
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
pub unsafe extern "C" fn kvredb_seek(
    t: *mut Thread,
    k: *const c_char,
    kl: usize,
    ko: *mut *const c_char,
    klo: *mut usize,
    vo: *mut *const c_char,
    vlo: *mut usize,
    err: *mut KvredbError,
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
pub unsafe extern "C" fn kvredb_next(
    t: *mut Thread,
    ko: *mut *const c_char,
    klo: *mut usize,
    vo: *mut *const c_char,
    vlo: *mut usize,
    err: *mut KvredbError,
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
pub unsafe extern "C" fn kvredb_iter_close(t: *mut Thread) {
    let t = &mut *t;
    let _ = catch_unwind(AssertUnwindSafe(|| {
        t.range = None;
        t.range_lost = false;
    }));
}

#[no_mangle]
pub unsafe extern "C" fn kvredb_get_stats(db: *const Db, out: *mut KvredbStats) {
    let db = &*db;
    *out = KvredbStats {
        file_size: std::fs::metadata(&db.path).map(|m| m.len()).unwrap_or(0),
        commits: db.commits.load(Ordering::Relaxed),
        durable_commits: db.durable_commits.load(Ordering::Relaxed),
        cache_size: db.cache_size,
        page_size: PAGE_SIZE,
    };
}

#[no_mangle]
pub extern "C" fn kvredb_version() -> *const c_char {
    const VERSION: &str = concat!(env!("KVREDB_REDB_VERSION"), "\0");
    VERSION.as_ptr() as *const c_char
}
