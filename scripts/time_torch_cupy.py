#!/usr/bin/env python3
"""Times torch.sum and cupy.sum on float32 CUDA arrays the way the reduce runner times a
stage, and writes the runner's CSV format, so Python users' peers sit beside the stages.

The method is the runner's (common/timing.hpp):
  - the inputs are the runner's uniform pattern for the seed (common/inputs.cpp), copied
    to the GPU once; each n is a prefix of the largest;
  - one checked call per row, compared with a double-precision reference of the same
    floats within the error bound the runner uses for CUB (common/verify.hpp);
  - one untimed warm-up, then timed repetitions: before each, a read of a buffer twice the
    L2's size (the read flush), outside the timed region; CUDA events on the library's
    current stream around the call only; up to --reps repetitions, at least --min-reps,
    no more than fit in --budget-ms per row; the median, min and max;
  - the CSV has the runner's columns in its order and its '# key: value' metadata lines
    (common/output.cpp), with kind "peer".
A library that is not installed is skipped with a sentence; with neither, nothing is
written. Exit codes: 0 done, 1 a row failed its check, 2 bad usage (nothing written),
3 no CUDA device.

"""
import argparse
import datetime
import math
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import output_files  # noqa: E402  scripts/output_files.py: the scripts' output checks and whole-file writes
import result_files  # noqa: E402  scripts/result_files.py: the runner's CSV format

PROGRAM = "time_torch_cupy.py"
EXIT_NO_DEVICE = 3
LIBRARIES = ("torch", "cupy")

# The reduce runner's CSV columns, in its order (reduction/runner.cpp, make_record).
COLUMNS = ("n", "key", "id", "stage", "kind", "block", "grid", "reps", "median_us", "min_us", "max_us", "gbs",
           "pct_peak", "speedup_vs_01", "vs_previous", "vs_cub", "result", "reference", "abs_error", "rel_error",
           "tolerance", "check", "deterministic", "single_launch", "book_v100_ms")

class UsageError(Exception):
    """One sentence naming the bad value and what is allowed."""


# ---------------------------------------------------------------- numbers (common/cli.cpp)

_MULTIPLES = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
_BYTES = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}


def parse_count(text, what, lo=1, hi=1 << 40):
    """A count of floats: 16777216, 2^24, 16M or 64MiB (bytes, divided by 4), in [lo, hi]."""
    t = text.strip()
    m = re.fullmatch(r"(\d+)", t)
    power = re.fullmatch(r"(\d+)\^(\d+)", t)
    multiple = re.fullmatch(r"(\d+)([KMGT])", t)
    nbytes = re.fullmatch(r"(\d+)(B|KiB|MiB|GiB|TiB)", t)
    if m:
        value = int(m.group(1))
    elif power:
        base, exponent = int(power.group(1)), int(power.group(2))
        if base < 2:
            raise UsageError(f"{what} '{text}': the base of a power must be at least 2 (for example 2^24).")
        if exponent > 64:
            raise UsageError(f"{what} '{text}' is too large: it must be at most {hi}.")
        value = base**exponent
    elif multiple:
        value = int(multiple.group(1)) * _MULTIPLES[multiple.group(2)]
    elif nbytes:
        total = int(nbytes.group(1)) * _BYTES[nbytes.group(2)]
        if total % 4:
            raise UsageError(f"{what} '{text}' is not a whole number of 4-byte floats.")
        value = total // 4
    else:
        raise UsageError(f"{what} '{text}' is not a count: write 16777216, 2^24, 16M or 64MiB.")
    if value < lo:
        raise UsageError(f"{what} '{text}' is too small: it must be at least {lo}.")
    if value > hi:
        raise UsageError(f"{what} '{text}' is too large: it must be at most {hi}.")
    return value


def parse_int(text, what, lo, hi):
    if not re.fullmatch(r"\s*\d+\s*", text):
        raise UsageError(f"{what} '{text}' is not a whole number from {lo} to {hi}.")
    value = int(text)
    if not lo <= value <= hi:
        raise UsageError(f"{what} '{text}' is out of range: it must be from {lo} to {hi}.")
    return value


