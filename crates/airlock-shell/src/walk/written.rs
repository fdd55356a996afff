//! Files written and then used within one line: what literal text a command writes, what a
//! downloader saves, and running such a file (its content walked as the script it is).

use super::*;

impl Walker<'_> {
    /// Remembers what a command writes to files when that is known literal text: the output of
    /// a literal `echo`/`printf`/`cat <<EOF` sent to a redirect, or what `tee FILE` is fed.
    pub(super) fn note_written(
        &mut self,
        argv: &[String],
        feed: Option<&str>,
        targets: Vec<String>,
    ) {
        let Some(prog) = argv.first() else { return };
        let name = unwrap::program_name(prog);
        let mut add = |path: &str, content: &str| {
            if self.written.len() < 16 {
                self.written
                    .push((written_key(path).to_string(), content.to_string()));
            }
        };
        if let Some(content) = literal_output(argv, feed) {
            for t in &targets {
                add(t, &content);
            }
        } else {
            for t in &targets {
                if self.opaque.len() < 16 {
                    self.opaque.push(written_key(t).to_string());
                }
            }
        }
        // `cp /bin/rm /tmp/x`, `ln -s /bin/rm d`, `install -m755 /bin/rm x`: the new name runs
        // the same program
        if matches!(&*name, "cp" | "mv" | "ln" | "install" | "rsync")
            && let [.., src, dest] = argv
                .iter()
                .skip(1)
                .filter(|a| !a.starts_with('-'))
                .collect::<Vec<_>>()
                .as_slice()
        {
            let dest = if dest.ends_with('/') {
                format!("{dest}{}", unwrap::base(src))
            } else {
                dest.to_string()
            };
            let src = which_target(src).unwrap_or(src);
            if self.aliases.len() < 16 {
                self.aliases.push((
                    written_key(&dest).to_string(),
                    unwrap::program_name(src).into_owned(),
                ));
            }
        }
        if matches!(&*name, "tee" | "dd" | "sponge" | "truncate") {
            for t in crate::dest::write_destinations(&name, argv) {
                if self.opaque.len() < 16 {
                    self.opaque.push(written_key(t).to_string());
                }
            }
        }
        if name == "tee"
            && let Some(content) = feed.filter(|f| !f.contains(['$', '`']))
        {
            for t in crate::dest::write_destinations(&name, argv) {
                add(t, content);
            }
        }
    }

    /// Remembers the files a downloader (`curl`, `wget`, …) saves, wherever it sits in `argv`
    /// (`sudo curl -o f URL`), including its standard output redirected to a file.
    pub(super) fn note_downloaded(&mut self, argv: &[String], targets: &[String]) {
        let Some(at) = argv.iter().take(8).position(|a| {
            let b = unwrap::base(a);
            is_downloader(b)
                || (b.bytes().any(|c| c == b'.' || c.is_ascii_uppercase())
                    && is_downloader(&unwrap::program_name(a)))
        }) else {
            return;
        };
        let fetch = &argv[at..];
        let text = canon::render(fetch);
        for f in download_outputs(fetch).iter().chain(targets) {
            if self.downloaded.len() < 16 && !f.is_empty() && f != "-" {
                self.downloaded
                    .push((written_key(f).to_string(), text.clone()));
            }
        }
    }

    /// A command that runs a file downloaded earlier in the line: the script of a shell or
    /// `source`, the program of an interpreter, or the command itself (`./install.sh`).
    pub(super) fn run_downloaded(&mut self, name: &str, argv: &[String], text: &str) {
        if self.downloaded.is_empty() {
            return;
        }
        let runs_file = matches!(name, "source" | ".")
            || unwrap::lang_of(name).is_some_and(|l| !matches!(l, Lang::Awk | Lang::Sed));
        let file = if runs_file {
            argv[1..].iter().find(|a| !a.starts_with('-'))
        } else {
            argv.first()
        };
        let Some(file) = file else { return };
        let key = written_key(file);
        let Some((_, fetch)) = self.downloaded.iter().find(|(k, _)| k == key).cloned() else {
            return;
        };
        // the same check as `FETCH | RUNNER` (plain HTTP, known hosts…)
        let runner = if runs_file {
            text.to_string()
        } else {
            "sh".to_string()
        };
        self.rule_hits(Target::Pipeline, &format!("{fetch} | {runner}"));
        self.engine(
            "download_run",
            ReasonCode::DynamicCode,
            (Decision::Ask, Tier::High, Severity::High),
            format!("`{}` runs a file downloaded earlier in the same line, so what runs is whatever the server sent; a person must look. Download it, read it, then run it in a separate step.", cut(text)),
            "Fetch the file yourself and read it before approving; saving a download and running it in one line is `curl | sh` in two steps.",
            text,
        );
    }

    /// Analyses a file written earlier in the line when this command runs it: as the script of
    /// a shell or `source`, the program of an interpreter, or the command itself (`./f.sh`).
    pub(super) fn run_written(&mut self, name: &str, argv: &[String], depth: usize) {
        self.run_opaque(name, argv);
        if self.written.is_empty() {
            return;
        }
        let lookup = |w: &Walker, p: &str| {
            let key = written_key(p);
            w.written
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, c)| c.clone())
        };
        let interpreter = if matches!(name, "source" | ".") {
            Some(Lang::Shell)
        } else {
            unwrap::lang_of(name).filter(|l| !matches!(l, Lang::Awk | Lang::Sed))
        };
        let (lang, content) = match interpreter {
            Some(lang) => match argv[1..].iter().find(|a| !a.starts_with('-')) {
                Some(file) => match lookup(self, file) {
                    Some(c) => (lang, c),
                    None => return,
                },
                None => return,
            },
            None => match lookup(self, &argv[0]) {
                // run directly: the first line says which interpreter
                Some(c) => {
                    let first = c.lines().next().unwrap_or("");
                    let lang = first
                        .strip_prefix("#!")
                        .and_then(|l| {
                            l.split_whitespace()
                                .map(unwrap::program_name)
                                .find(|n| n != "env" && !n.starts_with('-'))
                        })
                        .and_then(|n| unwrap::lang_of(&n))
                        .unwrap_or(Lang::Shell);
                    (lang, c)
                }
                None => return,
            },
        };
        if lang == Lang::Shell {
            self.walk_script(&content, depth + 1);
        } else {
            self.walk_code(lang, &content, depth + 1);
        }
    }
}

