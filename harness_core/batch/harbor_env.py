"""A Harbor task's container as Harness stands in for it on the host: `environment/Dockerfile` read into a workspace
(its last WORKDIR, the files it COPYs, its ENV) or refused when it needs an image built, and the verifier command
that runs `tests/test.sh` under bubblewrap with the container's paths (/tests, /logs/verifier, WORKDIR) mapped.

Layer: batch (pure: reads files, builds strings; starts nothing). What is refused: docs/jobs-and-batches.md.
"""

from __future__ import annotations

import json
import posixpath
import re
import shlex
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["CONTAINER_NEEDED", "Environment", "read_dockerfile", "verifier_command"]

CONTAINER_NEEDED = "needs a container (`--environment docker`, which Harness does not have yet)"
"""The end of every refusal of a task whose environment only a container can give."""

_IGNORED = frozenset({"LABEL", "MAINTAINER", "CMD", "ENTRYPOINT", "EXPOSE", "STOPSIGNAL", "HEALTHCHECK", "SHELL",
                      "USER", "ARG", "VOLUME", "ONBUILD"})
"""Instructions that change nothing the agent or the verifier sees on the host (USER: both run as you)."""
_COPY_FLAGS_IGNORED = ("--chown", "--chmod", "--link")
SYSTEM_DIRS = frozenset({"bin", "boot", "dev", "etc", "home", "lib", "lib32", "lib64", "libx32", "media", "mnt",
                         "opt", "proc", "root", "run", "sbin", "srv", "sys", "tmp", "usr", "var", "tests", "logs"})
"""Top directories the verifier's sandbox keeps from the host (or makes itself): a WORKDIR under one is refused."""
_GLOB = re.compile(r"[*?\[]")
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_MAX_DOCKERFILE = 1 << 20


@dataclass(frozen=True)
class Environment:
    """What a plain Dockerfile gives the agent: where it works, what is there, and the variables it sets."""

    workdir: str
    """The container's working directory (absolute): the workspace is mapped there for the verifier."""
    files: tuple[tuple[Path, str], ...] = ()
    """(a file, or a directory whose contents are copied; where, relative to the workspace)."""
    env: dict[str, str] = field(default_factory=dict)


def read_dockerfile(env_dir: Path) -> tuple[Environment | None, list[str]]:
    """`env_dir/Dockerfile` as a workspace, or every reason it needs a container (or is unreadable)."""
    path = env_dir / "Dockerfile"
    try:
        if path.stat().st_size > _MAX_DOCKERFILE:
            return None, [f"environment/Dockerfile is over {_MAX_DOCKERFILE >> 20} MiB"]
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return None, [f"cannot read environment/Dockerfile: {getattr(exc, 'strerror', None) or exc}"]
    problems: list[str] = []
    froms = 0
    workdir: str | None = None
    workdirs: set[str] = set()
    copies: list[tuple[int, list[str], str, str]] = []  # line, sources, destination, the WORKDIR then
    env: dict[str, str] = {}
    for number, name, args in _instructions(text):
        at = f"environment/Dockerfile line {number}"
        if name == "FROM":
            froms += 1
            if froms == 2:
                problems.append(f"{at}: a second FROM (a multi-stage build) {CONTAINER_NEEDED}")
        elif name == "WORKDIR":
            if "$" in args:
                problems.append(f"{at}: WORKDIR {args} refers to a build variable; give the path itself")
                continue
            workdir = posixpath.normpath(posixpath.join(workdir or "/", args.strip()))
            workdirs.add(workdir)
        elif name == "COPY":
            copy, problem = _copy_args(args)
            if problem is not None:
                problems.append(f"{at}: {problem}")
            elif copy is not None:
                copies.append((number, copy[0], copy[1], workdir or "/"))
        elif name == "ENV":
            problem = _env(args, env)
            if problem is not None:
                problems.append(f"{at}: {problem}")
        elif name == "<<":
            problems.append(f"{at}: a heredoc {CONTAINER_NEEDED}")
            break
        elif name not in _IGNORED:
            shown = f"{name} {args}" if len(args) <= 60 else f"{name} {args[:57]}..."
            problems.append(f"{at}: `{shown}` builds the image: it {CONTAINER_NEEDED}")
    if froms == 0:
        problems.append("environment/Dockerfile has no FROM")
    if workdir is None:
        problems.append("environment/Dockerfile sets no WORKDIR: Harness plays a task in a copy of its workspace "
                        "and needs to know where that is in the container (WORKDIR /app, say)")
        return None, problems
    top = workdir.split("/")[1] if workdir != "/" else ""
    if not top or top in SYSTEM_DIRS or not re.fullmatch(r"[A-Za-z0-9._-]+", top):
        problems.append(f"environment/Dockerfile's WORKDIR {workdir} is not a directory of its own (such as /app): "
                        f"the verifier would map the workspace over the host's /{top}; it {CONTAINER_NEEDED}")
    files: list[tuple[Path, str]] = []
    for number, sources, dest, then in copies:
        at = f"environment/Dockerfile line {number}"
        target = posixpath.normpath(posixpath.join(then, dest))
        if target != workdir and not target.startswith(workdir.rstrip("/") + "/"):
            problems.append(f"{at}: COPY to {target}, outside the workspace (WORKDIR {workdir}): it "
                            f"{CONTAINER_NEEDED}")
            continue
        rel = posixpath.relpath(target, workdir)
        found, said = _sources(env_dir, sources)
        if said:
            problems += [f"{at}: {problem}" for problem in said]
            continue
        into_dir = dest.endswith(("/", "/.")) or dest == "." or target in workdirs or len(found) > 1
        for source in found:
            files.append((source, posixpath.normpath(posixpath.join(rel, source.name)) if source.is_file()
                          and into_dir else rel))
    if problems:
        return None, problems
    return Environment(workdir, tuple(files), env), []


