//! The crate's randomised comparison tests draw their texts from this small deterministic
//! generator (xorshift64), so a failure reproduces on every run and machine.

/// Successive xorshift64 values from `seed` (which must not be zero).
pub(crate) fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
    move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    }
}
