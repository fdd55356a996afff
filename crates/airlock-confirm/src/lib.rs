//! airlock-confirm (being built for issue 6).
