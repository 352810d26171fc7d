#!/usr/bin/env python3
"""Output files and refusals for the scripts, kept as the programs keep theirs
(common/cli.hpp). The Python scripts import it; the shell scripts call it through
scripts/common.sh (check_output_file, check_output_dir, tee_atomic), so there is one
set of rules for both.

A target is checked before any work: problem() gives one sentence naming it and what is
wrong (an empty name, a directory, something that is not a regular file, a read-only
file, a name longer than the file system takes, a missing or unwritable directory).
directory_problem() does the same for a folder to write files in, and input_problem()
for a folder or file to read. write() puts the data in a new file of a unique name
beside the target, then renames it into place, so a failed run leaves no partial file
and no other file is touched (a user's FILE.tmp included). The temporary name is the
target's with a dot before it and a dot and eight random characters after it, shortened where that would
pass the file system's limit, so every name up to that limit can be written.

Parser is argparse's parser with the programs' refusal: one sentence on stderr, exit 2.

As a program, for the shell scripts (the sentence on stdout, exit 2, when there is a
problem; nothing and exit 0 when there is none):
    output_files.py file WHAT PATH     may PATH be written as an output file?
    output_files.py dir WHAT PATH      may files be written in folder PATH (made if missing)?
    output_files.py temp PATH          make a new empty file beside PATH, print its name
    output_files.py commit TEMP PATH   rename TEMP (from temp) onto PATH, keeping PATH's mode
"""

from __future__ import annotations

import argparse
import os
import re
import stat
import sys
import tempfile


def name_max(directory: str) -> int:
    """The longest file name (in bytes) `directory` takes; 255 when the system does not say."""
    try:
        return os.pathconf(directory or ".", "PC_NAME_MAX")
    except (OSError, ValueError):
        return 255


def _temp_prefix(path: str) -> tuple[str, str]:
    """The folder of `path` and the prefix of a temporary name beside it: "." + the
    name + ".", the name shortened so that the prefix and the eight random characters
    tempfile.mkstemp adds fit."""
    directory = os.path.dirname(path) or "."
    base = os.fsencode(os.path.basename(path))
    room = name_max(directory) - len(b"..") - 8
    if len(base) > room:
        base = base[: max(room, 0)]
    return directory, "." + os.fsdecode(base) + "."


def temp_beside(path: str) -> tuple[int, str]:
    """A new, empty file of a unique name beside `path`: (open descriptor, its path)."""
    directory, prefix = _temp_prefix(path)
    return tempfile.mkstemp(prefix=prefix, dir=directory)


def problem(path: str, what: str) -> str:
    """The sentence saying why `path` cannot be written as an output file, or ""."""
    if not path:
        return f"{what} '' is not a file name: give the path of the file to write."
    quoted = f"{what} '{path}'"
    if os.path.lexists(path):
        try:
            st = os.stat(path)
        except OSError as e:
            return f"{quoted} cannot be read ({e.strerror}): give the path of a regular file."
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
    length, limit = len(os.fsencode(os.path.basename(path))), name_max(directory)
    if length > limit:
        return (f"cannot write {what} file '{path}': its name is {length} bytes long, and the directory "
                f"'{directory}' takes names of at most {limit}.")
    try:
        fd, probe = temp_beside(path)
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
    if os.path.lexists(path) and not os.path.isdir(path):
        return f"{what} '{path}' is not a directory: give a directory to write the files in."
    existing = path
    while not os.path.lexists(existing):
        parent = os.path.dirname(existing.rstrip("/")) or "."
        if parent == existing:
            break
        existing = parent
    if not os.path.isdir(existing):
        return f"{what} '{path}': '{existing}' is not a directory."
    limit = name_max(existing)
    for part in path.split("/"):
        if len(os.fsencode(part)) > limit:
            return (f"{what} '{path}': a name in it is {len(os.fsencode(part))} bytes long, and the file system "
                    f"takes names of at most {limit}.")
    try:
        fd, probe = tempfile.mkstemp(prefix=".probe.", dir=existing)
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        return f"{what} '{path}': files cannot be written in '{existing}' ({e.strerror})."
    return ""


def input_problem(path: str, what: str, kind: str = "directory", needs: str = "") -> str:
    """The sentence saying why `path` cannot be read as an input `kind` ("directory" or
    "file"), or "". `needs` says what it should hold (for the sentence)."""
    hint = f": give the {kind} {needs}" if needs else f": give an existing {kind}"
    if not path:
        return f"{what} '' is not a {kind} name{hint}."
    if not os.path.exists(path):
        return f"{what} '{path}' does not exist{hint}."
    if kind == "directory" and not os.path.isdir(path):
        return f"{what} '{path}' is not a directory{hint}."
    if kind == "file" and not os.path.isfile(path):
        return f"{what} '{path}' is not a regular file{hint}."
    if not os.access(path, os.R_OK | (os.X_OK if kind == "directory" else 0)):
        return f"{what} '{path}' cannot be read{hint}."
    return ""


def _mode_for(path: str) -> int:
    """The mode `path` has, or the one a new file would get."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o666 & ~mask


def write(path: str, data: str | bytes) -> None:
    """Writes `data` to `path` through a new file of a unique name beside it."""
    fd, temp = temp_beside(path)
    try:
        os.fchmod(fd, _mode_for(path))
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


class Parser(argparse.ArgumentParser):
    """argparse with the programs' refusal: "PROG: MESSAGE (see --help)." and exit 2."""

    def error(self, message):
        # argparse's wording, in the programs' (common/cli.cpp): "unknown option '--x'",
        # "--n needs a value".
        unknown = re.fullmatch(r"unrecognized arguments: (\S+).*", message)
        if unknown:
            message = f"unknown option '{unknown.group(1)}'"
        message = re.sub(r"^argument (\S+?)(/\S+)?: expected one argument$", r"\1 needs a value", message)
        print(f"{self.prog}: {message} (see --help).", file=sys.stderr)
        sys.exit(2)


def refuse(program: str, sentence: str) -> int:
    """Prints "PROGRAM: SENTENCE" on stderr; returns 2, the exit code of bad usage."""
    print(f"{program}: {sentence}", file=sys.stderr)
    return 2


def main(argv: list[str]) -> int:
    usage = ("usage: output_files.py file WHAT PATH | dir WHAT PATH | temp PATH | commit TEMP PATH")
    if len(argv) == 3 and argv[0] in ("file", "dir"):
        sentence = (problem if argv[0] == "file" else directory_problem)(argv[2], argv[1])
        if sentence:
            print(sentence)
            return 2
        return 0
    if len(argv) == 2 and argv[0] == "temp":
        try:
            fd, temp = temp_beside(argv[1])
            os.fchmod(fd, _mode_for(argv[1]))
            os.close(fd)
        except OSError as e:
            print(f"cannot create a file beside '{argv[1]}' ({e.strerror}).")
            return 1
        print(temp)
        return 0
    if len(argv) == 3 and argv[0] == "commit":
        try:
            os.chmod(argv[1], _mode_for(argv[2]))
            os.replace(argv[1], argv[2])
        except OSError as e:
            print(f"cannot rename '{argv[1]}' to '{argv[2]}' ({e.strerror}).")
            return 1
        return 0
    print(usage, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