def verifier_command(tests_dir: Path, workdir: str, from_host: Mapping[str, tuple[str, str | None]],
                     env_names: Collection[str] = ()) -> str:
    """The shell command (run in the task's workspace, with `$HARNESS_VERIFIER_DIR` set) that plays Harbor's
    verifier on the host: `bash /tests/test.sh` under bubblewrap, the host's top directories bound read-only, a
    fresh empty `$HOME` (a tmpfs), the workspace at `workdir`, `tests_dir` read-only at /tests,
    `$HARNESS_VERIFIER_DIR` at /logs/verifier, a fresh /tmp: the test can write nothing of the host but the
    workspace and the verifier directory. Its environment is cleared, then holds only PATH, HOME, LANG, the task's
    variables (`env_names` and `from_host`, when set) and the process supervisor's `HARNESS_PROC_*` mark: none of
    Harness's secrets. Exit 0 when the test wrote a reward (Harbor reads only the reward), else the test's status
    (1 for 0). `from_host`: variables Harbor resolves from the host (`${NAME}`, `${NAME:-default}`) when the
    verifier starts: {variable: (host variable, default or None)}."""
    top = workdir.split("/")[1]
    lines = [': "${HARNESS_VERIFIER_DIR:?is not set: the batch sets it for each verifier}"',
             "command -v bwrap >/dev/null 2>&1 || { echo 'harness: a Harbor task is verified under bubblewrap "
             "(bwrap), which is not installed here: apt-get install bubblewrap' >&2; exit 127; }"]
    for key, (name, default) in from_host.items():
        fallback = f"{key}={shlex.quote(default)}" if default is not None else (
            f"{{ echo {shlex.quote(f'harness: the verifier needs {name} (task.toml: {key} = ${{{name}}})')} >&2; "
            "exit 2; }")
        lines.append(f'if [ -n "${{{name}+x}}" ]; then {key}="${name}"; else {fallback}; fi; export {key}')
    mapped = "|".join(["proc", "dev", "tmp", "tests", "logs", shlex.quote(top)])
    passed = sorted({"PATH", "LANG", *env_names, *from_host} - {"HOME"})
    lines += [
        "set --",
        "for e in /*; do",
        f'  case "${{e#/}}" in {mapped}) ;;',
        '  *) if [ -L "$e" ]; then set -- "$@" --symlink "$(readlink "$e")" "$e"; '
        'else set -- "$@" --ro-bind "$e" "$e"; fi ;;',
        "  esac",
        "done",
        # a throwaway $HOME where the test may install (uv, pip --user): the host's path when it is a directory
        # the sandbox can cover, else /tmp/harness-home
        'home=${HOME:-}; home_top=${home#/}; home_top=${home_top%%/*}',
        'case "$home" in /?*) ;; *) home= ;; esac',
        f'case "$home_top" in proc|dev|tests|logs|{shlex.quote(top)}) home= ;; esac',
        'if [ -n "$home" ] && [ ! -d "$home" ] && [ "$home_top" != tmp ]; then home=; fi',
        '[ -n "$home" ] || home=/tmp/harness-home',
        'set -- "$@" --setenv HOME "$home"',
        *(f'if [ -n "${{{name}+x}}" ]; then set -- "$@" --setenv {name} "${name}"; fi' for name in passed),
        # the supervisor's mark, so whatever the test leaves running is still found and killed
        "for name in $(env | sed -n 's/^\\(HARNESS_PROC_[A-Za-z0-9_]*\\)=.*/\\1/p'); do",
        '  set -- "$@" --setenv "$name" "$(printenv "$name")"',
        "done",
        f'bwrap --die-with-parent --unshare-pid --clearenv "$@" --proc /proc --dev /dev --tmpfs /tmp '
        f'--tmpfs "$home" --ro-bind {shlex.quote(str(tests_dir))} /tests '
        f'--bind "$HARNESS_VERIFIER_DIR" /logs/verifier --bind "$PWD" {shlex.quote(workdir)} '
        f'--chdir {shlex.quote(workdir)} bash /tests/test.sh',
        "status=$?",
        'if [ -e "$HARNESS_VERIFIER_DIR/reward.txt" ] || [ -e "$HARNESS_VERIFIER_DIR/reward.json" ]; then exit 0; fi',
        'echo "harness: tests/test.sh ended (exit status $status) without writing /logs/verifier/reward.txt or '
        'reward.json" >&2',
        '[ "$status" -ne 0 ] || status=1',
        'exit "$status"',
    ]
    return "\n".join(lines)


