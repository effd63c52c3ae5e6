//! Embeds every `hardware-profiles/*.toml` in the binary, so `tco-sim` runs from any directory.
//! Adding a profile file is enough: this script lists the folder at build time.

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    let dir = Path::new("hardware-profiles");
    println!("cargo::rerun-if-changed=hardware-profiles");
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("hardware-profiles/ is missing")
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .filter_map(|p| p.file_stem().and_then(|s| s.to_str()).map(String::from))
        .collect();
    names.sort();
    let mut code = String::from(
        "/// (name, TOML text) of every shipped profile, sorted by name.\npub static PROFILES: &[(&str, &str)] = &[\n",
    );
    for n in &names {
        println!("cargo::rerun-if-changed=hardware-profiles/{n}.toml");
        writeln!(
            code,
            "    ({n:?}, include_str!(concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/hardware-profiles/{n}.toml\"))),"
        )
        .unwrap();
    }
    code.push_str("];\n");
    let out = Path::new(&std::env::var("OUT_DIR").unwrap()).join("embedded_profiles.rs");
    std::fs::write(out, code).unwrap();
}
