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
    /// Names what it calls only at run time, evaluates a built or decoded string, or loads
    /// native code: the API lists above cannot see through it.
    Dynamic,
}

impl Capability {
    pub fn name(self) -> &'static str {
        match self {
            Capability::Spawn => "spawns processes",
            Capability::Delete => "deletes files",
            Capability::Network => "uses the network",
            Capability::Secrets => "reads secrets",
            Capability::Dynamic => "builds or decodes what it runs",
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
    // Julia's command literals, R's second process API
    "run(`",
    "system2(",
    // Elixir and Erlang
    "System.cmd(",
    "System.shell(",
    "os:cmd(",
];
/// Delete APIs; `code_deletes` reads the same names as calls to find what they remove.
pub(crate) const DELETE: &[&str] = &[
    "rmtree",
    // Perl's File::Path
    "remove_tree",
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
    "FileUtils.remove",
    "Dir.delete",
    "Path.unlink",
    ".unlink(",
    "remove(",
    "Remove-Item",
    "truncate(",
    "Deno.remove",
    "unlink glob",
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
    "Deno.env",
    "Bun.env",
    "%ENV",
    "ENV[",
    "getenv(",
    ".env\"",
    ".env'",
];

/// An awk output pipe or coprocess: `print EXPR | "cmd"`, `… |& "cmd"` (the string runs in a
/// shell); a `|` that is half of `||` is a logical or.
fn awk_output_pipe(code: &str) -> bool {
    let b = code.as_bytes();
    b.iter().enumerate().any(|(i, &c)| {
        if c != b'|' || (i > 0 && b[i - 1] == b'|') || b.get(i + 1) == Some(&b'|') {
            return false;
        }
        let rest = code[i + 1..].trim_start_matches('&').trim_start();
        rest.starts_with('"')
    })
}

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
                || awk_output_pipe(code)
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
        Lang::Python => {
            has(SPAWN)
                || python_from_import(
                    code,
                    &["system", "popen", "exec", "spawn", "fork", "posix_spawn"],
                )
        }
        _ => has(SPAWN),
    };
    if spawn {
        out.push(Capability::Spawn);
    }
    if lang != Lang::Sed
        && (has(DELETE)
            || (lang == Lang::Python
                && python_from_import(
                    code,
                    &["remove", "unlink", "rmdir", "removedirs", "truncate"],
                )))
    {
        out.push(Capability::Delete);
    }
    if has(NETWORK) {
        out.push(Capability::Network);
    }
    if has(SECRETS) {
        out.push(Capability::Secrets);
    }
    if dynamic(lang, code) {
        out.push(Capability::Dynamic);
    }
    out
}

/// `from os import system as s` (also `posix`, `pty`): the call is then written without its
/// module, under any name. True when such an import brings in a name starting with one of
/// `names`.
fn python_from_import(code: &str, names: &[&str]) -> bool {
    [
        "from os import",
        "from posix import",
        "from pty import",
        "from nt import",
    ]
    .iter()
    .any(|m| {
        code.match_indices(m).any(|(at, _)| {
            code[at + m.len()..]
                .split(['\n', ';'])
                .next()
                .unwrap_or("")
                .split([',', ' ', '(', ')'])
                .any(|w| w == "*" || names.iter().any(|n| w.starts_with(n)))
        })
    })
}