def parse_double(text, what, lo, hi):
    if not re.fullmatch(r"\s*\d+(\.\d+)?\s*", text):
        raise UsageError(f"{what} '{text}' is not a number from {lo:g} to {hi:g}.")
    value = float(text)
    if not lo <= value <= hi:
        raise UsageError(f"{what} '{text}' is out of range: it must be from {lo:g} to {hi:g}.")
    return value


def parse_sweep(text):
    """'LO:HI' (every power of two) or 'LO:HI:FACTOR', as the runner's --sweep."""
    parts = text.split(":")
    if len(parts) not in (2, 3):
        raise UsageError(f"--sweep '{text}' is not a range: write LO:HI (for example 2^10:2^30) or LO:HI:FACTOR.")
    lo = parse_count(parts[0], "--sweep start")
    hi = parse_count(parts[1], "--sweep end")
    factor = parse_int(parts[2], "--sweep factor", 2, 1024) if len(parts) == 3 else 2
    if lo > hi:
        raise UsageError(f"--sweep '{text}': the start is larger than the end.")
    sizes = []
    v = lo
    while v <= hi:
        sizes.append(v)
        v *= factor
    return sizes


def format_count(n):
    """16777216 -> '2^24', 1000 -> '1000' (common/cli.cpp)."""
    return f"2^{n.bit_length() - 1}" if n > 1 and n & (n - 1) == 0 else str(n)


