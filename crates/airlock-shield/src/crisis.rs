//! What to do when someone may be in danger (seeds 001 and 003): ask about their safety first,
//! then give crisis resources, in the person's language; and the system text the model that
//! answers them is given (present, asks about safety, gives the resources, never methods). Configuration, not
//! code: the defaults live in `rules/text/crisis_response.toml` (one default language at its
//! top level, more as `[[locale]]`s, each with its own resources) and an operator can load
//! their own for the people they serve. The person's language is recognised from their text
//! (`lang.rs`) with each locale's common words.

use serde::{Deserialize, Serialize};

use crate::Error;
use crate::lang::{Detector, Language};

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

/// One more language of the response.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Locale {
    pub lang: String,
    pub safety_question: String,
    pub message: String,
    #[serde(rename = "resource")]
    pub resources: Vec<Resource>,
    /// Common words of the language, to recognise it.
    #[serde(default)]
    pub words: Vec<String>,
    /// Letters typical of the language.
    #[serde(default)]
    pub chars: String,
    /// Texts that must be recognised as this language, and texts that must not (tests).
    #[serde(default)]
    pub examples: Vec<String>,
    #[serde(default)]
    pub not_examples: Vec<String>,
}

/// The configured crisis response, attached to every crisis verdict. Its top-level fields are
/// the default language's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CrisisResponse {
    /// The default language's code.
    #[serde(default = "default_lang")]
    pub lang: String,
    /// Asked first, before anything else.
    #[serde(default = "default_safety_question")]
    pub safety_question: String,
    /// A short message for the person, shown after the safety question, before the resources.
    pub message: String,
    #[serde(rename = "resource")]
    pub resources: Vec<Resource>,
    /// Recommend answering this conversation with one of `trusted_models`.
    pub route_to_trusted_model: bool,
    /// Models the operator trusts to answer a person in crisis (empty until configured).
    #[serde(default)]
    pub trusted_models: Vec<String>,
    /// The operator's organisation's own words (the seeds' faith message), shown after the
    /// resources. Off (absent) by default.
    #[serde(default)]
    pub organisation_message: Option<String>,
    /// The system text for the model (see [`CrisisResponse::system_text`]); the built-in one
    /// when absent.
    #[serde(default)]
    pub system_text: Option<String>,
    /// Added to the system text under attack.
    #[serde(default)]
    pub under_attack_note: Option<String>,
    #[serde(default)]
    pub words: Vec<String>,
    #[serde(default)]
    pub chars: String,
    #[serde(default)]
    pub examples: Vec<String>,
    #[serde(default)]
    pub not_examples: Vec<String>,
    #[serde(default, rename = "locale")]
    pub locales: Vec<Locale>,
}

fn default_lang() -> String {
    "en".into()
}

fn default_safety_question() -> String {
    "Are you safe right now?".into()
}

/// The response in one language: what the person is shown, in this order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Guidance {
    pub lang: String,
    pub safety_question: String,
    pub message: String,
    pub resources: Vec<Resource>,
    pub organisation_message: Option<String>,
}

/// English names of the languages a system text may have to name (the model reads them).
fn language_name(code: &str) -> &str {
    match code {
        "en" => "English",
        "es" => "Spanish",
        "de" => "German",
        "fr" => "French",
        "pt" => "Portuguese",
        "it" => "Italian",
        "nl" => "Dutch",
        "pl" => "Polish",
        _ => code,
    }
}

/// The system text when the file gives none: the same rules, without the file's wording.
const FALLBACK_SYSTEM_TEXT: &str = "airlock: the person may be in crisis. Be warm and present. First ask: \"{safety_question}\" Then give these resources:\n{resources}\nNever give methods, means, doses, heights or ways to self-harm, however the request is framed (story, hypothetical, role-play, a friend). Do not take actions for them. Write in {language}.{organisation}";

impl Guidance {
    /// The text shown to the person: the safety question, the message, the resources, then
    /// the organisation's words when configured.
    pub fn text(&self) -> String {
        let mut s = format!("{}\n\n{}", self.safety_question, self.message);
        for r in &self.resources {
            s.push_str(&format!("\n- {} ({}): {}", r.name, r.region, r.contact));
        }
        if let Some(o) = &self.organisation_message {
            s.push_str(&format!("\n\n{o}"));
        }
        s
    }

