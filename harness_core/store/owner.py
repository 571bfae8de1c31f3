"""Whose runs directory and run files these are: one another user owns, or others may write, is refused (git's
`safe.directory` rule: they could read the runs, or answer a run's approvals), and a run file is opened without
following a link planted in its place.

Layer: core storage (behind `harness_core.store`). Knows file owners and modes; nothing of events or the CLI.
"""

from __future__ import annotations

import os
import pwd
import stat
from pathlib import Path

from harness_core.errors import InvalidSpecError

__all__ = ["UnsafeRunsDirError", "check_runs_dir", "open_run_file"]

_ELSEWHERE = "or keep your runs elsewhere (--runs-dir DIR or HARNESS_RUNS_DIR)"


class UnsafeRunsDirError(InvalidSpecError):
    """The runs directory (or a file in it) belongs to another user, or others may write it: it is not used."""

    code = "unsafe_runs_dir"


def _user(uid: int) -> str:
    try:
        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except KeyError:
        return f"uid {uid}"


def _name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def _writers(mode: int) -> str:
    return " and ".join(who for who, bit in (("its group", stat.S_IWGRP), ("every user", stat.S_IWOTH))
                        if mode & bit)


def check_runs_dir(path: Path) -> None:
    """Nothing when `path` (if it exists) is a directory of this user that no one else may write.

    Raises:
        UnsafeRunsDirError: another user owns it, or its group or everyone may write it; the message says how
            to fix it.
    """
    try:
        st = path.stat()  # a runs dir reached through a link is the directory it names: that one is checked
    except FileNotFoundError:
        return
    except OSError as exc:
        raise UnsafeRunsDirError(f"cannot use the runs directory {path}: {exc.strerror or exc}; fix its "
                                 f"permissions {_ELSEWHERE}", path=str(path)) from None
    me = os.geteuid()
    if st.st_uid != me:
        raise UnsafeRunsDirError(
            f"the runs directory {path} belongs to {_user(st.st_uid)}, not to you ({_user(me)}), so it is not used: "
            f"its owner could read your runs and answer their approvals. If it is yours, take it back "
            f"(`sudo chown -R {_name(me)} {path}`), {_ELSEWHERE}", path=str(path), owner=st.st_uid)
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise UnsafeRunsDirError(
            f"the runs directory {path} may be written by {_writers(st.st_mode)} (mode "
            f"{stat.S_IMODE(st.st_mode):04o}), so it is not used: anyone who may write it could plant a run's "
            f"answers. Make it private (`chmod 700 {path}`), {_ELSEWHERE}", path=str(path))


def open_run_file(path: Path, flags: int, mode: int = 0o600) -> int:
    """`os.open` for a file of a run, never through a symbolic link; the file opened must be a regular file of
    this user that no one else may write. Returns the descriptor (the caller closes it).

    Raises:
        FileNotFoundError: as `os.open` (no such file, and no `O_CREAT`).
        UnsafeRunsDirError: a link in its place, another user's file, one others may write, or not a file.
    """
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
    except FileNotFoundError:
        raise
    except OSError:
        if os.path.islink(path):
            raise UnsafeRunsDirError(f"{path} is a symbolic link, not a run's file, so it is not used; remove it "
                                     f"(`rm {path}`)", path=str(path)) from None
        raise
    st = os.fstat(fd)
    problem = None
    if not stat.S_ISREG(st.st_mode):
        problem = "is not a regular file"
    elif st.st_uid != os.geteuid():
        problem = f"belongs to {_user(st.st_uid)}, not to you"
    elif st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        problem = f"may be written by {_writers(st.st_mode)}"
    if problem is not None:
        os.close(fd)
        raise UnsafeRunsDirError(f"{path} {problem}, so it is not used as a run's file (someone else may have put "
                                 f"it there); remove it (`rm {path}`) and check who else can write {path.parent}",
                                 path=str(path))
    return fd
