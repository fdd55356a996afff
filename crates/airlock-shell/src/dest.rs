//! Where a command writes files without a shell redirect: `tee FILE`, the destination of `cp`,
//! `mv`, `install`, `ln` and a local `rsync`, `dd of=FILE`, `truncate FILE`, the files of
//! `sed -i`, `perl -i` and `ruby -i`, and `unzip -d DIR`. The walk judges
//! these exactly like `> FILE`, so `cp x ~/.bashrc` is held like `cat x > ~/.bashrc`.
//!
//! Only options known to take a value are skipped with it; an unknown option is assumed to take
//! none, which at worst judges one more word as a path (stricter, never looser).

/// The files `argv` (program already reduced to its base name `name`) writes to.
pub fn write_destinations<'a>(name: &str, argv: &'a [String]) -> Vec<&'a str> {
    let args = argv.get(1..).unwrap_or_default();
    match name {
        "tee" | "sponge" => operands(args, &[]).0,
        // `awk -i inplace PROGRAM FILE…` (gawk) rewrites its files
        "awk" | "gawk"
            if args.windows(2).any(|w| w[0] == "-i" && w[1] == "inplace")
                || args.iter().any(|a| a == "-iinplace") =>
        {
            operands(
                args,
                &["-i", "-f", "-v", "-F", "--include", "--file", "--assign"],
            )
            .0
            .into_iter()
            .skip(1)
            .collect()
        }
        // line editors and editors write the files they open
        "ed" | "ex" | "vi" | "vim" | "nvim" | "nano" => {
            operands(
                args,
                &["-c", "-s", "-u", "-i", "-S", "-T", "-p", "-o", "-O"],
            )
            .0
        }
        // `mv` also empties the places it moves from: `mv ~/.ssh /tmp` is a write to `~/.ssh`
        "mv" => {
            let (ops, target) = operands(args, VALUE_OPTS_COPY);
            match target {
                Some(t) => ops.into_iter().chain([t]).collect(),
                None if ops.len() >= 2 => ops,
                None => Vec::new(),
            }
        }
        "cp" | "install" | "ln" => {
            let (ops, target) = operands(args, VALUE_OPTS_COPY);
            match target {
                Some(t) => vec![t],
                // `install -d DIR…` creates directories, which is a write to each.
                None if name == "install" && has_flag(args, "-d", "--directory") => ops,
                None if ops.len() >= 2 => ops.last().copied().into_iter().collect(),
                None => Vec::new(),
            }
        }
        "rsync" => {
            let (ops, _) = operands(args, VALUE_OPTS_RSYNC);
            // `host:path` and `rsync://` destinations are remote, judged by the network rules.
            match ops.as_slice() {
                [.., _, last] if !last.contains(':') => vec![*last],
                _ => Vec::new(),
            }
        }
        "dd" => args.iter().filter_map(|a| a.strip_prefix("of=")).collect(),
        "truncate" => operands(args, &["-s", "--size", "-r", "--reference"]).0,
        // `sed -i` rewrites its files in place. Without `-e`/`-f` the first operand is the
        // script; every operand is judged anyway (a script is never a sensitive path, and an
        // option read wrongly must not hide a file).
        "sed" if args.iter().any(|a| is_sed_in_place(a)) => {
            operands(
                args,
                &["-e", "--expression", "-f", "--file", "-l", "--line-length"],
            )
            .0
        }
        // `perl -pi -e CODE FILE…` / `ruby -i -pe CODE FILE…` rewrite FILEs in place
        "perl" | "ruby" if args.iter().any(|a| is_perl_in_place(a)) => {
            // a cluster ending in `e`/`E` (`-e`, `-pe`, `-lne`) takes the code as the next word
            let mut files = Vec::new();
            let mut it = args.iter();
            while let Some(a) = it.next() {
                if a.starts_with('-') && a.len() > 1 {
                    let takes_code = !a.starts_with("--") && (a.ends_with('e') || a.ends_with('E'));
                    if takes_code || matches!(a.as_str(), "-I" | "-M" | "-m" | "-r") {
                        it.next();
                    }
                } else {
                    files.push(a.as_str());
                }
            }
            files
        }
        // `tar -x … -C DIR` extracts into DIR (with `-c` it only reads from there)
        "tar" | "gtar" | "bsdtar"
            if args.iter().any(|a| {
                a == "--extract"
                    || a == "--get"
                    || (!a.starts_with("--")
                        && a.starts_with(|c: char| c == '-' || c.is_ascii_alphabetic())
                        && a.trim_start_matches('-')
                            .starts_with(|c: char| c.is_ascii_alphabetic())
                        && a.trim_start_matches('-')
                            .chars()
                            .all(|c| c.is_ascii_alphabetic())
                        && a.contains('x'))
            }) =>
        {
            args.windows(2)
                .filter(|w| w[0] == "-C" || w[0] == "--directory")
                .map(|w| w[1].as_str())
                .chain(args.iter().filter_map(|a| a.strip_prefix("--directory=")))
                .collect()
        }
        // `unzip ARCHIVE -d DIR` extracts into DIR
        "unzip" => args
            .windows(2)
            .filter(|w| w[0] == "-d")
            .map(|w| w[1].as_str())
            .chain(
                args.iter()
                    .filter_map(|a| a.strip_prefix("-d").filter(|d| !d.is_empty())),
            )
            .collect(),
        _ => Vec::new(),
    }
}

