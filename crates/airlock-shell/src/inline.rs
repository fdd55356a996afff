//! Inline interpreter code (`python -c`, `perl -e`, `node -e`, awk programs, sed scripts):
//! what it can do (spawn processes, delete files, use the network, read secrets) and which
//! string literals in it look like shell commands, so those can be analysed as shell too.

use crate::unwrap::Lang;

/// A capability found in code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Capability {
    Spawn,
    Delete,
    Network,
    Secrets,
}

impl Capability {
    pub fn name(self) -> &'static str {
        match self {
            Capability::Spawn => "spawns processes",
            Capability::Delete => "deletes files",
            Capability::Network => "uses the network",
            Capability::Secrets => "reads secrets",
        }
    }
}

const SPAWN: &[&str] = &[
    "os.system",
    "subprocess",
    "os.popen",
    "os.exec",
    "os.spawn",
    "pty.spawn",
    "commands.getoutput",
    "child_process",
    "execSync",
    "spawnSync",
    "exec(",
    "system(",
    "popen(",
    "proc_open",
    "shell_exec",
    "passthru",
    "Kernel.exec",
    "IO.popen",
    "Open3",
    "%x",
    "qx",
    "os.execute",
    "io.popen",
    "Runtime.getRuntime",
    "do shell script",
    "Start-Process",
    "Invoke-Expression",
    "iex ",
    "eval(",
    // Bun and Deno: their own process APIs and Bun's shell (`$\`cmd\``)
    "Bun.spawn",
    "Bun.$",
    "$`",
    "Deno.Command",
    "Deno.run",
];
const DELETE: &[&str] = &[
    "rmtree",
    "os.remove",
    "os.unlink",
    "os.rmdir",
    "unlink(",
    "rmdir(",
    "unlinkSync",
    "rmSync",
    "rmdirSync",
    "fs.rm",
    "File.delete",
    "FileUtils.rm",
    "Path.unlink",
    ".unlink(",
    "remove(",
    "Remove-Item",
    "truncate(",
    "Deno.remove",
    "promises.rm",
];
const NETWORK: &[&str] = &[
    "socket",
    "urllib",
    "requests.",
    "http.client",
    "httplib",
    "urlopen",
    "fetch(",
    "http.get",
    "https.get",
    "http.request",
    "net.connect",
    "net.Socket",
    "LWP::",
    "HTTP::Tiny",
    "IO::Socket",
    "Net::HTTP",
    "open-uri",
    "TCPSocket",
    "curl_exec",
    "fsockopen",
    "file_get_contents(\"http",
    "file_get_contents('http",
    "/inet/tcp",
    "/dev/tcp",
    "websocket",
    "paramiko",
    "smtplib",
    "ftplib",
    "Invoke-WebRequest",
    "WebClient",
    "getline < \"/inet",
    "Deno.connect",
    "Bun.connect",
];
const SECRETS: &[&str] = &[
    ".ssh/",
    "id_rsa",
    "id_ed25519",
    ".aws/credentials",
    ".aws/config",
    "/etc/shadow",
    ".netrc",
    ".npmrc",
    ".pypirc",
    ".docker/config.json",
    ".kube/config",
    ".git-credentials",
    ".gnupg",
    "AWS_SECRET",
    "GITHUB_TOKEN",
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "os.environ",
    "process.env",
    "%ENV",
    "ENV[",
    "getenv(",
    ".env\"",
    ".env'",
];

/// The capabilities code has, in the order Spawn, Delete, Network, Secrets.
pub fn capabilities(lang: Lang, code: &str) -> Vec<Capability> {
    let mut out = Vec::new();
    let has = |list: &[&str]| list.iter().any(|p| code.contains(p));
    let spawn = match lang {
        Lang::Awk => {
            code.contains("system(")
                || code.contains("| getline")
                || code.contains("|getline")
                || code.contains("print |")
                || code.contains("print|")
                || code.contains("printf |")
        }
        Lang::Sed => sed_executes(code),
        // `system "cmd"`, `exec "cmd"` and `spawn "cmd"` need no parentheses in Perl and Ruby
        Lang::Perl | Lang::Ruby => {
            has(SPAWN)
                || code.contains('`')
                || ["system", "exec", "spawn"].iter().any(|f| {
                    code.match_indices(f).any(|(at, _)| {
                        let after = &code[at + f.len()..];
                        let rest = after.trim_start_matches(' ');
                        rest.len() < after.len() && rest.starts_with(['"', '\'', '$', '@'])
                    })
                })
        }
        _ => has(SPAWN),
    };
    if spawn {
        out.push(Capability::Spawn);
    }
    if lang != Lang::Sed && has(DELETE) {
        out.push(Capability::Delete);
    }
    if has(NETWORK) {
        out.push(Capability::Network);
    }
    if has(SECRETS) {
        out.push(Capability::Secrets);
    }
    out
}