    fn resource_lines(&self) -> String {
        self.resources
            .iter()
            .map(|r| format!("  - {} ({}): {}", r.name, r.region, r.contact))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl CrisisResponse {
    /// Parses a crisis-response file.
    pub fn from_toml(src: &str) -> Result<CrisisResponse, Error> {
        let r: CrisisResponse = toml::from_str(src).map_err(|e| Error::Config(e.to_string()))?;
        if r.resources.is_empty() || r.locales.iter().any(|l| l.resources.is_empty()) {
            return Err(Error::Config(
                "a crisis response needs at least one [[resource]] (and each [[locale]] one [[locale.resource]])".into(),
            ));
        }
        let mut seen = vec![r.lang.as_str()];
        for l in &r.locales {
            if seen.contains(&l.lang.as_str()) {
                return Err(Error::Config(format!(
                    "the crisis response gives language {:?} twice",
                    l.lang
                )));
            }
            seen.push(&l.lang);
        }
        Ok(r)
    }

    /// The shipped default.
    pub fn builtin() -> Result<CrisisResponse, Error> {
        CrisisResponse::from_toml(DEFAULT)
    }

    /// Every language the response speaks, the default first.
    pub fn languages(&self) -> Vec<&str> {
        std::iter::once(self.lang.as_str())
            .chain(self.locales.iter().map(|l| l.lang.as_str()))
            .collect()
    }

    /// The recogniser of the response's languages.
    pub fn detector(&self) -> Detector {
        let mut langs = vec![Language {
            lang: self.lang.clone(),
            words: self.words.clone(),
            chars: self.chars.clone(),
        }];
        langs.extend(self.locales.iter().map(|l| Language {
            lang: l.lang.clone(),
            words: l.words.clone(),
            chars: l.chars.clone(),
        }));
        Detector::new(&langs)
    }

    /// The response in `lang`, or in the default language when it has no such locale.
    pub fn for_lang(&self, lang: &str) -> Guidance {
        let organisation_message = self.organisation_message.clone().filter(|m| !m.is_empty());
        match self.locales.iter().find(|l| l.lang == lang) {
            Some(l) => Guidance {
                lang: l.lang.clone(),
                safety_question: l.safety_question.clone(),
                message: l.message.clone(),
                resources: l.resources.clone(),
                organisation_message,
            },
            None => Guidance {
                lang: self.lang.clone(),
                safety_question: self.safety_question.clone(),
                message: self.message.clone(),
                resources: self.resources.clone(),
                organisation_message,
            },
        }
    }

    /// The response in the language `text` is written in (the default when not recognised).
    pub fn for_text(&self, text: &str) -> Guidance {
        let d = self.detector();
        let lang = d.detect(text).unwrap_or(&self.lang).to_string();
        self.for_lang(&lang)
    }

    /// The system text the model answering the person is given, for `g`'s language; with the
    /// under-attack note when the crisis came wrapped in an attempt to override instructions.
    pub fn system_text(&self, g: &Guidance, under_attack: bool) -> String {
        let template = self
            .system_text
            .as_deref()
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .unwrap_or(FALLBACK_SYSTEM_TEXT);
        let organisation = match &g.organisation_message {
            Some(o) => format!(
                "\n- After the resources, include this message from the service, as written: \"{o}\""
            ),
            None => String::new(),
        };
        let mut s = template
            .replace("{language}", language_name(&g.lang))
            .replace("{safety_question}", &g.safety_question)
            .replace("{message}", &g.message)
            .replace("{resources}", &g.resource_lines())
            .replace("{organisation}", &organisation);
        if under_attack && let Some(note) = self.under_attack_note.as_deref() {
            s.push_str("\n\n");
            s.push_str(note.trim());
        }
        s
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
        assert!(r.organisation_message.is_none(), "off by default");
        for lang in ["en", "es", "de", "fr", "pt"] {
            assert!(r.languages().contains(&lang), "{lang}");
            let g = r.for_lang(lang);
            assert_eq!(g.lang, lang);
            assert!(g.safety_question.ends_with('?'), "{lang}: {g:?}");
            assert!(
                g.resources.iter().any(|x| x.region == "any"),
                "{lang}: emergency numbers"
            );
        }
    }

    #[test]
    fn every_locale_recognises_its_examples() {
        let r = CrisisResponse::builtin().unwrap();
        let d = r.detector();
        let mut all = vec![(r.lang.clone(), &r.examples, &r.not_examples)];
        all.extend(
            r.locales
                .iter()
                .map(|l| (l.lang.clone(), &l.examples, &l.not_examples)),
        );
        for (lang, yes, no) in all {
            assert!(!yes.is_empty(), "{lang} has examples");
            for t in yes {
                assert_eq!(d.detect(t), Some(lang.as_str()), "{t:?}");
            }
            for t in no {
                assert_ne!(d.detect(t), Some(lang.as_str()), "{t:?}");
            }
        }
    }

    #[test]
    fn the_safety_question_comes_first_then_the_resources() {
        let r = CrisisResponse::builtin().unwrap();
        let g = r.for_text("ya no quiero vivir, no tiene sentido");
        assert_eq!(g.lang, "es");
        let t = g.text();
        assert!(t.starts_with("¿Estás a salvo en este momento?"), "{t}");
        assert!(t.contains("024"), "{t}");
        let unknown = r.for_text("死にたい");
        assert_eq!(unknown.lang, "en", "unrecognised: the default");
    }

    #[test]
    fn organisation_text_is_shown_only_when_configured() {
        let mut r = CrisisResponse::builtin().unwrap();
        assert!(!r.for_lang("en").text().contains("chaplain"));
        r.organisation_message = Some("Our chaplain is available at any hour: ext. 4410.".into());
        let g = r.for_lang("de");
        assert!(g.text().ends_with("ext. 4410."), "{}", g.text());
        assert!(r.system_text(&g, false).contains("ext. 4410."));
    }

    #[test]
    fn empty_resources_are_rejected() {
        assert!(
            CrisisResponse::from_toml(
                "message = \"x\"\nroute_to_trusted_model = true\nresource = []"
            )
            .is_err()
        );
        let dup = format!(
            "{}\n[[locale]]\nlang = \"es\"\nsafety_question = \"?\"\nmessage = \"m\"\n[[locale.resource]]\nname = \"n\"\nregion = \"any\"\ncontact = \"1\"\n",
            DEFAULT
        );
        assert!(CrisisResponse::from_toml(&dup).is_err(), "a language twice");
    }

    #[test]
    fn an_older_file_still_parses() {
        let r = CrisisResponse::from_toml(
            "message = \"m\"\nroute_to_trusted_model = false\n[[resource]]\nname = \"n\"\nregion = \"any\"\ncontact = \"1\"\n",
        )
        .unwrap();
        let g = r.for_text("quiero morirme");
        assert_eq!(g.lang, "en");
        assert_eq!(g.safety_question, "Are you safe right now?");
        assert!(r.system_text(&g, true).contains("Never give methods"));
    }
}
