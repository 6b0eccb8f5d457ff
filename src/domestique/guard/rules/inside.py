"""Commands run inside a container or a pod: judged for what reaches out of it.

``docker run IMAGE sh -c '…'``, ``docker exec NAME …``, ``kubectl exec POD -- …`` run their
command in another file system, so a delete there is the container's business (what the host
shares with it is judged by ``escapes._rule_container``). The network is shared, though: a
reverse shell, remote code fetched and run, or credentials sent away from inside a container
reach the same hosts as from the laptop, often with the project or a cluster's secrets mounted.
The inner command is unfolded and judged like a line of its own; only those hits count here.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterator

from domestique.guard.model import Hit, Invocation
from domestique.guard.rules.registry import Context, rule

# What reaches out of a container whatever its file system.
_OUTWARD = frozenset(
    {"cmd.reverse_shell", "cmd.bind_shell", "cmd.pipe_to_shell", "cmd.exfiltration",
     "cmd.decode_exec", "cmd.remote_access"}
)  # fmt: skip
# docker/podman run and exec options that take a value (the next word when not written `=v`).
_VALUE_OPTIONS = frozenset(
    {"-v", "--volume", "-e", "--env", "-p", "--publish", "--name", "-w", "--workdir", "-u",
     "--user", "--network", "--net", "--entrypoint", "--env-file", "-l", "--label", "--mount",
     "--restart", "-m", "--memory", "--cpus", "--platform", "--add-host", "--hostname", "-h",
     "--device", "--cap-add", "--cap-drop", "--security-opt", "--ulimit", "--log-driver",
     "--log-opt", "--pid", "--ipc", "--gpus", "--runtime", "--tmpfs", "--dns", "--link",
     "--expose", "--group-add", "--shm-size", "--stop-signal", "--cidfile", "--pull",
     "--health-cmd", "--userns", "--uts", "--cgroupns", "--label-file", "--volumes-from",
     "--detach-keys", "--memory-swap", "--cpu-shares", "-c", "--cpuset-cpus", "--init-path"}
)  # fmt: skip
_ENGINES = frozenset({"docker", "podman", "nerdctl"})


# kubectl's options that may come before the subcommand and take a value (``--context prod``)
_KUBE_GLOBAL_VALUE = frozenset(
    {"-n", "--namespace", "--context", "--kubeconfig", "--cluster", "--user", "-s", "--server",
     "--as", "--as-group", "--token", "--request-timeout", "--certificate-authority",
     "--client-certificate", "--client-key", "--tls-server-name", "-v", "--v"}
)  # fmt: skip


def _kube_subcommand(args: list[str]) -> str | None:
    """kubectl's subcommand: the first word that is not a global option or an option's value."""
    i = 0
    while i < len(args) and args[i].startswith("-"):
        i += 2 if args[i] in _KUBE_GLOBAL_VALUE else 1
    return args[i] if i < len(args) else None


def inner_command(inv: Invocation) -> list[str] | None:
    """The argument vector run inside the container or pod, None when there is none."""
    n, args = inv.name, inv.args
    if n in ("kubectl", "oc"):
        if _kube_subcommand(args) != "exec" or "--" not in args:
            return None
        rest = args[args.index("--") + 1 :]
        return rest or None
    if n not in _ENGINES or not args:
        return None
    sub = args[0]
    if sub == "container" and len(args) > 1:
        args = args[1:]
        sub = args[0]
    if sub not in ("run", "exec"):
        return None
    entrypoint: list[str] = []
    i = 1
    while i < len(args):
        a = args[i]
        if a == "--":
            i += 1
            break
        if not a.startswith("-") or a == "-":
            break
        if a in ("--entrypoint",) and i + 1 < len(args):
            entrypoint = [args[i + 1]]
        elif a.startswith("--entrypoint="):
            entrypoint = [a.split("=", 1)[1]]
        i += 2 if a in _VALUE_OPTIONS else 1
    rest = args[i + 1 :]  # after the image (run) or the container (exec)
    command = [*entrypoint, *rest]
    return command or None


@rule(programs=_ENGINES | {"kubectl", "oc"}, args=True)
def _rule_inside_container(inv: Invocation, ctx: Context) -> Iterator[Hit]:
    """A reverse shell, remote code or exfiltration run inside a container or pod."""
    command = inner_command(inv)
    if command is None:
        return
    from domestique.guard.rules.engine import judge_unfolded
    from domestique.guard.unfold import unfold_command

    # shorter than the line it comes from, so nesting (docker run … docker run …) ends
    text = " ".join(shlex.quote(w) for w in command)
    unfolded = unfold_command(text, cwd=None, env=ctx.env)
    hits, _ = judge_unfolded(text, unfolded, cwd=None, env=ctx.env)
    for h in hits:
        if h.code in _OUTWARD:
            yield Hit(h.code, f"inside {inv.name}: {h.message}", inv.span, inv.render())
            return
