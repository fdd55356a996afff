//! One decision as every surface makes it (policy verdict, then a grant for an ask below tier
//! 4): the logic lives in `airlock-confirm`, so the CLI, the hook and the daemon's broker decide
//! the same way.

pub use airlock_confirm::decide::decide;