/// Programs that fetch a URL into a file.
fn is_downloader(name: &str) -> bool {
    matches!(
        name,
        "curl" | "wget" | "wget2" | "aria2c" | "fetch" | "http" | "https" | "xh" | "axel"
    )
}

/// The files a downloader's own options name (`curl -o F`, `curl -O URL`, `wget -O F`, `wget
/// URL`): URL-named outputs use the last path segment, as the tools do.
fn download_outputs(fetch: &[String]) -> Vec<String> {
    let name = unwrap::program_name(&fetch[0]);
    let curl_like = !matches!(&*name, "wget" | "wget2" | "axel" | "aria2c");
    let mut out = Vec::new();
    let mut named = false;
    let mut remote_name = !curl_like;
    let mut i = 1;
    while i < fetch.len() {
        let a = fetch[i].as_str();
        let value = |i: usize| fetch.get(i + 1).cloned();
        if let Some(v) = a
            .strip_prefix("--output=")
            .or_else(|| a.strip_prefix("--output-document="))
            .or_else(|| a.strip_prefix("--out="))
        {
            out.push(v.to_string());
            named = true;
        } else if matches!(a, "--output" | "--output-document" | "--out") {
            out.extend(value(i));
            named = true;
            i += 1;
        } else if a == "--remote-name" || a == "--remote-name-all" {
            remote_name = true;
        } else if a.starts_with('-') && !a.starts_with("--") && a.len() > 1 {
            // a short cluster: the output letter takes the rest of the word or the next word
            // aria2c names its output with `-o` like curl, but saves under the URL's name
            let letter = if curl_like || name == "aria2c" {
                'o'
            } else {
                'O'
            };
            if let Some(pos) = a.find(letter) {
                let rest = &a[pos + 1..];
                if rest.is_empty() {
                    out.extend(value(i));
                    i += 1;
                } else {
                    out.push(rest.to_string());
                }
                named = true;
            } else if curl_like && a.contains('O') {
                remote_name = true;
            }
        }
        i += 1;
    }
    if remote_name && !named {
        for u in fetch[1..].iter().filter(|a| a.contains("://")) {
            let path = u.split(['?', '#']).next().unwrap_or("");
            let after_host = path.split_once("://").map_or(path, |(_, r)| r);
            match after_host.split_once('/') {
                Some((_, p)) if !p.is_empty() && !p.ends_with('/') => {
                    out.extend(p.rsplit('/').next().map(String::from));
                }
                _ => out.push("index.html".to_string()),
            }
        }
    }
    out
}

