//! The Rust side of benchmarks/shim_crossing.py for fjall: gets on a database kvlab loaded, made as a Rust program
//! makes them, with no kvlab code and no extern "C" call: Keyspace::get on the keyspace, the value read in place.
//! `one_get` is what callgrind counts (--toggle-collect), so the key's making and the loop are left out as they are
//! on kvlab's side (fj_get is counted there).
//!
//!     reference_gets DB_DIR NUM GETS     (keys: kvlab's, 16 decimal digits, indices below NUM)
use std::hint::black_box;
use std::io::Write;

use fjall::{Keyspace, KeyspaceCreateOptions, SingleWriterTxDatabase};

#[inline(never)]
fn one_get(ks: &Keyspace, key: &[u8]) -> bool {
    match ks.get(key).expect("get") {
        Some(value) => {
            black_box(&value[..]);
            true
        }
        None => false,
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (num, gets): (u64, u64) = (args[2].parse().expect("NUM"), args[3].parse().expect("GETS"));
    let db = SingleWriterTxDatabase::builder(&args[1]).open().expect("open");
    let ks = db.keyspace("kv", KeyspaceCreateOptions::default).expect("keyspace");
    let ks = ks.inner();
    let (mut rng, mut found, mut key) = (0x9E37_79B9_7F4A_7C15_u64, 0_u64, [0_u8; 16]);
    for _ in 0..gets {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        write!(&mut key[..], "{:016}", rng % num).expect("key");
        found += one_get(ks, &key) as u64;
    }
    println!("{found} of {gets} found");
}
