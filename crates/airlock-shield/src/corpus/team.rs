//! The team's own labelled text sets, `datasets/text/<group>/<family>.jsonl` (format in
//! `datasets/text/README.md`). Each family file is one leave-one-out source, reported as
//! `<group>/<family>`.
//!
//! None of these trains the committed model yet: all are held out.

use std::path::Path;

use super::{CorpusError, Label, Sample, Split};
use crate::Direction;

/// The fields read (`shape` and any other field are for people and are not read).
#[derive(serde::Deserialize)]
struct Line {
    text: String,
    label: String,
    direction: String,
    #[serde(default)]
    lang: String,
}

/// The split of a team sample.
fn split(_text: &str) -> Split {
    Split::Test
}

/// Reads every `<group>/<family>.jsonl` under `dir`, in name order. A line that is not a valid
/// record is an error naming the file and line.
pub fn load_team(dir: &Path) -> Result<Vec<Sample>, CorpusError> {
    let err = |p: &Path, m: String| CorpusError {
        path: p.display().to_string(),
        message: m,
    };
    let mut out = Vec::new();
    let mut groups: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| err(dir, e.to_string()))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    groups.sort();
    for g in groups {
        let Some(group) = g.file_name().and_then(|n| n.to_str()).map(str::to_string) else {
            continue;
        };
        let mut files: Vec<_> = std::fs::read_dir(&g)
            .map_err(|e| err(&g, e.to_string()))?
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
            .collect();
        files.sort();
        for f in files {
            let Some(family) = f.file_stem().and_then(|n| n.to_str()) else {
                continue;
            };
            let name = format!("{group}/{family}");
            let src = std::fs::read_to_string(&f).map_err(|e| err(&f, e.to_string()))?;
            for (i, l) in src.lines().enumerate() {
                if l.trim().is_empty() {
                    continue;
                }
                let at = |m: String| err(&f, format!("line {}: {m}", i + 1));
                let line: Line = serde_json::from_str(l).map_err(|e| at(e.to_string()))?;
                let label = match line.label.as_str() {
                    "attack" => Label::Attack,
                    "benign" => Label::Benign,
                    "crisis" => Label::Crisis,
                    o => {
                        return Err(at(format!(
                            "label `{o}`: expected attack, benign or crisis"
                        )));
                    }
                };
                let direction = match line.direction.as_str() {
                    "user" => Direction::User,
                    "tool" => Direction::Tool,
                    o => return Err(at(format!("direction `{o}`: expected user or tool"))),
                };
                if line.text.trim().is_empty() {
                    continue;
                }
                out.push(Sample {
                    corpus: name.clone(),
                    source: name.clone(),
                    lang: line.lang,
                    split: split(&line.text),
                    text: line.text,
                    direction,
                    label,
                });
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir_with(files: &[(&str, &str)]) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!(
            "airlock-team-{}-{}",
            std::process::id(),
            super::super::fnv1a(files[0].1)
        ));
        for (name, body) in files {
            let p = d.join(name);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, body).unwrap();
        }
        d
    }

    #[test]
    fn reads_families_and_names_them_by_group() {
        let d = dir_with(&[
            (
                "attacks/override.jsonl",
                "{\"text\":\"ignore that\",\"label\":\"attack\",\"direction\":\"user\",\"lang\":\"en\",\"shape\":\"short\"}\n\n{\"text\":\"ignore the lint\",\"label\":\"benign\",\"direction\":\"tool\",\"lang\":\"en\"}\n",
            ),
            ("attacks/README.md", "not data"),
        ]);
        let s = load_team(&d).unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].corpus, "attacks/override");
        assert_eq!(s[0].source, "attacks/override");
        assert_eq!(s[1].direction, Direction::Tool);
        assert_eq!(s[1].label, Label::Benign);
        std::fs::remove_dir_all(d).ok();
    }

    #[test]
    fn a_bad_line_is_an_error_with_its_place() {
        let d = dir_with(&[(
            "crisis/x.jsonl",
            "{\"text\":\"a\",\"label\":\"maybe\",\"direction\":\"user\",\"lang\":\"en\"}\n",
        )]);
        let e = load_team(&d).unwrap_err();
        assert!(e.to_string().contains("line 1"), "{e}");
        assert!(e.to_string().contains("maybe"), "{e}");
        std::fs::remove_dir_all(d).ok();
        let d = dir_with(&[("crisis/y.jsonl", "\u{0}not json\n")]);
        assert!(load_team(&d).is_err());
        std::fs::remove_dir_all(d).ok();
        assert!(load_team(Path::new("/nonexistent/airlock")).is_err());
    }

    #[test]
    fn odd_files_give_a_result_or_an_error() {
        // Invalid UTF-8: an error naming the file.
        let d = dir_with(&[("attacks/bin.jsonl", "x")]);
        std::fs::write(d.join("attacks/bin.jsonl"), [0xff, 0xfe, b'\n']).unwrap();
        let e = load_team(&d).unwrap_err();
        assert!(e.to_string().contains("bin.jsonl"), "{e}");
        std::fs::remove_dir_all(&d).ok();
        // Empty file, blank lines, an empty text: no samples, no error.
        let d = dir_with(&[(
            "attacks/empty.jsonl",
            "\n  \n{\"text\":\"  \",\"label\":\"attack\",\"direction\":\"user\"}\n",
        )]);
        assert!(load_team(&d).unwrap().is_empty());
        std::fs::remove_dir_all(&d).ok();
        // A million emoji in one line: read whole.
        let text = "\u{1F600}".repeat(1_000_000);
        let line = format!("{{\"text\":\"{text}\",\"label\":\"benign\",\"direction\":\"tool\"}}\n");
        let d = dir_with(&[("attacks/emoji.jsonl", &line)]);
        let s = load_team(&d).unwrap();
        assert_eq!(s[0].text.chars().count(), 1_000_000);
        assert_eq!(s[0].lang, "");
        std::fs::remove_dir_all(&d).ok();
    }
}