def _instructions(text: str) -> list[tuple[int, str, str]]:
    """(line, INSTRUCTION, arguments) of a Dockerfile: comments skipped, continued lines joined; a heredoc
    (`<<`) is returned as instruction "<<" and ends the reading."""
    escape = "\\"
    found: list[tuple[int, str, str]] = []
    parts: list[str] = []
    start = 0
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not parts and number == 1 and re.fullmatch(r"#\s*escape\s*=\s*`", line):
            escape = "`"
        if not line or line.startswith("#"):
            continue
        if not parts:
            start = number
        if line.endswith(escape):
            parts.append(line[:-1].strip())
            continue
        parts.append(line)
        name, _, args = " ".join(parts).partition(" ")
        parts = []
        found.append((start, name.upper(), args.strip()))
        if re.search(r"<<-?\s*['\"]?[A-Za-z_]", args) and name.upper() in ("RUN", "COPY", "ADD"):
            if name.upper() == "COPY":
                found[-1] = (start, "<<", args)
            break
    if parts:
        name, _, args = " ".join(parts).partition(" ")
        found.append((start, name.upper(), args.strip()))
    return found


def _copy_args(args: str) -> tuple[tuple[list[str], str] | None, str | None]:
    """COPY's (sources, destination), or the problem with it."""
    words: list[str]
    try:
        flags = []
        rest = args
        while rest.startswith("--"):
            flag, _, rest = rest.partition(" ")
            flags.append(flag)
            rest = rest.strip()
        if rest.startswith("["):
            loaded = json.loads(rest)
            if not isinstance(loaded, list) or not all(isinstance(word, str) for word in loaded):
                return None, "COPY [...] is a JSON list of strings"
            words = loaded
        else:
            words = shlex.split(rest)
    except (ValueError, json.JSONDecodeError) as exc:
        return None, f"COPY {args}: cannot read it ({exc})"
    for flag in flags:
        if flag.startswith("--from"):
            return None, f"COPY {flag} copies from another image: it {CONTAINER_NEEDED}"
        if not flag.startswith(_COPY_FLAGS_IGNORED):
            return None, f"COPY {flag} is not a flag Harness knows; it {CONTAINER_NEEDED}"
    if len(words) < 2:
        return None, "COPY needs a source and a destination"
    if any("$" in word for word in words):
        return None, f"COPY {args} refers to a build variable; give the paths themselves"
    return (words[:-1], words[-1]), None


def _sources(env_dir: Path, sources: list[str]) -> tuple[list[Path], list[str]]:
    """What COPY's sources name in the build context (environment/): every match of a pattern, in order."""
    root = env_dir.resolve()
    found: list[Path] = []
    said: list[str] = []
    for source in sources:
        relative = source.lstrip("/") or "."
        matches = sorted(root.glob(relative)) if _GLOB.search(relative) else [root / relative]
        matches = [match for match in matches if match.exists()]
        if not matches:
            said.append(f"COPY {source}: no such file in environment/")
            continue
        for match in matches:
            resolved = match.resolve()
            if resolved != root and root not in resolved.parents:
                said.append(f"COPY {source}: outside environment/ (the build context)")
            else:
                found.append(resolved)
    return found, said


def _env(args: str, env: dict[str, str]) -> str | None:
    """ENV's variables into `env`, or the problem with it."""
    try:
        words = shlex.split(args)
    except ValueError as exc:
        return f"ENV {args}: cannot read it ({exc})"
    if not words:
        return "ENV needs a variable"
    pairs = [word.partition("=") for word in words] if "=" in words[0] else [(words[0], "=", " ".join(words[1:]))]
    for name, equals, value in pairs:
        if not equals or not ENV_NAME.fullmatch(name):
            return f"ENV {args}: {name!r} is not NAME=VALUE"
        if "$" in value:
            return f"ENV {name}={value} refers to a variable; give the value itself"
        env[name] = value
    return None
