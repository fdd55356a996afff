//! What to do when someone may be in danger: the configured crisis resources and the advice to
//! route the conversation to a trusted model. Configuration, not code: the defaults live in
//! `rules/text/crisis_response.toml` and an operator can load their own for their country.

use serde::{Deserialize, Serialize};

use crate::Error;

/// The default response, shipped with airlock.
pub const DEFAULT: &str = include_str!("../../../rules/text/crisis_response.toml");

/// One place a person can reach for help.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Resource {
    pub name: String,
    /// Where it serves (`US`, `GB`, `any`…).
    pub region: String,
    /// How to reach it (a number to call or text, a web address).
    pub contact: String,
}

/// The configured crisis response, attached to every crisis verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CrisisResponse {
    /// A short message for the person, shown before the resources.
    pub message: String,
    #[serde(rename = "resource")]
    pub resources: Vec<Resource>,
    /// Recommend answering this conversation with one of `trusted_models`.
    pub route_to_trusted_model: bool,
    /// Models the operator trusts to answer a person in crisis (empty until configured).
    #[serde(default)]
    pub trusted_models: Vec<String>,
}

impl CrisisResponse {
    /// Parses a crisis-response file.
    pub fn from_toml(src: &str) -> Result<CrisisResponse, Error> {
        let r: CrisisResponse = toml::from_str(src).map_err(|e| Error::Config(e.to_string()))?;
        if r.resources.is_empty() {
            return Err(Error::Config(
                "a crisis response needs at least one [[resource]]".into(),
            ));
        }
        Ok(r)
    }

    /// The shipped default.
    pub fn builtin() -> Result<CrisisResponse, Error> {
        CrisisResponse::from_toml(DEFAULT)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_parses_and_is_not_one_country() {
        let r = CrisisResponse::builtin().unwrap();
        assert!(r.resources.iter().any(|x| x.contact.contains("988")));
        assert!(r.resources.iter().any(|x| x.region != "US"));
        assert!(r.route_to_trusted_model);
    }

    #[test]
    fn empty_resources_are_rejected() {
        assert!(
            CrisisResponse::from_toml(
                "message = \"x\"\nroute_to_trusted_model = true\nresource = []"
            )
            .is_err()
        );
    }
}
