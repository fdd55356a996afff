//! What each class of sensitive path reports: its rule id, message and remediation.

use super::Class;

impl Class {
    pub(super) fn rule_id(self) -> &'static str {
        match self {
            Class::BlockDevice => "paths.block_device",
            Class::Boot => "paths.boot",
            Class::SystemAuth => "paths.system_auth",
            Class::SshAuthorizedKeys => "paths.ssh_authorized_keys",
            Class::AgentConfig => "paths.agent_config",
            Class::Credentials => "paths.credentials",
            Class::DotEnv => "paths.dotenv",
            Class::Ssh => "paths.ssh",
            Class::ShellStartup => "paths.shell_startup",
            Class::Autostart => "paths.autostart",
            Class::GitHooks => "paths.git_hooks",
            Class::GitConfig => "paths.git_config",
            Class::SystemConfig => "paths.system_config",
            Class::SystemDirs => "paths.system_dirs",
            Class::KernelInterface => "paths.kernel_interface",
            Class::AgentFiles => "paths.agent_files",
            Class::GuardBinary => "paths.guard_binary",
            Class::PathShadowing => "paths.path_shadowing",
            Class::PythonStartup => "paths.python_startup",
            Class::EditorStartup => "paths.editor_startup",
            Class::ToolConfig => "paths.tool_config",
            Class::ProjectAutomation => "paths.project_automation",
            Class::AgentInstructions => "paths.agent_instructions",
        }
    }

    /// Written for the agent: what the path is, why that matters, what to do instead.
    pub(super) fn message(self, p: &str) -> String {
        match self {
            Class::BlockDevice => format!(
                "`{p}` is a device file: writing to it can overwrite a disk or memory directly \
                 and destroy the system. Do not write to devices; write to a regular file instead."
            ),
            Class::Boot => format!(
                "`{p}` is under /boot: a wrong write leaves the machine unable to start. \
                 Leave boot files to a person."
            ),
            Class::SystemAuth => format!(
                "`{p}` decides who can log in or become root; an agent must not change accounts, \
                 passwords or sudo rights. Ask the user to make the change themselves."
            ),
            Class::SshAuthorizedKeys => format!(
                "`{p}` decides who can log in over SSH; adding a key there is a classic backdoor, \
                 so agents may not write it. Ask the user to add the key themselves."
            ),
            Class::AgentConfig => format!(
                "`{p}` is a coding agent's own configuration (permissions, hooks, MCP servers); \
                 an agent must not change the rules that supervise it. Tell the user which \
                 setting you need and let them edit it."
            ),
            Class::Credentials => format!(
                "`{p}` stores credentials or private keys; writing it can leak or replace secrets, \
                 so a person must confirm. Prefer reading secrets from the environment or a \
                 secrets manager."
            ),
            Class::DotEnv => format!(
                "`{p}` is an environment file that usually holds secrets, so a person must \
                 confirm changes. To document variables, write `.env.example` instead."
            ),
            Class::Ssh => format!(
                "`{p}` is in an SSH directory (keys, known hosts, client configuration); a person \
                 must confirm changes to it."
            ),
            Class::ShellStartup => format!(
                "`{p}` runs every time a shell starts, so a change there outlives this task; a \
                 person must confirm it. To set a variable for one command, pass it inline instead."
            ),
            Class::Autostart => format!(
                "`{p}` makes programs start automatically (cron, systemd, launch agents); a person \
                 must confirm it."
            ),
            Class::GitHooks => format!(
                "`{p}` is a git hook: it runs code on later git commands, so a person must confirm \
                 it. Prefer a reviewed hook committed to the repository."
            ),
            Class::GitConfig => format!(
                "`{p}` is a repository's git configuration, which can make later git commands run \
                 programs; a person must confirm. Use `git config <key> <value>` for one visible \
                 setting instead."
            ),
            Class::SystemConfig => format!(
                "`{p}` is system configuration under /etc; changing it affects every user and \
                 service, so a person must confirm."
            ),
            Class::SystemDirs => format!(
                "`{p}` is in a system software directory; installing or replacing programs there \
                 affects every user. Install into the workspace or a user directory instead."
            ),
            Class::KernelInterface => format!(
                "`{p}` is a kernel interface; writing it changes the running system, so a person \
                 must confirm."
            ),
            Class::AgentFiles => format!(
                "`{p}` belongs to a coding agent's configuration (commands, memory, editor \
                 settings that shape later sessions); a person must confirm changes to it."
            ),
            Class::GuardBinary => format!(
                "`{p}` is one of airlock's own programs, which supervise this agent; an agent must \
                 not replace, remove or break them. Tell the user what you need instead."
            ),
            Class::PathShadowing => format!(
                "`{p}` is in a directory early on the user's PATH: a program put there runs in \
                 place of the real one in every later shell, so a person must confirm. Run the \
                 program from the workspace instead."
            ),
            Class::PythonStartup => format!(
                "`{p}` runs every time Python starts (a `.pth` or customize file), so a change \
                 outlives this task; a person must confirm it."
            ),
            Class::EditorStartup => format!(
                "`{p}` is a start-up file of an editor or terminal tool, which can run commands \
                 whenever the tool starts; a person must confirm it."
            ),
            Class::ToolConfig => format!(
                "`{p}` configures a build or package tool (indexes, runners, wrappers), which can \
                 make later builds fetch or run other code; a person must confirm it."
            ),
            Class::ProjectAutomation => format!(
                "`{p}` runs automatically (git hooks via husky, editor tasks, CI workflows, dev \
                 containers), so a change runs code later, elsewhere or with other secrets; a \
                 person must confirm it."
            ),
            Class::AgentInstructions => format!(
                "`{p}` is read as instructions by the next coding-agent session; a change there \
                 steers later sessions, so a person must confirm it."
            ),
        }
    }

    /// Written for the person reviewing the action.
    pub(super) fn remediation(self) -> &'static str {
        match self {
            Class::BlockDevice | Class::Boot => {
                "Only a person should write here, after checking the target twice."
            }
            Class::SystemAuth => "Make account or sudo changes yourself, with vipw or visudo.",
            Class::SshAuthorizedKeys => "Add SSH keys yourself after checking whose key it is.",
            Class::AgentConfig => {
                "Edit agent settings yourself; grant a permission deliberately if one is needed."
            }
            Class::Credentials | Class::DotEnv => {
                "Check that the change neither exposes nor replaces a real secret."
            }
            Class::Ssh => "Check host aliases, ProxyCommand lines and keys in the change.",
            Class::ShellStartup | Class::Autostart => {
                "Read what will run, when and as whom: start-up files are a common place to hide \
                 persistence."
            }
            Class::GitHooks | Class::GitConfig => {
                "Look for hooks or options that run commands (core.hooksPath, core.sshCommand, \
                 core.fsmonitor)."
            }
            Class::SystemConfig | Class::SystemDirs | Class::KernelInterface => {
                "Apply system changes through configuration management or by hand."
            }
            Class::AgentFiles | Class::AgentInstructions => {
                "Check that the change neither grants permissions nor plants \
                                  instructions for later sessions."
            }
            Class::GuardBinary => "Reinstall or upgrade airlock yourself if that is the intent.",
            Class::PathShadowing
            | Class::PythonStartup
            | Class::EditorStartup
            | Class::ToolConfig
            | Class::ProjectAutomation => {
                "Read what will run, when and as whom: these files are a common place to hide \
                 persistence."
            }
        }
    }
}
