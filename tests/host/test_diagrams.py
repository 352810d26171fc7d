#!/usr/bin/env python3
"""The concept diagrams (chapters/figures/) against scripts/diagrams.py, which draws
them from the code's own parameters.

Fails when a figure that README.md or a chapter links is missing, when a PNG in
chapters/figures/ is not one the script draws, when a committed figure is stale (its
fingerprint, over the script and the parameters read from the sources and result
files, no longer matches), when it differs byte for byte from a fresh drawing made with
the renderer it records, or when it is 150 KB or more. Then the script itself: it draws
the same bytes twice, its staleness check notices a changed constant or kernel line in
a copy of the sources, it refuses a kernel whose tree it cannot verify, and its
command line refuses bad input with exit code 2.

matplotlib is required (the test command installs it): without it this test fails,
saying so, rather than skipping the comparison.

usage: python3 -m pytest tests/host/test_diagrams.py     (the repository holding this file)
"""
import importlib
import re
import shutil
import sys
import tempfile
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "diagrams.py"
FIGURES = ROOT / "chapters" / "figures"
MAX_BYTES = 150 * 1024

sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import host_checks  # noqa: E402

diagrams = host_checks.load_script(SCRIPT, "diagrams")

failures = host_checks.failures
check = host_checks.named_check


def run_script(*args):
    return host_checks.run_script(SCRIPT, *args, timeout=600)


def have_matplotlib():
    try:
        importlib.import_module("matplotlib")
        importlib.import_module("PIL")
    except ImportError as e:
        failures.append(f"matplotlib (with Pillow) is not installed for {sys.executable} ({e}), so the figures cannot "
                        "be redrawn and compared: install python3-matplotlib or pip install matplotlib")
        return False
    return True


def png_size(data):
    """(width, height) from a PNG's IHDR chunk."""
    if data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        return None
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def png_chunk_types(data):
    types, pos = [], 8
    while pos + 8 <= len(data):
        length = int.from_bytes(data[pos : pos + 4], "big")
        types.append(data[pos + 4 : pos + 8].decode("latin-1"))
        pos += 12 + length
    return types


# ---- the committed figures -------------------------------------------------------------