/// The files `argv` removes, empties or changes the mode, owner or attributes of without
/// writing their content (`rm`, `shred`, `chmod`, `chattr`…). Every operand is listed, modes
/// and owners too: they are never guard files.
pub fn changed_paths<'a>(name: &str, argv: &'a [String]) -> Vec<&'a str> {
    let args = argv.get(1..).unwrap_or_default();
    match name {
        "rm" | "unlink" | "shred" | "rmdir" | "srm" | "wipe" | "chmod" | "chown" | "chgrp"
        | "chattr" | "setfacl" | "touch" | "gio" | "trash" | "trash-put" => {
            operands(args, &["--reference"]).0
        }
        // `git rm|checkout|restore|mv|stash -- PATH`: the working-tree files named change
        "git" => {
            let Some(at) = args.iter().position(|a| {
                matches!(
                    a.as_str(),
                    "rm" | "checkout" | "restore" | "mv" | "stash" | "clean" | "reset"
                )
            }) else {
                return Vec::new();
            };
            args[at + 1..]
                .iter()
                .map(String::as_str)
                .filter(|a| !a.starts_with('-'))
                .collect()
        }
        // `find ROOT… -delete` / `-exec rm …`: the roots are what is removed or changed
        "find"
            if args.iter().any(|a| a == "-delete")
                || args.windows(2).any(|w| {
                    matches!(w[0].as_str(), "-exec" | "-execdir" | "-ok" | "-okdir")
                        && matches!(
                            w[1].rsplit('/').next().unwrap_or(""),
                            "rm" | "unlink"
                                | "shred"
                                | "chmod"
                                | "chown"
                                | "chattr"
                                | "truncate"
                                | "mv"
                                | "cp"
                                | "sed"
                                | "perl"
                                | "tee"
                                | "sponge"
                                | "ln"
                        )
                }) =>
        {
            args.iter()
                .map(String::as_str)
                .skip_while(|a| {
                    matches!(*a, "-H" | "-L" | "-P") || a.starts_with("-O") || a.starts_with("-D")
                })
                .take_while(|a| !a.starts_with('-') && !matches!(*a, "(" | "!" | ","))
                .collect()
        }
        _ => Vec::new(),
    }
}

/// A perl or ruby switch cluster with `-i` (`-i`, `-pi`, `-i.bak`, `-0777 -pi`); `-I`, `-M` and
/// `-m` take the rest of the word as their value.
fn is_perl_in_place(a: &str) -> bool {
    a.starts_with('-')
        && !a.starts_with("--")
        && !a.starts_with("-I")
        && !a.starts_with("-M")
        && !a.starts_with("-m")
        && a[1..]
            .chars()
            .take_while(|c| c.is_ascii_alphabetic())
            .any(|c| c == 'i')
}

/// Options of cp, mv, install and ln that take a value (`-t DIR` is the target itself).
const VALUE_OPTS_COPY: &[&str] = &[
    "-S",
    "--suffix",
    "-m",
    "--mode",
    "-o",
    "--owner",
    "-g",
    "--group",
    "-Z",
    "--context",
];

const VALUE_OPTS_RSYNC: &[&str] = &[
    "-e",
    "--rsh",
    "--exclude",
    "--include",
    "--exclude-from",
    "--include-from",
    "--files-from",
    "--filter",
    "-f",
    "--rsync-path",
    "--log-file",
    "--partial-dir",
    "--temp-dir",
    "-T",
    "--compare-dest",
    "--copy-dest",
    "--link-dest",
    "--chmod",
    "--chown",
    "--port",
    "-B",
    "--block-size",
    "--max-size",
    "--min-size",
    "--bwlimit",
    "--timeout",
    "--contimeout",
];

