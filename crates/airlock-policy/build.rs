//! Converts the built-in layer (`rules/policy/builtin.toml`) to JSON at build time. Every hook
//! process loads the built-in layer; parsing its TOML took ~0.4M of the ~1.7M instructions of a
//! whole hook call, and the same content as JSON parses in a fraction of that. The TOML text is
//! still embedded (for `airlock policy`, tests and the hash check): a test proves both give the
//! same parsed file. A built-in layer that is not valid TOML fails the build.

use std::{env, fs, path::PathBuf};

fn main() {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../rules/policy/builtin.toml");
    println!("cargo:rerun-if-changed={}", src.display());
    let text = match fs::read_to_string(&src) {
        Ok(t) => t,
        Err(e) => fail(&format!("cannot read {}: {e}", src.display())),
    };
    let value: toml::Value = match toml::from_str(&text) {
        Ok(v) => v,
        Err(e) => fail(&format!("{} is not valid TOML: {e}", src.display())),
    };
    let json = match serde_json::to_string(&value) {
        Ok(j) => j,
        Err(e) => fail(&format!("cannot convert {} to JSON: {e}", src.display())),
    };
    let out = PathBuf::from(env::var("OUT_DIR").unwrap_or_else(|_| fail("OUT_DIR is not set")));
    if let Err(e) = fs::write(out.join("builtin.json"), json) {
        fail(&format!("cannot write builtin.json: {e}"));
    }
}

fn fail(message: &str) -> ! {
    eprintln!("airlock-policy build: {message}");
    std::process::exit(1)
}