IMAGE_RE = re.compile(r"!\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def linked_figures():
    """(document, target path) for every image link into chapters/figures/."""
    out = []
    lab = [ROOT / "lab" / "README.md"] + sorted((ROOT / "lab" / "notes").glob("*.md"))
    for md in [ROOT / "README.md", ROOT / "REFERENCE.md"] + sorted((ROOT / "chapters").glob("*.md")) + [
            p for p in lab if p.is_file()]:
        text = md.read_text(encoding="utf-8")
        text = re.sub(r"```.*?```", "", text, flags=re.S)
        for target in IMAGE_RE.findall(text):
            if re.match(r"[a-zA-Z][a-zA-Z0-9+.-]*:", target):
                continue
            path = (md.parent / target).resolve()
            if path.parent == FIGURES.resolve():
                out.append((md.relative_to(ROOT).as_posix(), path))
    return out


def test_linked_figures_exist_and_are_drawn_by_the_script():
    names = {f.name for f in diagrams.FIGURES}
    links = linked_figures()
    missing = [f"{doc} -> {p.relative_to(ROOT).as_posix()}" for doc, p in links if not p.is_file()]
    check(f"every figure linked from the README and the chapters exists ({len(links)} links)", not missing,
          "\n    ".join(missing))
    foreign = [f"{doc} -> {p.name}" for doc, p in links if p.name not in names]
    check("every linked figure is one scripts/diagrams.py draws", not foreign, "\n    ".join(foreign))
    strays = sorted(p.name for p in FIGURES.glob("*") if p.name not in names) if FIGURES.is_dir() else []
    check("chapters/figures/ holds only figures the script draws", not strays, ", ".join(strays))
    check("the script draws at least the eight concept diagrams", len(names) >= 8, f"{sorted(names)}")


FRESH = {}  # name -> a drawing made here that could not be compared byte for byte with the committed one


def test_committed_figures_are_current(can_draw):
    renderer = diagrams.renderer_version() if can_draw else None
    plt = diagrams.pyplot() if can_draw else None
    results = ROOT / "results" / "h200"
    recorded = set()
    for f in diagrams.FIGURES:
        path = FIGURES / f.name
        if not path.is_file():
            check(f"{f.name}: committed", False, f"{path.relative_to(ROOT)} is missing: run scripts/diagrams.py")
            continue
        data = path.read_bytes()
        check(f"{f.name}: smaller than 150 KB", len(data) < MAX_BYTES, f"{len(data)} bytes")
        chunks = diagrams.png_text(data)
        check(f"{f.name}: carries its fingerprint and renderer, and no date",
              set(chunks) == {"Fingerprint", "Renderer"} and "tIME" not in png_chunk_types(data),
              f"text chunks {sorted(chunks)}, chunk types {png_chunk_types(data)}")
        try:
            inputs = f.inputs(ROOT, results)
        except diagrams.DiagramError as e:
            check(f"{f.name}: its parameters can be read", False, str(e))
            continue
        check(f"{f.name}: not stale (fingerprint of the script and its inputs)",
              chunks.get("Fingerprint") == diagrams.fingerprint(f.name, inputs),
              "the sources, result files or scripts/diagrams.py changed since it was drawn: run scripts/diagrams.py")
        recorded.add(chunks.get("Renderer", "?"))
        if plt is None:
            continue
        fresh = diagrams.render(f, inputs, plt)
        if chunks.get("Renderer") == renderer:
            check(f"{f.name}: byte for byte what the script draws now", fresh == data,
                  "run scripts/diagrams.py")
        else:
            FRESH[f.name] = fresh
            check(f"{f.name}: a fresh drawing here has the committed size", png_size(fresh) == png_size(data),
                  f"{png_size(fresh)} against {png_size(data)}")
    if renderer is not None and recorded and recorded != {renderer}:
        warnings.warn(f"the committed figures were drawn with {', '.join(sorted(recorded))}; this machine has "
                     f"{renderer}, so their fingerprints and sizes were compared, not their bytes")


# ---- the script --------------------------------------------------------------------------


def test_drawing_is_deterministic(can_draw):
    """Where the committed bytes were compared, they were drawn by another process: that
    is the determinism check. Elsewhere, draw each figure a second time."""
    if not can_draw:
        return
    plt = diagrams.pyplot()
    results = ROOT / "results" / "h200"
    for f in diagrams.FIGURES:
        if f.name not in FRESH:
            continue
        again = diagrams.render(f, f.inputs(ROOT, results), plt)
        check(f"{f.name}: two drawings give the same bytes", again == FRESH[f.name])


def copy_sources(dest):
    """The files the figures read, and the committed figures, in a repository-shaped folder."""
    for folder in ("reduction", "single_pass", "common", "mixed_precision", "occupancy", "access_patterns",
                   "multi_gpu", "scan", "histogram"):
        shutil.copytree(ROOT / folder, dest / folder)
    (dest / "scripts").mkdir(exist_ok=True)
    for name in ("registry.csv", "profile.sh"):
        shutil.copy(ROOT / "scripts" / name, dest / "scripts" / name)
    (dest / "results" / "h200").mkdir(parents=True)
    for name in ("reduce_2p24.csv", "occupancy_03_sweep.csv"):
        shutil.copy(ROOT / "results" / "h200" / name, dest / "results" / "h200" / name)
    (dest / "results" / "h200x4").mkdir()
    for name in ("multi_gpu.csv", "multi_gpu_mpi.csv", "multi_gpu_mpi_net.csv"):
        shutil.copy(ROOT / "results" / "h200x4" / name, dest / "results" / "h200x4" / name)
    shutil.copytree(FIGURES, dest / "chapters" / "figures")


def edit(path, old, new):
    text = path.read_text(encoding="utf-8")
    if old not in text:
        raise AssertionError(f"{path.name} no longer contains {old!r}; update this test")
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def stale_names(root):
    """The figures whose fingerprints no longer match (the bytes are compared elsewhere)."""
    problems = diagrams.check(root, root / "results" / "h200", root / "chapters" / "figures", diagrams.FIGURES,
                              redraw=False)
    return {f.name for f in diagrams.FIGURES if any(p.startswith(f"chapters/figures/{f.name} ") for p in problems)}


def test_staleness_is_detected():
    if not FIGURES.is_dir():
        check("staleness: chapters/figures/ exists", False)
        return
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        copy_sources(root)
        check("staleness: an untouched copy is current", stale_names(root) == set(), f"{stale_names(root)}")
        edit(root / "reduction" / "15_one_cluster.cu", "constexpr int kMaxCluster = 16;",
             "constexpr int kMaxCluster = 8;")
        check("staleness: a new cluster size makes cluster_dsmem.png stale, and only it",
              stale_names(root) == {"cluster_dsmem.png"}, f"{stale_names(root)}")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        copy_sources(root)
        stage07 = next((root / "reduction").glob("07_*.cu"))
        edit(stage07, "constexpr int kNumLoad = 4;", "constexpr int kNumLoad = 2;")
        check("staleness: a new kNumLoad in stage 07 makes loads_in_flight.png stale, and only it",
              stale_names(root) == {"loads_in_flight.png"}, f"{stale_names(root)}")
        edit(root / "results" / "h200" / "reduce_2p24.csv", "# sm_count: 132", "# sm_count: 114")
        check("staleness: a new SM count in the result file keeps loads_in_flight.png stale",
              "loads_in_flight.png" in stale_names(root))
        edit(root / "results" / "h200x4" / "multi_gpu.csv", ",0.558384558,", ",0.6,")
        check("staleness: a new efficiency in the four-GPU results makes multi_gpu_efficiency.png stale",
              "multi_gpu_efficiency.png" in stale_names(root))
        (root / "chapters" / "figures" / "warp_shuffle_down.png").unlink()
        problems = diagrams.check(root, root / "results" / "h200", root / "chapters" / "figures", diagrams.FIGURES,
                                  redraw=False)
        check("staleness: a deleted figure is reported missing",
              any("warp_shuffle_down.png is missing" in p for p in problems), "\n".join(problems))


def test_redrawn_bytes_are_compared(can_draw):
    """A figure with the right fingerprint but other pixels is caught where the renderer matches."""
    if not can_draw:
        return
    plt = diagrams.pyplot()
    renderer = diagrams.renderer_version()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        copy_sources(root)
        figure = next(f for f in diagrams.FIGURES if f.name == "reduction_tree.png")
        inputs = figure.inputs(root, root / "results" / "h200")
        other = next(f for f in diagrams.FIGURES if f.name == "warp_shuffle_down.png")
        # Another figure's pixels under this figure's fingerprint and this machine's renderer.
        import io

        from PIL import Image, PngImagePlugin

        pixels = Image.open(io.BytesIO(diagrams.render(other, other.inputs(root, root / "results" / "h200"), plt)))
        info = PngImagePlugin.PngInfo()
        info.add_text("Fingerprint", diagrams.fingerprint(figure.name, inputs))
        info.add_text("Renderer", renderer)
        buf = io.BytesIO()
        pixels.save(buf, format="PNG", pnginfo=info)
        (root / "chapters" / "figures" / figure.name).write_bytes(buf.getvalue())
        problems = diagrams.check(root, root / "results" / "h200", root / "chapters" / "figures", [figure])
        check("bytes: a figure with the right fingerprint and other pixels differs from a fresh drawing",
              len(problems) == 1 and "differs from what scripts/diagrams.py draws now" in problems[0],
              "\n".join(problems))


def test_refusals():
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        copy_sources(root)
        stage05 = next((root / "reduction").glob("05_*.cu"))
        edit(stage05, "if (tid < stride) partial[tid] += partial[tid + stride];",
             "if (tid <= stride) partial[tid] += partial[tid + stride];")
        try:
            diagrams.index_map_inputs(root)
            check("refusal: a block tree that does not sum every element once is refused", False, "no error")
        except diagrams.DiagramError as e:
            check("refusal: a block tree that does not sum every element once is refused", "05_" in str(e), str(e))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        copy_sources(root)
        edit(root / "reduction" / "15_one_cluster.cu", "constexpr int kMaxCluster = 16;", "")
        try:
            diagrams.cluster_inputs(root)
            check("refusal: a constant that is gone is named", False, "no error")
        except diagrams.DiagramError as e:
            check("refusal: a constant that is gone is named", "defines no constant kMaxCluster" in str(e), str(e))
        (root / "reduction" / "banks.hpp").write_text("constexpr int kBanks = 16;\n", encoding="utf-8")
        try:
            diagrams.bank_inputs(root)
            check("refusal: a source that disagrees on the bank count", False, "no error")
        except diagrams.DiagramError as e:
            check("refusal: a source that disagrees on the bank count", "kBanks = 16" in str(e), str(e))


def test_command_line():
    rc, out, err = run_script("--check", "--only", "reduction_tree.png,cluster_dsmem.png")
    check("command line: --check passes on the repository", rc == 0 and "All 2 figures are current" in out,
          f"exit {rc}: {out}{err}")
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / "out"
        for args, needle in (
            (["--only", "nothing.png"], "--only nothing.png is not a figure"),
            (["--frobnicate"], "unknown option '--frobnicate'"),
            (["--root", tmp], "is not the repository"),
        ):
            rc, out, err = run_script(*args, "--out", target)
            lines = [line for line in err.splitlines() if line.strip()]
            check(f"command line: {' '.join(args)} is refused with exit 2 and one sentence",
                  rc == 2 and len(lines) == 1 and needle in err and not out, f"exit {rc}: {err.strip()}")
        check("command line: nothing is written after a refusal", not target.exists())
    rc, out, _ = run_script("--list")
    names = [line.split("\t")[0] for line in out.splitlines()]
    check("command line: --list names every figure", rc == 0 and names == [f.name for f in diagrams.FIGURES], out)


@pytest.fixture(scope="module")
def can_draw():
    """True with matplotlib; without it every test that draws fails, saying why."""
    if not have_matplotlib():
        pytest.fail(failures.pop())
    return True


if __name__ == "__main__":  # python3 tests/host/test_diagrams.py: the same tests through pytest
    sys.exit(pytest.main([__file__, "-q", "-rs", "-p", "no:cacheprovider"]))
