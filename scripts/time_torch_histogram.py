#!/usr/bin/env python3
"""Times torch.bincount on a uint8 CUDA tensor (a 256-bin histogram of bytes) the way
the histogram runner times a stage, and writes the runner's CSV columns, so the
PyTorch user's histogram sits beside the ladder (histogram/, chapters/27_histogram.md).

The method is the runner's:
  - the inputs are the runner's (histogram/inputs.cpp: uniform, skewed floor(256 u^8),
    one = every byte 42) for the seed, made once at the largest n and copied to the GPU;
    each n is a prefix of it;
  - one checked call per row, every count compared with numpy's count of the same bytes
    (equal or the row fails);
  - one untimed warm-up, then timed repetitions: before each, a read of a buffer twice
    the L2's size, outside the timed region; CUDA events around torch.bincount(x,
    minlength=256) only; up to --reps repetitions, at least --min-reps, no more than fit
    in --budget-ms per row; the median, min and max.
Exit codes: 0 done, 1 a row failed its check, 2 bad usage (nothing written), 3 no CUDA
device, 4 torch with CUDA is not installed (nothing written).

usage: time_torch_histogram.py [--n N[,N...] | --sweep LO:HI[:F]] [--input LIST]
                               [--reps R] [--min-reps R] [--budget-ms MS] [--warm-l2]
                               [--seed S] [--device D] [--csv FILE]
"""
import argparse
import datetime
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import output_files  # noqa: E402  the scripts' output checks and whole-file writes
import result_files  # noqa: E402  the runners' CSV format
import time_torch_cupy as tc  # noqa: E402  the torch/CuPy sum timer: number grammar, timing plan, metadata, CSV cells

PROGRAM = "time_torch_histogram.py"
EXIT_USAGE, EXIT_NO_DEVICE, EXIT_NO_TORCH = 2, 3, 4
INPUTS = ("uniform", "skewed", "one")
# The histogram runner's CSV columns, in its order (histogram/runner.cpp).
COLUMNS = ("n", "bytes", "bins", "input", "key", "id", "stage", "kind", "grid", "block", "reps", "median_us", "min_us",
           "max_us", "gbs", "pct_peak", "vs_previous", "vs_cub", "single_launch", "check", "check_detail")
