//! The fjall version the shim is built with, as its Cargo.lock pins it: kvfjall_version() reports it.
fn main() {
    let lock = std::fs::read_to_string("Cargo.lock").expect("Cargo.lock beside Cargo.toml");
    let mut lines = lock.lines();
    let version = loop {
        match lines.next() {
            Some("name = \"fjall\"") => break lines.next().and_then(|l| l.strip_prefix("version = \"")),
            Some(_) => continue,
            None => break None,
        }
    };
    let version = version.and_then(|v| v.strip_suffix('"')).expect("fjall in Cargo.lock");
    println!("cargo:rustc-env=KVFJALL_FJALL_VERSION={version}");
    println!("cargo:rerun-if-changed=Cargo.lock");
}