def build_parser():
    p = output_files.Parser(prog=PROGRAM, description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", help="elements to sum (default 2^24): 16777216, 2^24, 16M or 64MiB")
    p.add_argument("--sweep", metavar="LO:HI[:F]", help="every size from LO to HI, multiplying by F (default 2)")
    p.add_argument("--libs", metavar="LIST", default=",".join(LIBRARIES),
                   help="libraries to time, comma-separated: torch, cupy (default both)")
    add_run_options(p, reps=100, budget_ms=1000)
    return p


def add_run_options(p, reps, budget_ms):
    """The options every Python timer shares with the runners: repetitions, budget, L2,
    seed, device and CSV (read back by run_options)."""
    p.add_argument("--reps", metavar="R", default=str(reps), help=f"repetitions wanted per row (default {reps})")
    p.add_argument("--min-reps", metavar="R", help="never fewer repetitions, whatever the budget (default 3)")
    p.add_argument("--budget-ms", metavar="MS", default=str(budget_ms),
                   help=f"wall-clock budget per row in ms (default {budget_ms})")
    p.add_argument("--warm-l2", action="store_true", help="do not flush the L2 before each repetition")
    p.add_argument("--seed", metavar="S", default="1", help="seed of the inputs (default 1)")
    p.add_argument("--device", metavar="D", default="0", help="CUDA device ordinal (default 0)")
    p.add_argument("--csv", metavar="FILE", help="write every column and the run's metadata as CSV")


def run_options(a):
    """add_run_options' values, checked: reps, min_reps, budget_ms, warm_l2, seed, device, csv."""
    opt = {"reps": parse_int(a.reps, "--reps", 1, 100000),
           "budget_ms": parse_double(a.budget_ms, "--budget-ms", 1, 3600000), "warm_l2": a.warm_l2,
           "seed": parse_int(a.seed, "--seed", 0, (1 << 64) - 1), "device": parse_int(a.device, "--device", 0, 1023),
           "csv": a.csv or ""}
    if a.min_reps is None:
        opt["min_reps"] = min(3, opt["reps"])
    else:
        opt["min_reps"] = parse_int(a.min_reps, "--min-reps", 1, 100000)
        if opt["min_reps"] > opt["reps"]:
            raise UsageError(f"--min-reps {opt['min_reps']} is larger than --reps {opt['reps']}.")
    if a.csv is not None:
        problem = output_files.problem(a.csv, "--csv")
        if problem:
            raise UsageError(problem)
    return opt


def parse_args(argv):
    """The options as a dict; raises UsageError (argparse itself exits 2 on its own errors
    and 0 after --help)."""
    a = build_parser().parse_args(argv)
    if a.n is not None and a.sweep is not None:
        raise UsageError("--n and --sweep cannot be combined: --sweep gives the sizes, so drop one of them.")
    libs = [x for x in a.libs.split(",") if x]
    if not libs or any(x not in LIBRARIES for x in libs):
        raise UsageError(f"--libs '{a.libs}': write torch, cupy or torch,cupy.")
    return {"sizes": parse_sweep(a.sweep) if a.sweep is not None else [parse_count(a.n or "2^24", "--n")],
            "libs": list(dict.fromkeys(libs)), **run_options(a)}


# ---------------------------------------------------------------- inputs and checks

def hash64_chunks(seed, n, chunk=1 << 22):
    """(start, z) for consecutive chunks of common::hash64(seed, i) over i < n, as uint64
    arrays (common/inputs.cpp's mixer), from which each runner's inputs are made."""
    import numpy as np
    with np.errstate(over="ignore"):  # the mixer multiplies modulo 2^64
        base = np.uint64((seed * 0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019) % (1 << 64))
        for start in range(0, n, chunk):
            z = np.arange(start, min(n, start + chunk), dtype=np.uint64) + base
            z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
            z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
            yield start, z ^ (z >> np.uint64(31))


def uniform_inputs(seed, n):
    """The runner's uniform pattern (common/inputs.cpp: hash64, 24 random bits), float32."""
    import numpy as np
    out = np.empty(n, dtype=np.float32)
    for start, z in hash64_chunks(seed, n):
        out[start:start + len(z)] = (z >> np.uint64(40)).astype(np.float32) * np.float32(2.0**-24)
    return out


def prefix_references(x, sizes, chunk=1 << 20):
    """(sum, sum of |x|) in double for each prefix length in sizes: exact chunk sums in
    float64 (a chunk of 2^20 floats of 24 bits sums exactly) combined with math.fsum."""
    import numpy as np
    wanted = sorted(set(sizes))
    refs = {}
    parts, abs_parts, done = [], [], 0
    for n in wanted:
        while done + chunk <= n:
            c = x[done:done + chunk].astype(np.float64)
            parts.append(float(c.sum()))
            abs_parts.append(float(np.abs(c).sum()))
            done += chunk
        c = x[done:n].astype(np.float64)
        refs[n] = (math.fsum(parts + [float(c.sum())]), math.fsum(abs_parts + [float(np.abs(c).sum())]))
    return refs


def tree_depth(n):
    return max(0, (n - 1).bit_length())


def blocked_depth(n, threads):
    return (n + threads - 1) // threads + tree_depth(min(n, threads))


def gamma(depth, u):
    du = depth * u
    return du / (1 - du) if du < 1 else math.inf


def check(result, ref_sum, ref_abs, n):
    """The runner's check of a library sum whose order is undocumented (as for CUB:
    gamma(blocked_depth(n, 128) + 16) sum|x|, plus the reference's own error).
    Returns (verdict, abs_error, rel_error, tolerance, detail)."""
    abs_error = abs(result - ref_sum)
    rel_error = abs_error / abs(ref_sum) if ref_sum != 0 and math.isfinite(ref_sum) else math.nan
    reference_error = gamma(tree_depth(max(1, n >> 20)) + 2, 2.0**-53) * ref_abs
    tolerance = gamma(blocked_depth(n, 128) + 16, 2.0**-24) * ref_abs + reference_error
    if not math.isfinite(tolerance):
        return "no-bound", abs_error, rel_error, tolerance, "no finite error bound at this n"
    if not abs_error <= tolerance:
        return "FAIL", abs_error, rel_error, tolerance, f"got {result!r}, expected {ref_sum!r} within {tolerance:.3g}"
    return "ok", abs_error, rel_error, tolerance, ""


def planned_repetitions(one_rep_ms, reps, min_reps, budget_ms):
    """common/timing.cpp: at most reps, at least min_reps, no more than fit in budget_ms."""
    wanted = max(reps, 1)
    floor_reps = min(max(min_reps, 1), wanted)
    if not one_rep_ms > 0:
        return wanted
    fit = math.floor(budget_ms / one_rep_ms)
    return wanted if fit >= wanted else max(floor_reps, int(fit))


def median(values):
    s = sorted(values)
    mid = len(s) // 2
    return s[mid] if len(s) % 2 else 0.5 * (s[mid - 1] + s[mid])


# ---------------------------------------------------------------- output (common/output.cpp)

def to_csv(meta, records):
    """'# key: value' lines, the runner's header, one line per record (a dict over COLUMNS);
    numbers with ten significant digits, as the runner writes them."""
    return result_files.csv_text(list(COLUMNS), records, meta, number=".10g")


def make_record(n, key, title, reps_text, times_us, result, ref, verdict, errors, peak_gbs):
    abs_error, rel_error, tolerance = errors
    timed = bool(times_us)
    med = median(times_us) if timed else math.nan
    gbs = n * 4 / (med * 1e-6) / 1e9 if timed else math.nan
    return {"n": n, "key": key, "id": key, "stage": title, "kind": "peer", "block": "-", "grid": None,
            "reps": reps_text, "median_us": med, "min_us": min(times_us) if timed else math.nan,
            "max_us": max(times_us) if timed else math.nan, "gbs": gbs,
            "pct_peak": 100 * gbs / peak_gbs if peak_gbs > 0 else math.nan, "speedup_vs_01": None,
            "vs_previous": None, "vs_cub": None, "result": result, "reference": ref, "abs_error": abs_error,
            "rel_error": rel_error, "tolerance": tolerance, "check": verdict, "deterministic": "unknown",
            "single_launch": "unknown", "book_v100_ms": None}


# ---------------------------------------------------------------- the device (driver API)

def device_metadata(ordinal):
    """The runner's device metadata keys, from the CUDA driver API (libcuda) directly, so
    they do not depend on which library is installed. Raises RuntimeError with a
    sentence when there is no device."""
    import ctypes
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        raise RuntimeError("No CUDA driver was found (libcuda.so.1): this script needs an NVIDIA GPU and its driver.")
    if cuda.cuInit(0) != 0:
        raise RuntimeError("No CUDA device was found: this script needs an NVIDIA GPU and its driver.")
    count = ctypes.c_int(0)
    cuda.cuDeviceGetCount(ctypes.byref(count))
    if ordinal >= count.value:
        raise RuntimeError(f"CUDA device {ordinal} does not exist (found {count.value}).")
    dev = ctypes.c_int(0)
    cuda.cuDeviceGet(ctypes.byref(dev), ordinal)

    def attr(code):
        v = ctypes.c_int(0)
        cuda.cuDeviceGetAttribute(ctypes.byref(v), code, dev)
        return v.value

    name = ctypes.create_string_buffer(256)
    cuda.cuDeviceGetName(name, 256, dev)
    version = ctypes.c_int(0)
    cuda.cuDriverGetVersion(ctypes.byref(version))
    # CUdevice_attribute: 16 SM count, 36 memory clock (kHz), 37 bus width (bits),
    # 38 L2 bytes, 75/76 compute capability.
    clock, bus = attr(36), attr(37)
    peak = 2.0 * clock * 1e3 * (bus / 8.0) / 1e9
    driver = f"CUDA driver API {version.value // 1000}.{(version.value % 1000) // 10}"
    try:
        with open("/proc/driver/nvidia/version", encoding="utf-8") as f:
            found = re.search(r"(\d+\.\d+(\.\d+)?)", f.readline())
            if found:
                driver = found.group(1)
    except OSError:
        pass
    return [("device", name.value.decode()), ("compute_capability", f"{attr(75)}.{attr(76)}"),
            ("sm_count", str(attr(16))), ("l2_bytes", str(attr(38))), ("memory_clock_khz", str(clock)),
            ("memory_bus_bits", str(bus)), ("peak_gbs", f"{peak:.1f}"), ("driver", driver),
            ("cuda_driver_api", f"{version.value // 1000}.{(version.value % 1000) // 10}")]


def git_commit():
    env = os.environ.get("REDUCTION_COMMIT")
    if env:
        return env
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        commit = subprocess.run(["git", "-C", root, "rev-parse", "--short=12", "HEAD"], capture_output=True,
                                text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", root, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
    except OSError:
        return "unknown"
    return (commit + "-dirty" if dirty else commit) if commit else "unknown"


# ---------------------------------------------------------------- the libraries

class Torch:
    key, name = "torch_sum", "torch"

    def __init__(self, module, device):
        self.t = module
        self.dev = module.device("cuda", device)
        module.cuda.set_device(self.dev)
        self.version = module.__version__
        self.cuda = module.version.cuda or "?"

    def upload(self, host):
        return self.t.from_numpy(host).to(self.dev)

    def flush_buffer(self, nbytes):
        return self.t.ones(nbytes // 4, dtype=self.t.int32, device=self.dev)

    def flush(self, buf):
        buf.max()  # a read of the whole buffer, leaving clean lines in the L2

    def sum(self, x):
        return self.t.sum(x)

    def value(self, out):
        return float(out.item())

    def event(self):
        return self.t.cuda.Event(enable_timing=True)

    def record(self, event):
        event.record()

    def elapsed_ms(self, start, stop):
        stop.synchronize()
        return start.elapsed_time(stop)

    def synchronize(self):
        self.t.cuda.synchronize()


class Cupy:
    key, name = "cupy_sum", "cupy"

    def __init__(self, module, device):
        self.cp = module
        module.cuda.Device(device).use()
        self.version = module.__version__
        v = module.cuda.runtime.runtimeGetVersion()
        self.cuda = f"{v // 1000}.{(v % 1000) // 10}"

    def upload(self, host):
        return self.cp.asarray(host)

    def flush_buffer(self, nbytes):
        return self.cp.ones(nbytes // 4, dtype=self.cp.int32)

    def flush(self, buf):
        buf.max()

    def sum(self, x):
        return self.cp.sum(x)

    def value(self, out):
        return float(out.get())

    def event(self):
        return self.cp.cuda.Event()

    def record(self, event):
        event.record()

    def elapsed_ms(self, start, stop):
        stop.synchronize()
        return self.cp.cuda.get_elapsed_time(start, stop)

    def synchronize(self):
        self.cp.cuda.Device().synchronize()


def load_library(name, device):
    """The wrapper, or (None, sentence) when the library is not installed or has no GPU."""
    try:
        module = __import__(name)
    except ImportError as e:
        return None, f"{name} is not installed ({e}), so {name}.sum is not timed."
    if name == "torch" and not module.cuda.is_available():
        return None, "torch is installed but sees no CUDA device (a CPU-only build?), so torch.sum is not timed."
    try:
        return (Torch if name == "torch" else Cupy)(module, device), ""
    except Exception as e:  # a library that cannot start its CUDA context
        return None, f"{name} could not use CUDA device {device} ({e}), so {name}.sum is not timed."


def time_library(lib, host, sizes, refs, opt, l2_bytes, peak_gbs, table):
    x_all = lib.upload(host)
    flush_buf = None if opt["warm_l2"] else lib.flush_buffer(max(2 * l2_bytes, 1 << 20))
    lib.synchronize()
    records, all_ok = [], True
    title = f"{lib.name}.sum ({lib.name} {lib.version})"
    for n in sizes:
        x = x_all[:n]
        ref_sum, ref_abs = refs[n]
        result = lib.value(lib.sum(x))  # the checked call
        verdict, *errors, detail = check(result, ref_sum, ref_abs, n)
        times = []
        reps_text = "-"
        if verdict != "FAIL":
            if flush_buf is not None:
                lib.flush(flush_buf)
            lib.sum(x)  # warm-up
            lib.synchronize()
            start, stop = lib.event(), lib.event()

            def one_rep():
                if flush_buf is not None:
                    lib.flush(flush_buf)
                lib.record(start)
                lib.sum(x)
                lib.record(stop)
                times.append(lib.elapsed_ms(start, stop) * 1e3)

            t0 = datetime.datetime.now()
            one_rep()
            first_ms = (datetime.datetime.now() - t0).total_seconds() * 1e3
            reps = planned_repetitions(first_ms, opt["reps"], opt["min_reps"], opt["budget_ms"])
            while len(times) < reps:
                one_rep()
            reps_text = str(reps) + ("*" if reps < opt["reps"] else "")
        rec = make_record(n, lib.key, title, reps_text, times, result, ref_sum, verdict, errors, peak_gbs)
        table(rec)
        if verdict == "FAIL":
            print(f"  {lib.key} failed its check: {detail}")
            all_ok = False
        records.append(rec)
    return records, all_ok


def print_row(rec):
    def num(v, digits):
        return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.{digits}f}"
    print(f"{format_count(rec['n']):>7} {rec['key']:<10} {rec['reps']:>5} {num(rec['median_us'], 1):>10} "
          f"{num(rec['gbs'], 0):>7} {num(rec['pct_peak'], 1):>6} "
          f"{('-' if math.isnan(rec['rel_error']) else format(rec['rel_error'], '.1e')):>9} {rec['check']:>5}",
          flush=True)


def main(argv):
    try:
        opt = parse_args(argv)
    except UsageError as e:
        return output_files.refuse(PROGRAM, str(e))
    try:
        import numpy  # noqa: F401  (needed for the inputs)
    except ImportError:
        print(f"{PROGRAM}: numpy is needed to generate the inputs (pip install numpy).", file=sys.stderr)
        return 1
    try:
        meta_device = device_metadata(opt["device"])
    except RuntimeError as e:
        print(f"{PROGRAM}: {e}", file=sys.stderr)
        return EXIT_NO_DEVICE
    libs = []
    for name in opt["libs"]:
        lib, why = load_library(name, opt["device"])
        if lib is None:
            print(why)
        else:
            libs.append(lib)
    if not libs:
        print("Neither library can be timed here, so nothing was timed and no file was written.")
        return 0
    sizes = opt["sizes"]
    n_max = max(sizes)
    l2_bytes = int(dict(meta_device)["l2_bytes"])
    peak_gbs = float(dict(meta_device)["peak_gbs"])
    if n_max >= 1 << 26:
        print(f"generating {format_count(n_max)} uniform floats (seed {opt['seed']}) and their references...",
              file=sys.stderr, flush=True)
    host = uniform_inputs(opt["seed"], n_max)
    refs = prefix_references(host, sizes)
    meta = meta_device[:8] + [("cuda_runtime", libs[0].cuda)] + meta_device[8:] + [
        ("commit", git_commit()), ("date", datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")),
        ("n", str(sizes[0]) if len(sizes) == 1 else "sweep"), ("pattern", "uniform"), ("seed", str(opt["seed"])),
        ("max_reps", str(opt["reps"])), ("min_reps", str(opt["min_reps"])),
        ("budget_ms_per_row", f"{opt['budget_ms']:.6f}"), ("l2_flushed", "no" if opt["warm_l2"] else "yes"),
        ("l2_flush", "none" if opt["warm_l2"] else "read"),
        ("timing", "CUDA events around the call, median of the repetitions")]
    for lib in libs:
        meta += [(f"{lib.name}_version", lib.version), (f"{lib.name}_cuda", lib.cuda)]
    print(f"{PROGRAM} on {dict(meta_device)['device']}: {', '.join(f'{lib.name} {lib.version}' for lib in libs)}; "
          f"{len(sizes)} size(s) from {format_count(sizes[0])} to {format_count(n_max)}, median of up to "
          f"{opt['reps']} repetitions, L2 {'warm' if opt['warm_l2'] else 'flushed before each repetition (read)'}\n")
    print(f"{'n':>7} {'#':<10} {'reps':>5} {'median-us':>10} {'GB/s':>7} {'%peak':>6} {'rel-error':>9} check")
    records, all_ok = [], True
    for lib in libs:
        recs, ok = time_library(lib, host, sizes, refs, opt, l2_bytes, peak_gbs, print_row)
        records += recs
        all_ok = all_ok and ok
    if opt["csv"]:
        output_files.write(opt["csv"], to_csv(meta, records))
    if not all_ok:
        print("\nSome rows FAILED their check.")
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