/// Calls that resolve a name, a module or code from a run-time value.
fn dynamic(lang: Lang, code: &str) -> bool {
    let has = |list: &[&str]| list.iter().any(|p| code.contains(p));
    match lang {
        Lang::Python => {
            non_literal_call(code, "__import__(")
                || non_literal_call(code, "import_module(")
                || getattr_hides_name(code)
                || has(&[
                    "marshal.loads",
                    "pickle.loads",
                    "ctypes",
                    "__builtins__",
                    "__globals__",
                    "__subclasses__",
                    "codecs.decode(",
                ])
                || code
                    .match_indices("compile(")
                    .any(|(at, _)| !code[..at].ends_with("re.") && !code[..at].ends_with("regex."))
        }
        // Perl's and Ruby's string `eval` needs no parentheses (`eval decode_base64 …`); a
        // Perl `eval { … }` block only catches errors
        Lang::Perl | Lang::Ruby => {
            code.match_indices("eval").any(|(at, _)| {
                let before = code[..at].chars().next_back();
                let after = code[at + 4..].trim_start_matches(' ');
                !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
                    && code[at + 4..].starts_with(' ')
                    && !after.starts_with('{')
                    && !after.is_empty()
            }) || has(&[
                ".send(",
                ".public_send(",
                "__send__",
                "instance_eval",
                "class_eval",
                "module_eval",
                "const_get",
                "DynaLoader",
            ])
        }
        Lang::Node => {
            non_literal_call(code, "require(")
                || non_literal_call(code, "import(")
                || has(&[
                    "Function(",
                    "vm.run",
                    "vm.Script",
                    "runInNewContext",
                    "runInThisContext",
                    "process.binding",
                    "process.dlopen",
                ])
        }
        Lang::Php => has(&[
            "assert(",
            "create_function",
            "call_user_func",
            "base64_decode",
            "gzinflate",
            "str_rot13",
        ]),
        Lang::Lua => has(&["loadstring", "load(", "dofile", "package.loadlib"]),
        _ => false,
    }
}

/// `name(` followed by something other than one plain string literal (`__import__('o'+'s')`,
/// `require(x)`).
fn non_literal_call(code: &str, name: &str) -> bool {
    code.match_indices(name).any(|(at, _)| {
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            return false;
        }
        !plain_literal_arg(&code[at + name.len()..])
    })
}

/// The text after `(` is one quoted name followed by `)` or `,`.
fn plain_literal_arg(after: &str) -> bool {
    let after = after.trim_start();
    let Some(q) = after
        .chars()
        .next()
        .filter(|c| matches!(c, '"' | '\'' | '`'))
    else {
        return false;
    };
    let body = &after[1..];
    let Some(end) = body.find(q) else {
        return false;
    };
    let name = &body[..end];
    let rest = body[end + 1..].trim_start();
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-' | '/' | ':' | '@'))
        && (rest.starts_with(')') || rest.starts_with(','))
}

