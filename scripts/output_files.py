"""Output files for the scripts, kept as the programs keep theirs (common/cli.hpp).

A target is checked before any work: problem() gives one sentence naming it and what is
wrong (an empty name, a directory, something that is not a regular file, a read-only
file, a missing or unwritable directory). write() puts the data in a new file of a
unique name beside the target, then renames it into place, so a failed run leaves no
partial file and no other file is touched (a user's FILE.tmp included).
"""

from __future__ import annotations

import os
import stat
import tempfile


def problem(path: str, what: str) -> str:
    """The sentence saying why `path` cannot be written as an output file, or ""."""
    if not path:
        return f"{what} '' is not a file name: give the path of the file to write."
    quoted = f"{what} '{path}'"
    if os.path.exists(path):
        st = os.stat(path)
        if stat.S_ISDIR(st.st_mode):
            return f"{quoted} is a directory: give the path of a file in it."
        if not stat.S_ISREG(st.st_mode):
            return (f"{quoted} is not a regular file: the output is written to a new file beside it and renamed "
                    "into place, so give the path of a regular file.")
        if not st.st_mode & 0o222 or not os.access(path, os.W_OK):
            return f"{quoted} is a read-only file: make it writable or give another name."
    if path.endswith("/"):
        return f"{quoted} ends in '/': give the path of a file, not a directory."
    directory = os.path.dirname(path) or "."
    if not os.path.exists(directory):
        return f"cannot write {what} file '{path}': the directory '{directory}' does not exist."
    if not os.path.isdir(directory):
        return f"cannot write {what} file '{path}': '{directory}' is not a directory."
    try:
        fd, probe = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", dir=directory)
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        return f"cannot write {what} file '{path}': the directory '{directory}' is not writable ({e.strerror})."
    return ""


def directory_problem(path: str, what: str) -> str:
    """The sentence saying why files cannot be written in directory `path` (to be
    created if it does not exist), or "". Creates nothing."""
    if not path:
        return f"{what} '' is not a directory name: give the directory to write in."
    if os.path.exists(path) and not os.path.isdir(path):
        return f"{what} '{path}' is not a directory: give a directory to write the files in."
    existing = path
    while not os.path.exists(existing):
        parent = os.path.dirname(existing.rstrip("/")) or "."
        if parent == existing:
            break
        existing = parent
    if not os.path.isdir(existing):
        return f"{what} '{path}': '{existing}' is not a directory."
    try:
        fd, probe = tempfile.mkstemp(prefix=".probe.", dir=existing)
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        return f"{what} '{path}': files cannot be written in '{existing}' ({e.strerror})."
    return ""


def write(path: str, data: str | bytes) -> None:
    """Writes `data` to `path` through a new file of a unique name beside it."""
    directory = os.path.dirname(path) or "."
    fd, temp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", dir=directory)
    try:
        if os.path.exists(path):
            mode = stat.S_IMODE(os.stat(path).st_mode)
        else:
            mask = os.umask(0)
            os.umask(mask)
            mode = 0o666 & ~mask
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as f:
            fd = -1
            f.write(data.encode("utf-8") if isinstance(data, str) else data)
        os.replace(temp, path)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        if os.path.exists(temp):
            os.unlink(temp)
        raise
