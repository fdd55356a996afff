//! Where the `airlock` commands find a running `airlock serve`: the client itself is
//! `airlock-client` (shared with `airlock-lab`); this module adds what a person's command needs
//! (a URL and an approver token).

use std::path::Path;

use anyhow::{Result, bail};

pub use airlock_client::{
    AGENT_TOKEN_FILE, BlockingClient, Client, DaemonRefusal, Endpoint, SERVE_FILE, ServeInfo,
    init_tls,
};

/// The endpoint for a person's command (the daemon of `data_dir` unless `url` says): a URL and
/// a token are both needed.
pub fn person_endpoint(
    data_dir: &Path,
    url: Option<String>,
    token: Option<String>,
) -> Result<Endpoint> {
    let Some(ep) = Endpoint::discover(data_dir, url, token, false) else {
        bail!(
            "no airlock daemon found: start one with `airlock serve`, or pass --url (or set AIRLOCK_URL)"
        );
    };
    if ep.token.is_none() {
        bail!(
            "an approver token is needed: pass --token or set AIRLOCK_TOKEN (create one with `airlock token create --role approver`)"
        );
    }
    Ok(ep)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_hook_looks_for_the_daemon_where_airlock_keeps_its_data() {
        assert_eq!(
            airlock_hook::endpoint::default_data_dir(),
            airlock_store::default_data_dir()
        );
    }
}
