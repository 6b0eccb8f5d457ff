"""Reason codes of the command guard (``domestique check`` and the shell side of the hooks)."""

from __future__ import annotations

from domestique.reason_codes import ReasonCode

REASON_CODES: tuple[ReasonCode, ...] = (
    ReasonCode(
        "cmd.pipe_to_shell",
        "Downloaded content is run by a shell or interpreter (piped, substituted or saved first).",
    ),
    ReasonCode("cmd.decode_exec", "Decoded or generated text is run by a shell or interpreter."),
    ReasonCode(
        "cmd.opaque_command",
        "A command name is not a literal once unfolded ($cmd, $(...), brace expansion).",
    ),
    ReasonCode(
        "cmd.exfiltration", "Credentials are read and the command line reaches the network."
    ),
    ReasonCode("cmd.secret_egress", "A secret written in the command line is sent to the network."),
    ReasonCode(
        "cmd.secret_env_egress",
        "A secret-named environment variable is sent to a host not known as its provider's.",
    ),
    ReasonCode(
        "cmd.untrusted_install",
        "A package installed or run from a URL, a git repository or another index than the "
        "default one, or a project's own install script run.",
    ),
    ReasonCode(
        "cmd.tls_off",
        "TLS certificate checks turned off (git http.sslVerify, NODE_TLS_REJECT_UNAUTHORIZED, …).",
    ),
    ReasonCode(
        "cmd.credential_read",
        "A credential store (SSH key, cloud credentials, keychain, process memory) is read.",
    ),
    ReasonCode("cmd.destructive.rm_root", "A recursive delete of /, ~, $HOME or a system root."),
    ReasonCode(
        "cmd.destructive.rm_outside", "A delete of files outside the project and temp folders."
    ),
    ReasonCode(
        "cmd.destructive.rm_project", "A recursive delete of the whole project folder (., *, ..)."
    ),
    ReasonCode(
        "cmd.destructive.rm_variable",
        "A recursive delete whose target starts with an unknown variable (empty means /).",
    ),
    ReasonCode(
        "cmd.destructive.find_delete", "find -delete or find -exec rm over /, ~ or a system path."
    ),
    ReasonCode(
        "cmd.destructive.data",
        "Deletes data in a service, bucket, database, backup or sync destination.",
    ),
    ReasonCode(
        "cmd.destructive.git_discard",
        "git discards uncommitted work or history (reset --hard, clean -f, stash drop, branch -D).",
    ),
    ReasonCode(
        "cmd.destructive.shutdown", "Shuts down, reboots or halts the machine (or triggers sysrq)."
    ),
    ReasonCode("cmd.device_write", "A raw write to a disk device or a new file system (dd, mkfs)."),
    ReasonCode("cmd.fork_bomb", "A fork bomb: a function or program that multiplies itself."),
    ReasonCode(
        "cmd.resource_abuse",
        "The machine's power turned on others: a crypto miner (xmrig, stratum+tcp:// pools), a "
        "packet flood (hping3 --flood, ping -f) at another host.",
    ),
    ReasonCode(
        "cmd.resource_heavy",
        "Large bills or loads: cloud machines launched in bulk or with GPUs, a load test at a "
        "huge count against a host that is not this machine.",
    ),
    ReasonCode(
        "cmd.destructive.ransom",
        "Ransomware's shape: many files emptied, shredded, or encrypted and the originals deleted "
        "(find -exec truncate -s0, gpg -c then rm, zip -e -m, 7z -p -sdel).",
    ),
    ReasonCode("cmd.reverse_shell", "A shell wired to a network connection (reverse shell)."),
    ReasonCode("cmd.bind_shell", "A shell served on a listening port (bind shell)."),
    ReasonCode(
        "cmd.persistence",
        "Writes a start-up hook: crontab, shell rc files, authorized_keys, launch agents, units.",
    ),
    ReasonCode("cmd.privilege.setuid", "Sets the setuid/setgid bit or file capabilities."),
    ReasonCode(
        "cmd.privilege.permissions",
        "Opens permissions or ownership of a system path (chmod -R 777 /, chown on /etc).",
    ),
    ReasonCode(
        "cmd.privilege.container",
        "A container gets the host's root or home folder, PID namespace or full privileges.",
    ),
    ReasonCode("cmd.privilege.kernel", "Loads a kernel module or extension (insmod, kextload)."),
    ReasonCode(
        "cmd.remote_access",
        "Opens the machine to remote access: tunnels (code tunnel, ngrok), ssh -R, remote desktop.",
    ),
    ReasonCode("cmd.privilege.accounts", "Edits sudoers, users, groups or passwords."),
    ReasonCode(
        "cmd.security_disable", "Disables security tooling (SELinux, firewall, audit, Gatekeeper)."
    ),
    ReasonCode("cmd.history_wipe", "Wipes shell history or system logs."),
    ReasonCode(
        "cmd.privilege.sudo",
        "Runs a command with raised privileges (sudo, doas, su, pkexec); a plain sudo of the "
        "system package manager installing packages by name is not this.",
    ),
    ReasonCode(
        "cmd.file_transfer",
        "Sends local files to another host (scp/rsync/sftp upload, curl -T/-F @file, wget "
        "--post-file).",
    ),
    ReasonCode("cmd.temp_exec", "Runs a program from a temporary folder (/tmp, /var/tmp, ...)."),
    ReasonCode(
        "cmd.git.force_push",
        "git push rewrites or deletes a protected branch (--force, +ref, --mirror, --delete).",
    ),
    ReasonCode(
        "cmd.git.config_exec",
        "git configuration that runs a program (alias !, core.pager, core.fsmonitor, hooksPath).",
    ),
    ReasonCode(
        "cmd.guard_tamper",
        "Edits the agents' hook settings or Domestique's own policy, keys or audit store.",
    ),
    ReasonCode(
        "cmd.interactive_shell",
        "Starts an interactive shell (from a tool's escape or bare), whose input is unseen.",
    ),
    ReasonCode(
        "cmd.shell_escape",
        "A tool is told to start a shell (GTFOBins-style escape: exec=/bin/sh, :!sh, -TT 'sh').",
    ),
    ReasonCode(
        "cmd.package_file",
        "Installs a package file (dpkg -i, rpm -U, apt install ./x.deb): its scripts run as root.",
    ),
    ReasonCode(
        "cmd.recon",
        "Privilege-escalation or credential hunting, or a search of the whole system (setuid, "
        "writable or owner searches, key and password hunts, grep -r or hidden-file hunts of /).",
    ),
    ReasonCode(
        "cmd.collection",
        "Packs data for removal: archives of / or home, mail or login records; encrypted "
        "archives of files outside the project; the account list copied to a file.",
    ),
    ReasonCode(
        "cmd.password_attack",
        "Guesses or cracks passwords (hydra, john, hashcat), or logs in with a password given "
        "on the command line (sshpass).",
    ),
    ReasonCode(
        "cmd.clock_change",
        "Sets the system clock or turns off time sync (log times and certificate checks).",
    ),
    ReasonCode(
        "cmd.network_config",
        "Changes name resolution or the system proxy (/etc/hosts, resolv.conf, networksetup).",
    ),
    ReasonCode(
        "cmd.evasion.timestomp",
        "Backdates file times before 1980 or copies a system file's times (touch -t/-d/-r, "
        "SetFile -m/-d): a changed file made to look old.",
    ),
    ReasonCode(
        "cmd.evasion.hidden_file",
        "Hides files from the user's file browser (chflags hidden, SetFile -a V).",
    ),
    ReasonCode(
        "cmd.evasion.shred", "Overwrites files so they cannot be recovered (shred): anti-forensics."
    ),
    ReasonCode(
        "cmd.debug_trap",
        "A DEBUG trap: the shell runs code before every command, which sees each command line.",
    ),
    ReasonCode(
        "cmd.script_unread",
        "A script that is run could not be read to judge it (too large, unreadable, nested).",
    ),
    ReasonCode(
        "cmd.non_ascii_name",
        "A command name with non-ASCII characters (homoglyphs, zero-width, bidi controls).",
    ),
)
