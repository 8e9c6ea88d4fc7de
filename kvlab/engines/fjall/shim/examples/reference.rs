//! The timed reference loop of fjall for benchmarks/vs_reference.py: fjall's documented paths in plain Rust, no
//! kvlab code, with the protocol of benchmarks/reference/ref_common.h: fillseq (keys 0..num-1, one write transaction
//! of 1000 puts each, PersistMode::Buffer as kvlab's sync off, 100-byte values), then readrandom (uniform keys,
//! splitmix64 and a multiply-high draw, 16 decimal digits) on THREADS threads, for READS per thread or "<seconds>s";
//! one JSON line a phase.  Every value is the same 100 bytes, as in the C references.
//!
//!     ref_fjall DBDIR NUM READS_OR_SECONDS THREADS [--cache-size BYTES] [--phases fillseq,readrandom] [--seed N]
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Barrier;
use std::time::{Duration, Instant};

use fjall::{Keyspace, KeyspaceCreateOptions, PersistMode, SingleWriterTxDatabase};

const BATCH: u64 = 1000;
const VALUE: usize = 100;

fn splitmix(s: &mut u64) -> u64 {
    *s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *s;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn below(s: &mut u64, n: u64) -> u64 {
    ((splitmix(s) as u128 * n as u128) >> 64) as u64
}

fn make_key(key: &mut [u8; 16], mut i: u64) {
    for b in key.iter_mut().rev() {
        *b = b'0' + (i % 10) as u8;
        i /= 10;
    }
}

fn report(workload: &str, threads: usize, ops: u64, secs: f64, found: u64, config: &str) {
    println!(
        "{{\"engine\": \"fjall\", \"workload\": \"{workload}\", \"threads\": {threads}, \"ops\": {ops}, \
         \"seconds\": {secs:.6}, \"ops_per_sec\": {:.1}, \"found\": {found}, \"config\": \"{config}\"}}",
        ops as f64 / secs
    );
}

fn read_thread(ks: &Keyspace, num: u64, reads: u64, stop: &AtomicBool, seed: u64, w: u64, go: &Barrier) -> (u64, u64) {
    let (mut rng, mut key, mut ops, mut found) = (
        seed.wrapping_mul(0x1_0000_01b3).wrapping_add(w + 1),
        [0u8; 16],
        0u64,
        0u64,
    );
    go.wait();
    while (reads == 0 && !stop.load(Ordering::Relaxed)) || (reads > 0 && ops < reads) {
        make_key(&mut key, below(&mut rng, num));
        if let Some(v) = ks.get(key).expect("get") {
            black_box(&v[..]);
            found += 1;
        }
        ops += 1;
    }
    (ops, found)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 5 {
        eprintln!("usage: ref_fjall DBDIR NUM READS_OR_SECONDS THREADS [--cache-size B] [--phases P] [--seed N]");
        std::process::exit(2);
    }
    let (dir, num): (&str, u64) = (&args[1], args[2].parse().expect("NUM"));
    let threads: usize = args[4].parse().expect("THREADS");
    let (seconds, reads) = match args[3].strip_suffix('s') {
        Some(s) => (s.parse::<f64>().expect("SECONDS"), 0u64),
        None => (0.0, args[3].parse().expect("READS")),
    };
    let (mut cache, mut seed, mut phases) = (0u64, 1u64, "fillseq,readrandom".to_string());
    let mut i = 5;
    while i + 1 < args.len() {
        match args[i].as_str() {
            "--cache-size" => cache = args[i + 1].parse().expect("--cache-size"),
            "--seed" => seed = args[i + 1].parse().expect("--seed"),
            "--phases" => phases = args[i + 1].clone(),
            "--object" => {} // the C references' table name; fjall's database is the directory
            other => panic!("option {other} is unknown"),
        }
        i += 2;
    }
    let mut b = SingleWriterTxDatabase::builder(dir);
    if cache > 0 {
        b = b.cache_size(cache);
    }
    let db = b.open().expect("open");
    let tks = db.keyspace("kv", KeyspaceCreateOptions::default).expect("keyspace");
    let config = format!("fjall cache={cache} persist=Buffer");
    if phases.contains("fillseq") {
        let mut value = [0u8; VALUE];
        let mut vs = seed;
        for b in value.iter_mut().take(VALUE / 2) {
            *b = b' ' + below(&mut vs, 95) as u8;
        }
        value.copy_within(0..VALUE / 2, VALUE / 2);
        let (t0, mut key) = (Instant::now(), [0u8; 16]);
        let mut first = 0;
        while first < num {
            let mut tx = db.write_tx().durability(Some(PersistMode::Buffer));
            for j in first..(first + BATCH).min(num) {
                make_key(&mut key, j);
                tx.insert(&tks, key, value);
            }
            tx.commit().expect("commit");
            first += BATCH;
        }
        report("fillseq", 1, num, t0.elapsed().as_secs_f64(), 0, &config);
    }
    if phases.contains("readrandom") {
        let ks = tks.inner();
        let (stop, go) = (AtomicBool::new(false), Barrier::new(threads + 1));
        let (t0, got) = std::thread::scope(|s| {
            let handles: Vec<_> = (0..threads)
                .map(|w| {
                    let (stop, go) = (&stop, &go);
                    s.spawn(move || read_thread(ks, num, reads, stop, seed, w as u64, go))
                })
                .collect();
            go.wait();
            let t0 = Instant::now();
            if reads == 0 {
                std::thread::sleep(Duration::from_secs_f64(seconds));
                stop.store(true, Ordering::Relaxed);
            }
            (
                t0,
                handles
                    .into_iter()
                    .map(|h| h.join().expect("reader"))
                    .collect::<Vec<_>>(),
            )
        });
        let secs = t0.elapsed().as_secs_f64();
        let (ops, found) = got.iter().fold((0, 0), |(o, f), (a, b)| (o + a, f + b));
        report("readrandom", threads, ops, secs, found, &config);
    }
}
