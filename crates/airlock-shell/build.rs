//! Embeds every `rules/shell/*.toml` pack into the binary, sorted by name, so rule packs stay
//! data files and need no file system at run time.

use std::{env, fs, path::PathBuf};

fn main() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../rules/shell");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "toml"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    let mut out = String::from("[\n");
    for f in &files {
        println!("cargo:rerun-if-changed={}", f.display());
        let name = f
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        out.push_str(&format!(
            "    ({name:?}, include_str!({path:?})),\n",
            path = f.display().to_string()
        ));
    }
    out.push(']');
    let dest = PathBuf::from(env::var_os("OUT_DIR").unwrap_or_default()).join("packs.rs");
    if let Err(e) = fs::write(&dest, out) {
        panic!("cannot write {}: {e}", dest.display());
    }
}
