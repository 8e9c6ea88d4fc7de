//! The Rust side of benchmarks/redb_crossing.py: gets on a database kvlab loaded, made as a Rust program makes
//! them, with no kvlab code and no extern "C" call: ReadOnlyTable::get, then the value read in place.  `one_get`
//! is what callgrind counts (--toggle-collect), so the key's making and the loop are left out as they are on
//! kvlab's side (rd_get is counted there).
//!
//!     reference_gets DATA.REDB NUM GETS     (keys: kvlab's, 16 decimal digits, indices below NUM)
use std::hint::black_box;
use std::io::Write;

use redb::{Database, ReadOnlyTable, ReadableDatabase, TableDefinition};

const TABLE: TableDefinition<&[u8], &[u8]> = TableDefinition::new("kv");

#[inline(never)]
fn one_get(table: &ReadOnlyTable<&'static [u8], &'static [u8]>, key: &[u8]) -> bool {
    match table.get(key).expect("get") {
        Some(value) => {
            black_box(value.value());
            true
        }
        None => false,
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (num, gets): (u64, u64) = (args[2].parse().expect("NUM"), args[3].parse().expect("GETS"));
    let db = Database::builder().open(&args[1]).expect("open");
    let table = db.begin_read().expect("read").open_table(TABLE).expect("table");
    let (mut rng, mut found, mut key) = (0x9E37_79B9_7F4A_7C15_u64, 0_u64, [0_u8; 16]);
    for _ in 0..gets {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        write!(&mut key[..], "{:016}", rng % num).expect("key");
        found += one_get(&table, &key) as u64;
    }
    println!("{found} of {gets} found");
}