def parse_args(argv):
    """The options as a dict; raises tc.UsageError (argparse itself exits 2 on its own errors
    and 0 after --help)."""
    p = output_files.Parser(prog=PROGRAM, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", metavar="N[,N...]", help="bytes to count (default 2^26), or several sizes, comma-separated")
    p.add_argument("--sweep", metavar="LO:HI[:F]", help="every size from LO to HI, multiplying by F (default 2)")
    p.add_argument("--input", metavar="LIST", default="uniform",
                   help="uniform (default), skewed, one, or several, comma-separated")
    tc.add_run_options(p, reps=50, budget_ms=500)
    a = p.parse_args(argv)
    if a.n is not None and a.sweep is not None:
        raise tc.UsageError("--n and --sweep cannot be combined: drop one of them.")
    if a.sweep is not None:
        sizes = tc.parse_sweep(a.sweep)
        if sizes[-1] > (1 << 32) - 1:
            raise tc.UsageError(f"--sweep '{a.sweep}' goes past 4294967295 bytes, where a 32-bit count could "
                                "overflow.")
    else:
        sizes = [tc.parse_count(v, "--n", 1, (1 << 32) - 1) for v in (a.n or "2^26").split(",") if v]
        if not sizes:
            raise tc.UsageError(f"--n '{a.n}' names no size: write one, such as 2^26.")
    items = [x for x in a.input.split(",") if x]
    if not items or any(x not in INPUTS for x in items):
        raise tc.UsageError(f"--input '{a.input}' is not an input: write uniform, skewed or one (or a "
                            "comma-separated list of them).")
    return {"sizes": sorted(set(sizes)), "inputs": list(dict.fromkeys(items)), **tc.run_options(a)}


def make_bytes(kind, seed, n):
    """histogram/inputs.cpp's make_values for 256 bins: byte i from common::hash64(seed, i)."""
    import numpy as np
    out = np.empty(n, dtype=np.uint8)
    if kind == "one":
        out[:] = 42
        return out
    for start, z in tc.hash64_chunks(seed, n):
        if kind == "uniform":
            v = (z >> np.uint64(48)) & np.uint64(0xFF)
        else:
            u = (z >> np.uint64(11)).astype(np.float64) * 2.0**-53
            u2 = u * u
            u4 = u2 * u2
            v = np.minimum(255.0, np.floor(256.0 * (u4 * u4)))
        out[start:start + len(z)] = v.astype(np.uint8)
    return out


def first_difference(got, want):
    """'' when equal, else the runner's sentence for the first wrong bin."""
    if len(got) != len(want):
        return f"{len(got)} counts instead of {len(want)}"
    wrong = [b for b in range(len(want)) if int(got[b]) != int(want[b])]
    if not wrong:
        return ""
    b = wrong[0]
    return f"bin {b} holds {int(got[b])} instead of {int(want[b])}; {len(wrong)} of {len(want)} bins wrong"


def to_csv(meta, records):
    """'# key: value' lines, the header, one line per record (a dict over COLUMNS)."""
    return result_files.csv_text(list(COLUMNS), records, meta, number=".10g")


def main(argv):
    try:
        opt = parse_args(argv)
    except tc.UsageError as e:
        print(f"{PROGRAM}: {e}", file=sys.stderr)
        return EXIT_USAGE
    try:
        meta_device = tc.device_metadata(opt["device"])
    except RuntimeError as e:
        print(f"{PROGRAM}: {e}", file=sys.stderr)
        return EXIT_NO_DEVICE
    try:
        import numpy as np
        import torch
        if not torch.cuda.is_available():
            raise ImportError("torch was built without CUDA")
    except ImportError as e:
        print(f"{PROGRAM}: torch with CUDA and numpy are needed ({e}); nothing was timed or written.",
              file=sys.stderr)
        return EXIT_NO_TORCH
    dev = torch.device("cuda", opt["device"])
    torch.cuda.set_device(dev)
    info = dict(meta_device)
    l2_bytes, peak = int(info["l2_bytes"]), float(info["peak_gbs"])
    flush_buf = None if opt["warm_l2"] else torch.ones(max(2 * l2_bytes, 1 << 20) // 4, dtype=torch.int32, device=dev)
    sizes, n_max = opt["sizes"], max(opt["sizes"])
    title = f"torch.bincount (torch {torch.__version__})"
    print(f"{PROGRAM} on {info['device']}: torch {torch.__version__}, 256 bins of bytes, {len(sizes)} size(s) from "
          f"{tc.format_count(sizes[0])} to {tc.format_count(n_max)}, median of up to {opt['reps']} repetitions, L2 "
          f"{'warm' if opt['warm_l2'] else 'flushed before each repetition (read)'}\n")
    print(f"{'n':>9} {'input':<7} {'reps':>5} {'median-us':>10} {'GB/s':>7} {'%peak':>6} check")
    records, all_ok = [], True
    for kind in opt["inputs"]:
        host = make_bytes(kind, opt["seed"], n_max)
        x_all = torch.from_numpy(host).to(dev)
        torch.cuda.synchronize()
        for n in sizes:
            x = x_all[:n]
            want = np.bincount(host[:n], minlength=256)
            detail = first_difference(torch.bincount(x, minlength=256).cpu().numpy(), want)
            times = []
            if not detail:
                start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

                def one_rep():
                    if flush_buf is not None:
                        flush_buf.max()  # a read of the whole buffer, leaving clean lines in the L2
                    start.record()
                    torch.bincount(x, minlength=256)
                    stop.record()
                    stop.synchronize()
                    times.append(start.elapsed_time(stop) * 1e3)

                one_rep()  # the warm-up
                times.clear()
                t0 = datetime.datetime.now()
                one_rep()
                first_ms = (datetime.datetime.now() - t0).total_seconds() * 1e3
                reps = tc.planned_repetitions(first_ms, opt["reps"], opt["min_reps"], opt["budget_ms"])
                while len(times) < reps:
                    one_rep()
            med = tc.median(times) if times else math.nan
            gbs = n / (med * 1e-6) / 1e9 if times else math.nan
            rec = {"n": n, "bytes": n, "bins": 256, "input": kind, "key": "torch", "id": "torch_bincount",
                   "stage": title, "kind": "peer", "grid": None, "block": None,
                   "reps": (str(len(times)) + ("*" if len(times) < opt["reps"] else "")) if times else "-",
                   "median_us": med, "min_us": min(times) if times else math.nan,
                   "max_us": max(times) if times else math.nan, "gbs": gbs, "pct_peak": 100 * gbs / peak,
                   "vs_previous": None, "vs_cub": None, "single_launch": "unknown",
                   "check": "FAIL" if detail else "ok", "check_detail": detail or "every count exact"}
            num = (lambda v, d: "-" if v is None or math.isnan(v) else f"{v:.{d}f}")
            print(f"{tc.format_count(n):>9} {kind:<7} {rec['reps']:>5} {num(med, 1):>10} {num(gbs, 0):>7} "
                  f"{num(rec['pct_peak'], 1):>6} {rec['check']}", flush=True)
            if detail:
                print(f"  torch.bincount failed its check: {detail}")
                all_ok = False
            records.append(rec)
        del x_all
    meta = meta_device + [
        ("torch_version", torch.__version__), ("torch_cuda", torch.version.cuda or "?"), ("commit", tc.git_commit()),
        ("date", datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")),
        ("program", PROGRAM), ("bins", "256"), ("values", "bytes, bin = value"), ("seed", str(opt["seed"])),
        ("max_reps", str(opt["reps"])), ("min_reps", str(opt["min_reps"])),
        ("budget_ms_per_row", f"{opt['budget_ms']:.6f}"), ("l2_flushed", "no" if opt["warm_l2"] else "yes"),
        ("l2_flush", "none" if opt["warm_l2"] else "read"),
        ("timing", "CUDA events around torch.bincount, median of the repetitions")]
    if opt["csv"]:
        output_files.write(opt["csv"], to_csv(meta, records))
    if not all_ok:
        print("\nSome rows FAILED their check.")
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
