//! Link settings of the `airlock` binary. Every `airlock run` (and every hook call that does
//! not use the lean hook) starts this large executable, and most of its start-up was the
//! dynamic loader applying some 170,000 relative relocations read from a table of several
//! megabytes (`LD_DEBUG=statistics`: 96% of the loader's time). `-z pack-relative-relocs`
//! stores them as a compact bitmap (DT_RELR, applied by glibc 2.36 and later), which the loader
//! walks in a fraction of the time. Only this crate's binaries are linked so: no other crate is
//! rebuilt. `AIRLOCK_LINK_RELR=0` leaves it out (a linker or C library older than that).

fn main() {
    println!("cargo:rerun-if-env-changed=AIRLOCK_LINK_RELR");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    let wanted = !matches!(std::env::var("AIRLOCK_LINK_RELR").as_deref(), Ok("0"));
    if os == "linux" && env == "gnu" && wanted {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}
