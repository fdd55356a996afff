//! airlock-gateway (being built for issue 6).