/// The key a written file is remembered by: `./x.sh` and `x.sh` are the same file.
pub(super) fn written_key(path: &str) -> &str {
    let mut p = path;
    while let Some(rest) = p.strip_prefix("./") {
        p = rest;
    }
    p
}

/// Commands whose output is a decoded or generated payload.
pub(super) fn is_decoder(argv: &[String]) -> bool {
    let name = unwrap::base(&argv[0]);
    let has = |f: &str| argv[1..].iter().any(|a| a == f);
    let has_prefix = |p: &str| argv[1..].iter().any(|a| a.starts_with(p));
    match name {
        "base64" | "base32" | "basenc" => {
            has("-d") || has("--decode") || has("-D") || has_prefix("-d")
        }
        "xxd" => has("-r") || has_prefix("-r"),
        "openssl" => has("-d") || has("base64") && has("-d"),
        "uudecode" | "rev" | "gunzip" | "zcat" | "bunzip2" | "xz" | "unxz" | "zstd" | "lzma" => {
            true
        }
        "gzip" | "bzip2" => has("-d") || has("--decompress") || has("-dc") || has("-cd"),
        "printf" => argv[1..]
            .iter()
            .any(|a| a.contains("\\x") || has_octal_escape(a)),
        "echo" => {
            (has("-e") || has("-ne") || has("-en"))
                && argv[1..]
                    .iter()
                    .any(|a| a.contains("\\x") || has_octal_escape(a))
        }
        "tr" => argv[1..]
            .iter()
            .any(|a| a.contains("N-ZA-M") || a.contains("n-za-m")),
        "python" | "python3" | "perl" | "ruby" | "node" => argv[1..].iter().any(|a| {
            a.contains("b64decode")
                || a.contains("decode(")
                || a.contains("fromCharCode")
                || a.contains("pack(")
        }),
        _ => false,
    }
}

fn has_octal_escape(s: &str) -> bool {
    let b = s.as_bytes();
    b.windows(4)
        .any(|w| w[0] == b'\\' && w[1..].iter().all(|c| (b'0'..=b'7').contains(c)))
}

/// What `echo WORDS` or `printf FORMAT` prints, when that is plain literal text: no options
/// but `echo -n`, no expansions left, and for `printf` a format without conversions (or `%s`
/// lines of literal arguments) whose only escapes are `\n`, `\t` and `\\`. A bare `cat` prints
/// the heredoc or here-string it is given.
pub(super) fn literal_output(argv: &[String], feed: Option<&str>) -> Option<String> {
    let name = unwrap::base(&argv[0]);
    let args = &argv[1..];
    if name == "cat" {
        return feed
            .filter(|body| args.iter().all(|a| a == "-") && !body.contains(['$', '`']))
            .map(str::to_string);
    }
    if args.iter().any(|a| a.contains(['$', '`'])) {
        return None;
    }
    match name {
        "echo" => {
            let args = match args.first().map(String::as_str) {
                Some("-n") => &args[1..],
                _ => args,
            };
            if args.first().is_some_and(|a| a.starts_with('-')) {
                return None;
            }
            Some(args.join(" "))
        }
        "printf" => {
            let (format, rest) = args.split_first()?;
            if rest.iter().any(|a| a.contains('\\')) {
                return None;
            }
            let lines = match (format.as_str(), rest) {
                (f, []) if !f.contains('%') => f.to_string(),
                ("%s", r) if !r.is_empty() => r.concat(),
                ("%s\\n" | "%s\\0", r) if !r.is_empty() => r.join("\\n"),
                _ => return None,
            };
            let mut out = String::with_capacity(lines.len());
            let mut chars = lines.chars();
            while let Some(c) = chars.next() {
                if c != '\\' {
                    out.push(c);
                    continue;
                }
                match chars.next() {
                    Some('n') => out.push('\n'),
                    Some('t') => out.push('\t'),
                    Some('\\') => out.push('\\'),
                    _ => return None,
                }
            }
            Some(out)
        }
        _ => None,
    }
}