/// `getattr(obj, NAME)` where NAME is not a literal, or is a literal naming a process or delete
/// call (`getattr(os, 'system')`), which the API lists look for only as `system(`.
fn getattr_hides_name(code: &str) -> bool {
    code.match_indices("getattr(").any(|(at, _)| {
        let args = &code[at + 8..];
        let Some(comma) = args.find(',') else {
            return true;
        };
        let second = &args[comma + 1..];
        if !plain_literal_arg(second) {
            return true;
        }
        let name = second.trim_start()[1..]
            .split(['"', '\''])
            .next()
            .unwrap_or("");
        name.starts_with("system")
            || name.starts_with("popen")
            || name.starts_with("exec")
            || name.starts_with("spawn")
            || matches!(
                name,
                "remove"
                    | "unlink"
                    | "rmtree"
                    | "rmdir"
                    | "check_output"
                    | "run"
                    | "call"
                    | "Popen"
            )
    })
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

/// APIs that write files whatever their arguments (Node, Deno, Bun, Python's pathlib, Ruby, PHP).
const WRITE: &[&str] = &[
    "writeFileSync",
    "writeFile(",
    "appendFileSync",
    "appendFile(",
    "createWriteStream",
    "copyFileSync",
    "Deno.writeTextFile",
    "Deno.writeFile",
    "Bun.write(",
    "write_text(",
    "write_bytes(",
    "File.write",
    "IO.write",
    "file_put_contents",
    "shutil.copy",
    "shutil.move",
];

/// Open modes that write (`open(P, "w")`, `File.open(P, 'a')`, `fopen(P, "wb")`).
const WRITE_MODES: &[&str] = &[
    "\"w\"", "'w'", "\"a\"", "'a'", "\"wb\"", "'wb'", "\"ab\"", "'ab'", "\"w+\"", "'w+'", "\"a+\"",
    "'a+'", "\"x\"", "'x'",
];

/// Absolute or home paths the code may write to: the path literals of code that calls a
/// file-writing API or opens a file for writing (Perl's `open(F, ">/etc/x")` included).
/// Empty when the code writes nothing this reading can see.
pub fn written_paths(code: &str) -> Vec<String> {
    let opens = code.contains("open(") || code.contains("open ");
    let writes = WRITE.iter().any(|w| code.contains(w))
        || (opens && WRITE_MODES.iter().any(|m| code.contains(m)))
        || (opens && (code.contains("\">") || code.contains("'>") || code.contains("\"+>")));
    if !writes {
        return Vec::new();
    }
    quoted(code)
        .into_iter()
        .map(|t| t.trim_start_matches(['>', '+', '<', ' ']).to_string())
        // absolute and home paths, and relative ones that name a directory or a dot-file
        // (`.claude/settings.json`, `.env`): the sensitive-path table judges them all
        .filter(|t| {
            t.starts_with('/')
                || t.starts_with("~/")
                || ((t.contains('/') || t.starts_with('.'))
                    && !t.contains("://")
                    && t.len() > 1
                    && t.bytes().all(|b| b.is_ascii_graphic()))
        })
        .filter(|t| !t.contains(char::is_whitespace))
        .take(8)
        .collect()
}

/// String literals in code (single, double or backtick quoted), bounded in number and size.
/// Escapes are kept as written except `\"`, `\'` and `\\`.
pub fn string_literals(code: &str) -> Vec<String> {
    quoted(code)
        .into_iter()
        .filter(|t| t.contains(' ') || t.starts_with('/'))
        .take(32)
        .collect()
}

fn quoted(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    let mut i = 0;
    while i < bytes.len() && out.len() < 128 {
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
        assert_eq!(
            capabilities(Lang::Awk, "BEGIN { print \"id\" | \"sh\" }"),
            vec![Capability::Spawn]
        );
        assert_eq!(
            capabilities(Lang::Awk, "{ print $0 |& \"cat\" }"),
            vec![Capability::Spawn]
        );
        assert!(capabilities(Lang::Awk, "{ if ($1 || \"x\") print $2 }").is_empty());
        assert_eq!(capabilities(Lang::Sed, "1e rm x"), vec![Capability::Spawn]);
        assert_eq!(capabilities(Lang::Sed, "s/a/b/e"), vec![Capability::Spawn]);
        assert!(capabilities(Lang::Sed, "s/e/x/g").is_empty());
    }

    #[test]
    fn finds_process_calls_imported_under_another_name() {
        let c = capabilities(Lang::Python, "from os import system as s; s('id')");
        assert_eq!(c, vec![Capability::Spawn]);
        let c = capabilities(Lang::Python, "from os import path, remove as r\nr('/x')");
        assert_eq!(c, vec![Capability::Delete]);
        assert!(capabilities(Lang::Python, "from os import path; print(path.sep)").is_empty());
        assert!(capabilities(Lang::Python, "from os import getcwd; print(getcwd())").is_empty());
    }

    #[test]
    fn finds_code_built_at_run_time() {
        for (lang, code) in [
            (
                Lang::Python,
                "getattr(__import__('o'+'s'), 'sys'+'tem')('id')",
            ),
            (Lang::Python, "import os; getattr(os, 'system')('id')"),
            (Lang::Python, "m = __import__(name)"),
            (Lang::Python, "exec(compile(src, 'x', 'exec'))"),
            (Lang::Python, "import importlib; importlib.import_module(n)"),
            (Lang::Perl, "use MIME::Base64; eval decode_base64('cm0=')"),
            (Lang::Perl, "eval $payload"),
            (Lang::Ruby, "Kernel.send(:system, 'id')"),
            (Lang::Node, "require(m)"),
            (Lang::Node, "new Function(atob(s))()"),
            (Lang::Php, "eval(base64_decode('cm0='));"),
            (Lang::Lua, "loadstring(s)()"),
        ] {
            assert!(
                capabilities(lang, code).contains(&Capability::Dynamic),
                "{code}"
            );
        }
        for (lang, code) in [
            (Lang::Python, "print(__import__('json').dumps({'a': 1}))"),
            (
                Lang::Python,
                "import re; print(re.compile('a+').match('aa'))",
            ),
            (Lang::Python, "import sys; print(getattr(sys, 'version'))"),
            (Lang::Perl, "eval { risky() }; print $@"),
            (Lang::Perl, "print 'evaluation'"),
            (
                Lang::Node,
                "const fs = require('fs'); console.log(fs.readdirSync('.'))",
            ),
            (
                Lang::Node,
                "console.log(require(\"./package.json\").version)",
            ),
        ] {
            assert!(
                !capabilities(lang, code).contains(&Capability::Dynamic),
                "{code}"
            );
        }
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
