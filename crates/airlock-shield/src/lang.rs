//! Which language a person writes in, from the text itself: the crisis response answers in the
//! person's language. Each candidate language brings a list of its common words and a few of
//! its letters (data, in `rules/text/crisis_response.toml`); a word counts for every language
//! that lists it, divided among them, so words languages share (`que`, `de`, `no`) weigh
//! little. The language with the highest score wins when it is clearly ahead; otherwise there
//! is no answer and the caller falls back to its default. Short texts carry little evidence:
//! one distinctive word is enough, a tie is not.

use std::collections::HashMap;

/// One language a [`Detector`] can recognise.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Language {
    /// Its code (`en`, `es`, …).
    pub lang: String,
    /// Common words, lower case.
    pub words: Vec<String>,
    /// Letters typical of it (`ñ¿¡`, `ß`, …).
    pub chars: String,
}

/// Recognises the languages it was built from.
#[derive(Debug, Clone, Default)]
pub struct Detector {
    langs: Vec<String>,
    /// Per word: (language index, weight) for each language listing it.
    words: HashMap<String, Vec<(usize, f32)>>,
    chars: HashMap<char, Vec<(usize, f32)>>,
}

/// A typical letter counts this much of a word (a text of accents alone stays uncertain).
const CHAR_WEIGHT: f32 = 0.5;
/// Only this much of a long text is read: the language shows in its first few hundred words.
const MAX_BYTES: usize = 4096;

impl Detector {
    pub fn new(languages: &[Language]) -> Detector {
        let mut words: HashMap<String, Vec<(usize, f32)>> = HashMap::new();
        let mut chars: HashMap<char, Vec<(usize, f32)>> = HashMap::new();
        for (i, l) in languages.iter().enumerate() {
            for w in &l.words {
                let e = words.entry(w.to_lowercase()).or_default();
                if !e.iter().any(|(j, _)| *j == i) {
                    e.push((i, 1.0));
                }
            }
            for c in l.chars.chars().flat_map(char::to_lowercase) {
                let e = chars.entry(c).or_default();
                if !e.iter().any(|(j, _)| *j == i) {
                    e.push((i, CHAR_WEIGHT));
                }
            }
        }
        for list in words.values_mut().chain(chars.values_mut()) {
            let n = list.len() as f32;
            for (_, w) in list.iter_mut() {
                *w /= n;
            }
        }
        Detector {
            langs: languages.iter().map(|l| l.lang.clone()).collect(),
            words,
            chars,
        }
    }

    /// The language of `text`, if one is clearly ahead.
    pub fn detect(&self, text: &str) -> Option<&str> {
        let mut cut = text.len().min(MAX_BYTES);
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        let text = text[..cut].to_lowercase();
        let mut score = vec![0f32; self.langs.len()];
        for word in text
            .split(|c: char| !c.is_alphabetic())
            .filter(|w| !w.is_empty())
        {
            for (i, w) in self.words.get(word).into_iter().flatten() {
                score[*i] += w;
            }
        }
        for c in text.chars() {
            for (i, w) in self.chars.get(&c).into_iter().flatten() {
                score[*i] += w;
            }
        }
        let mut order: Vec<usize> = (0..score.len()).collect();
        order.sort_by(|a, b| score[*b].total_cmp(&score[*a]));
        let best = *order.first()?;
        let second = order.get(1).map_or(0.0, |i| score[*i]);
        // Ahead by at least half a distinctive word, and not on shared words alone.
        (score[best] >= 0.75 && score[best] - second >= 0.5).then(|| self.langs[best].as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lang(code: &str, words: &[&str], chars: &str) -> Language {
        Language {
            lang: code.into(),
            words: words.iter().map(|w| w.to_string()).collect(),
            chars: chars.into(),
        }
    }

    #[test]
    fn shared_words_weigh_less_and_ties_have_no_answer() {
        let d = Detector::new(&[
            lang("es", &["que", "de", "quiero", "yo"], "ñ"),
            lang("pt", &["que", "de", "quero", "eu"], "ã"),
        ]);
        assert_eq!(d.detect("yo quiero"), Some("es"));
        assert_eq!(d.detect("eu quero"), Some("pt"));
        assert_eq!(d.detect("que de"), None, "shared words alone");
        assert_eq!(d.detect("hello there"), None);
        assert_eq!(d.detect(""), None);
        assert_eq!(d.detect("YO QUIERO"), Some("es"), "case does not matter");
    }

    #[test]
    fn long_and_odd_input_is_bounded() {
        let d = Detector::new(&[lang("en", &["the"], "")]);
        let long = "the ".repeat(100_000) + "é";
        assert_eq!(d.detect(&long), Some("en"));
        assert_eq!(d.detect("\u{0}\u{feff}🙂"), None);
    }

    proptest::proptest! {
        /// Any text gets an answer among the languages given, or none; never a panic.
        #[test]
        fn any_text_is_one_of_the_languages_or_none(text in "\\PC{0,400}") {
            let d = crate::CrisisResponse::builtin().unwrap().detector();
            if let Some(l) = d.detect(&text) {
                proptest::prop_assert!(["en", "es", "de", "fr", "pt", "it"].contains(&l));
            }
        }
    }
}