/// The operands (non-option words) and the `-t DIR` / `--target-directory[=]DIR` target.
fn operands<'a>(args: &'a [String], value_opts: &[&str]) -> (Vec<&'a str>, Option<&'a str>) {
    let mut ops = Vec::new();
    let mut target = None;
    let mut it = args.iter();
    let mut only_operands = false;
    while let Some(a) = it.next() {
        let a = a.as_str();
        if only_operands || a == "-" || !a.starts_with('-') {
            ops.push(a);
        } else if a == "--" {
            only_operands = true;
        } else if a == "-t" || a == "--target-directory" {
            target = it.next().map(String::as_str);
        } else if let Some(t) = a.strip_prefix("--target-directory=") {
            target = Some(t);
        } else if let Some(t) = a
            .strip_prefix("-t")
            .filter(|t| !t.is_empty() && !a.starts_with("--"))
        {
            target = Some(t);
        } else if value_opts.contains(&a) {
            it.next();
        }
    }
    (ops, target)
}

/// `-i`, `-i.bak`, `--in-place[=SUFFIX]`, or a short cluster holding `i` (`-ni`, `-Ei`).
fn is_sed_in_place(a: &str) -> bool {
    a == "--in-place"
        || a.starts_with("--in-place=")
        || (a.starts_with('-')
            && !a.starts_with("--")
            && a[1..]
                .split_once('i')
                .is_some_and(|(before, _)| before.bytes().all(|b| b"nrsEuz".contains(&b))))
}

fn has_flag(args: &[String], short: &str, long: &str) -> bool {
    args.iter().any(|a| a == short || a == long)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dests(line: &str) -> Vec<String> {
        let argv: Vec<String> = line.split_whitespace().map(str::to_string).collect();
        write_destinations(&argv[0], &argv)
            .into_iter()
            .map(str::to_string)
            .collect()
    }

    #[test]
    fn destinations_of_common_writers() {
        assert_eq!(dests("tee -a ~/.bashrc out.log"), ["~/.bashrc", "out.log"]);
        assert_eq!(dests("cp -r src ~/.ssh/"), ["~/.ssh/"]);
        assert_eq!(dests("cp a b c /etc/"), ["/etc/"]);
        assert_eq!(dests("mv -t /etc/cron.d job"), ["job", "/etc/cron.d"]);
        assert_eq!(dests("mv ~/.ssh /tmp/keys"), ["~/.ssh", "/tmp/keys"]);
        assert_eq!(dests("cp --target-directory=/etc x"), ["/etc"]);
        assert_eq!(
            dests("install -m 0644 unit /etc/systemd/system/x.service"),
            ["/etc/systemd/system/x.service"]
        );
        assert_eq!(dests("cp -S .bak a -- -weird"), ["-weird"]);
        assert_eq!(
            dests("ln -sf /bin/sh ~/.local/bin/python"),
            ["~/.local/bin/python"]
        );
        assert_eq!(dests("dd if=/dev/zero of=/dev/sda bs=1M"), ["/dev/sda"]);
        assert_eq!(dests("rsync -av -e ssh src/ /srv/www/"), ["/srv/www/"]);
        assert_eq!(dests("truncate -s 0 ~/.bash_history"), ["~/.bash_history"]);
        assert_eq!(
            dests("sed -i s/a/b/ ~/.bashrc notes.txt"),
            ["s/a/b/", "~/.bashrc", "notes.txt"]
        );
        assert_eq!(dests("sed -i.bak -e s/a/b/ /etc/hosts"), ["/etc/hosts"]);
        assert_eq!(dests("sed -Ei s/x/y/ .env"), ["s/x/y/", ".env"]);
    }

    #[test]
    fn in_place_editors_and_extractors() {
        assert_eq!(dests("perl -pi -e s/a/b/ /etc/passwd"), ["/etc/passwd"]);
        assert_eq!(
            dests("perl -i.bak -pe s/a/b/ a.txt b.txt"),
            ["a.txt", "b.txt"]
        );
        assert_eq!(dests("ruby -i -pe gsub(/a/,'b') ~/.bashrc"), ["~/.bashrc"]);
        assert!(dests("perl -Ilib -ne print a.txt").is_empty());
        assert!(dests("perl -e print").is_empty());
        assert_eq!(
            dests("unzip -o x.zip -d /usr/local/bin"),
            ["/usr/local/bin"]
        );
        assert!(dests("unzip x.zip").is_empty());
    }

    #[test]
    fn no_destination_where_nothing_is_written_locally() {
        assert!(dests("cp onlyone").is_empty());
        assert!(dests("rsync -av src/ host:/srv/www/").is_empty());
        assert!(dests("ls -la /etc").is_empty());
        assert!(dests("tee").is_empty());
        assert!(dests("sed s/a/b/ ~/.bashrc").is_empty());
        assert!(dests("sed -n /x/p -e s/i/j/ f").is_empty());
    }
}
