//! The redb version the shim is built with, as its Cargo.lock pins it: kvredb_version() reports it.
fn main() {
    let lock = std::fs::read_to_string("Cargo.lock").expect("Cargo.lock beside Cargo.toml");
    let mut lines = lock.lines();
    let version = loop {
        match lines.next() {
            Some("name = \"redb\"") => break lines.next().and_then(|l| l.strip_prefix("version = \"")),
            Some(_) => continue,
            None => break None,
        }
    };
    let version = version.and_then(|v| v.strip_suffix('"')).expect("redb in Cargo.lock");
    println!("cargo:rustc-env=KVREDB_REDB_VERSION={version}");
    println!("cargo:rerun-if-changed=Cargo.lock");
}
