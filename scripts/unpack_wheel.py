#!/usr/bin/env python3
"""Copies one folder out of a wheel (a zip file), for the scripts that carry a library
from PyPI without installing it into Python (get_cccl.sh, get_mpi.sh).

    unpack_wheel.py WHEEL OUT --holding PATH   the folder that holds PATH (a file in it)
    unpack_wheel.py WHEEL OUT --data           the wheel's NAME.data/data/ folder

The folder's files land under OUT with their relative paths and their permissions (an
executable stays executable); a file that would land outside OUT is refused. Prints how
many files were copied. Exit codes: 0 done, 1 the folder is not found once in the wheel or
a file would land outside OUT, 2 bad usage.
"""
import argparse
import os
import sys
import zipfile


def folder_of(names, holding, data):
    if data:
        roots = {n.split("/data/", 1)[0] + "/data/" for n in names if ".data/data/" in n}
    else:
        roots = {n[: -len(holding)] for n in names if n.endswith("/" + holding)}
    return roots


def main():
    p = argparse.ArgumentParser(prog="unpack_wheel.py", description="Copies one folder out of a wheel.")
    p.add_argument("wheel")
    p.add_argument("out")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--holding", metavar="PATH", help="the folder that holds this file")
    which.add_argument("--data", action="store_true", help="the wheel's NAME.data/data/ folder")
    args = p.parse_args()
    out = os.path.abspath(args.out)
    name = os.path.basename(args.wheel)
    with zipfile.ZipFile(args.wheel) as z:
        roots = folder_of(z.namelist(), args.holding, args.data)
        if len(roots) != 1:
            what = "NAME.data/data/ folder" if args.data else args.holding
            print(f"unpack_wheel.py: expected one {what} in {name}, found {len(roots)}.", file=sys.stderr)
            return 1
        root = roots.pop()
        count = 0
        for info in z.infolist():
            if not info.filename.startswith(root) or info.filename.endswith("/"):
                continue
            target = os.path.abspath(os.path.join(out, info.filename[len(root):]))
            if os.path.commonpath([out, target]) != out:
                print(f"unpack_wheel.py: {info.filename} would land outside {out}.", file=sys.stderr)
                return 1
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with z.open(info) as src, open(target, "wb") as dst:
                dst.write(src.read())
            mode = (info.external_attr >> 16) & 0o777
            os.chmod(target, mode if mode else 0o644)
            count += 1
    print(f"{count} files from {name} ({root})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
