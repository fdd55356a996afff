//! Sensitive paths (filled in by the hook work).