/// `sed` runs commands through the `e` command or the `e` flag of `s///`.
fn sed_executes(script: &str) -> bool {
    for cmd in script.split([';', '\n']) {
        let c = cmd.trim_start();
        // an address may precede the command: `1e`, `/x/e`, `$e`
        let body = c.trim_start_matches(|ch: char| ch.is_ascii_digit() || ch == '$' || ch == ',');
        if body == "e" || body.starts_with("e ") {
            return true;
        }
        if let Some(rest) = body.strip_prefix('s') {
            let mut chars = rest.chars();
            if let Some(delim) = chars.next() {
                if delim.is_alphanumeric() || delim == '\\' {
                    continue;
                }
                let parts: Vec<&str> = rest[delim.len_utf8()..].splitn(3, delim).collect();
                if let Some(flags) = parts.get(2)
                    && flags
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric())
                        .any(|c| c == 'e')
                {
                    return true;
                }
            }
        }
    }
    false
}

/// String literals in code (single, double or backtick quoted), bounded in number and size.
/// Escapes are kept as written except `\"`, `\'` and `\\`.
pub fn string_literals(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    let mut i = 0;
    while i < bytes.len() && out.len() < 32 {
        let q = bytes[i];
        if q == b'"' || q == b'\'' || q == b'`' {
            let mut s = Vec::new();
            let mut j = i + 1;
            while j < bytes.len() && bytes[j] != q {
                if bytes[j] == b'\\' && j + 1 < bytes.len() {
                    let n = bytes[j + 1];
                    if n == q || n == b'\\' {
                        s.push(n);
                        j += 2;
                        continue;
                    }
                }
                s.push(bytes[j]);
                j += 1;
            }
            if j < bytes.len()
                && s.len() <= 4096
                && let Ok(t) = String::from_utf8(s)
                && (t.contains(' ') || t.starts_with('/'))
            {
                out.push(t);
            }
            i = j + 1;
        } else {
            i += 1;
        }
    }
    out
}

/// List-form process calls (`subprocess.run(["rm", "-rf", "/"])`, `execFileSync("rm", [...])`):
/// the quoted words of the first bracketed list after a spawn call, joined as an argv line.
pub fn list_commands(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (at, _) in code.match_indices('[') {
        let Some(end) = code[at..].find(']') else {
            continue;
        };
        let inner = &code[at + 1..at + end];
        let words: Vec<String> = inner
            .split(',')
            .map(|w| w.trim().trim_matches(|c| c == '"' || c == '\'').to_string())
            .filter(|w| !w.is_empty())
            .collect();
        let all_quoted = inner.split(',').all(|w| {
            let w = w.trim();
            w.len() >= 2 && (w.starts_with('"') || w.starts_with('\''))
        });
        if words.len() >= 2 && all_quoted && words.iter().all(|w| !w.contains(' ') || w.len() < 200)
        {
            out.push(crate::canon::join(&words));
        }
        if out.len() >= 8 {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_capabilities() {
        let c = capabilities(Lang::Python, "import os; os.system('ls')");
        assert_eq!(c, vec![Capability::Spawn]);
        let c = capabilities(Lang::Python, "import shutil; shutil.rmtree('/x')");
        assert_eq!(c, vec![Capability::Delete]);
        assert!(capabilities(Lang::Python, "print(1+1)").is_empty());
        assert_eq!(
            capabilities(Lang::Node, "Bun.spawnSync(['make', 'clean'])"),
            vec![Capability::Spawn]
        );
        assert_eq!(
            capabilities(Lang::Node, "new Deno.Command('git').outputSync()"),
            vec![Capability::Spawn]
        );
        assert_eq!(
            capabilities(Lang::Node, "await Deno.remove('/srv', { recursive: true })"),
            vec![Capability::Delete]
        );
        assert!(capabilities(Lang::Node, "console.log(Deno.version)").is_empty());
        assert_eq!(
            capabilities(Lang::Perl, "exec 'make', 'install'"),
            vec![Capability::Spawn]
        );
        assert_eq!(
            capabilities(Lang::Ruby, "system \"make clean\""),
            vec![Capability::Spawn]
        );
        assert!(capabilities(Lang::Perl, "print if /exec /").is_empty());
        assert!(capabilities(Lang::Perl, "print \"system ok\\n\"").is_empty());
        assert_eq!(
            capabilities(Lang::Awk, "{ system(\"rm x\") }"),
            vec![Capability::Spawn]
        );
        assert!(capabilities(Lang::Awk, "{ print $1 }").is_empty());
        assert_eq!(capabilities(Lang::Sed, "1e rm x"), vec![Capability::Spawn]);
        assert_eq!(capabilities(Lang::Sed, "s/a/b/e"), vec![Capability::Spawn]);
        assert!(capabilities(Lang::Sed, "s/e/x/g").is_empty());
    }

    #[test]
    fn extracts_literals() {
        assert_eq!(
            string_literals("os.system(\"rm -rf /\")"),
            vec!["rm -rf /".to_string()]
        );
        assert_eq!(
            list_commands("subprocess.run(['rm', '-rf', '/'])"),
            vec!["rm -rf /".to_string()]
        );
    }
}
