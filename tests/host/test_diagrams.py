#!/usr/bin/env python3
"""Every PNG the docs show against scripts/diagrams.py's registry, which lists them and
draws them: the concept diagrams from the code's own parameters, the data plots from the
committed CSVs.

Fails when the registry misses a PNG (one a Markdown file of the docs links, one in
chapters/ or results/, a module of scripts/figures/ it does not name), when a registered
PNG is missing, stale (its fingerprint, over the script, its module, the parameters read
from the code and the bytes of the CSVs it was drawn from, no longer matches), differs
byte for byte from a fresh drawing made with the renderer it records, or is 150 KB or
more. Then the rule itself, on a copy of the repository: a changed constant, kernel line
or CSV makes exactly the figures that read it stale, and redrawing them makes the check
pass again; an unlisted PNG that a chapter or a lab note links fails the check; the
script refuses a kernel whose tree it cannot verify, and its command line refuses bad
input with exit code 2.

matplotlib is required (the test command installs it): without it this test fails,
saying so, rather than skipping the comparison.

usage: python3 -m pytest tests/host/test_diagrams.py     (the repository holding this file)
"""
import importlib
import shutil
import sys
import tempfile
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "diagrams.py"
MAX_BYTES = 150 * 1024

sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import host_tools  # noqa: E402
from host_tools import detail  # noqa: E402

diagrams = host_tools.load_script(SCRIPT, "diagrams")


def run_script(*args):
    return host_tools.run_script(SCRIPT, *args, timeout=600)


def matplotlib_missing():
    """Why the figures cannot be redrawn here (matplotlib or Pillow missing), or None."""
    try:
        importlib.import_module("matplotlib")
        importlib.import_module("PIL")
    except ImportError as e:
        return (f"matplotlib (with Pillow) is not installed for {sys.executable} ({e}), so the figures cannot "
                "be redrawn and compared: install python3-matplotlib or pip install matplotlib")
    return None


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


# ---- the registry and the committed PNGs ----------------------------------------------


def test_registry_lists_every_png():
    problems = diagrams.registry_problems(ROOT)
    assert not problems, ("every PNG the docs link, every PNG in chapters/ and results/, every module of scripts/figures/ is in the "
          "registry") + detail("\n    ".join(problems))
    paths = [f.path for f in diagrams.FIGURES]
    assert len(paths) == len(set(paths)), f"the registry names each PNG once: {paths}"
    data = [p for p in paths if p.startswith("results/")]
    assert len(paths) - len(data) >= 33 and len(data) >= 7, (
        f"the registry holds the concept figures and the data plots: {len(paths) - len(data)} concept figures, {len(data)} data plots")


FRESH = {}  # path -> a drawing made here that could not be compared byte for byte with the committed one


def test_committed_figures_are_current(can_draw):
    renderer = diagrams.renderer_version() if can_draw else None
    plt = diagrams.pyplot() if can_draw else None
    recorded = set()
    for f in diagrams.FIGURES:
        path = ROOT / f.path
        if not path.is_file():
            assert False, f"{f.path}: committed: {f.path} is missing: run scripts/diagrams.py"
            continue
        data = path.read_bytes()
        assert len(data) < MAX_BYTES, f"{f.path}: smaller than 150 KB: {len(data)} bytes"
        chunks = diagrams.png_text(data)
        assert set(chunks) == {"Fingerprint", "Renderer"} and "tIME" not in png_chunk_types(data), (
            f"{f.path}: carries its fingerprint and renderer, and no date: text chunks {sorted(chunks)}, chunk types {png_chunk_types(data)}")
        try:
            inputs = diagrams.figure_inputs(f, ROOT)
        except diagrams.DiagramError as e:
            assert False, f"{f.path}: its parameters can be read" + detail(e)
            continue
        assert chunks.get("Fingerprint") == diagrams.fingerprint(f, inputs), (
            f"{f.path}: not stale (fingerprint of the script, its module, its parameters and CSVs): the sources, result files or drawing code changed since it was drawn: run scripts/diagrams.py")
        recorded.add(chunks.get("Renderer", "?"))
        if plt is None:
            continue
        fresh = diagrams.render(f, inputs, plt)
        if chunks.get("Renderer") == renderer:
            assert fresh == data, f"{f.path}: byte for byte what the script draws now: run scripts/diagrams.py"
        else:
            FRESH[f.path] = fresh
            assert png_size(fresh) == png_size(data), (
                f"{f.path}: a fresh drawing here has the committed size: {png_size(fresh)} against {png_size(data)}")
    if renderer is not None and recorded and recorded != {renderer}:
        warnings.warn(f"the committed figures were drawn with {', '.join(sorted(recorded))}; this machine has "
                      f"{renderer}, so their fingerprints and sizes were compared, not their bytes")


def test_drawing_is_deterministic(can_draw):
    """Where the committed bytes were compared, they were drawn by another process: that
    is the determinism check. Elsewhere, draw each figure a second time."""
    if not can_draw:
        return
    plt = diagrams.pyplot()
    for f in diagrams.FIGURES:
        if f.path in FRESH:
            again = diagrams.render(f, diagrams.figure_inputs(f, ROOT), plt)
            assert again == FRESH[f.path], f"{f.path}: two drawings give the same bytes"


# ---- the staleness rule, on a copy of the repository ---------------------------------------


def copy_repository(dest):
    """The repository's files (no .git, no build trees) in `dest`: the committed files are never touched."""
    shutil.copytree(ROOT, dest, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns(".git", "build*", "__pycache__", ".deps", ".whl", ".gl", "*.tmp"))


def edit(path, old, new):
    text = path.read_text(encoding="utf-8")
    if old not in text:
        raise AssertionError(f"{path.name} no longer contains {old!r}; update this test")
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def stale(root):
    """The registered PNGs whose fingerprints no longer match, or that are missing (bytes are compared elsewhere)."""
    problems = diagrams.check(root, diagrams.FIGURES, redraw=False)
    return {f.path for f in diagrams.FIGURES if any(p.startswith(f"{f.path} ") for p in problems)}


def test_code_and_csv_changes_make_exactly_their_figures_stale():
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        copy_repository(root)
        assert stale(root) == set(), f"staleness: an untouched copy is current: {stale(root)}"
        edit(root / "reduction" / "15_one_cluster.cu", "constexpr int kMaxCluster = 16;",
             "constexpr int kMaxCluster = 8;")
        assert stale(root) == {"chapters/figures/cluster_dsmem.png"}, (
            f"staleness: a new cluster size makes cluster_dsmem.png stale, and only it: {stale(root)}")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        copy_repository(root)
        stage07 = next((root / "reduction").glob("07_*.cu"))
        edit(stage07, "constexpr int kNumLoad = 4;", "constexpr int kNumLoad = 2;")
        assert stale(root) == {"chapters/figures/loads_in_flight.png"}, (
            f"staleness: a new kNumLoad in stage 07 makes loads_in_flight.png stale, and only it: {stale(root)}")
        # A data plot: one number of the committed CSV it plots.
        ladder = root / "results" / "h200" / "reduce_2p28.csv"
        lines = ladder.read_text(encoding="utf-8").splitlines()
        header = next(line for line in lines if not line.startswith("#")).split(",")
        row = next(line for line in lines if line.split(",")[1:2] == ["cub"])
        fields = row.split(",")
        fields[header.index("gbs")] = str(float(fields[header.index("gbs")]) / 2)
        edit(ladder, row, ",".join(fields))
        assert stale(root) == {"chapters/figures/loads_in_flight.png", "results/h200/ladder.png"}, ("staleness: CUB's GB/s halved in results/h200/reduce_2p28.csv makes results/h200/ladder.png stale, and "
              "only it besides loads_in_flight.png") + ": " + f"{stale(root)}"
        edit(root / "results" / "h100" / "peers_ceiling.csv", "\n", "\n\n")
        assert "results/h100/sweep.png" in stale(root) and "results/h200/sweep.png" not in stale(root), (
            f"staleness: a changed peers file beside the H100's sweep makes results/h100/sweep.png stale: {stale(root)}")
        edit(root / "results" / "h200" / "reduce_2p24.csv", "# sm_count: 132", "# sm_count: 114")
        assert {"chapters/figures/loads_in_flight.png", "chapters/figures/roofline.png"} <= stale(root), (
            f"staleness: a new SM count in reduce_2p24.csv makes the concept figures drawn from it stale: {stale(root)}")
        edit(root / "results" / "h200x4" / "multi_gpu.csv", ",0.558384558,", ",0.6,")
        assert "chapters/figures/multi_gpu_efficiency.png" in stale(root), (
            "staleness: a new efficiency in the four-GPU results makes multi_gpu_efficiency.png stale")
        # Redrawn from the changed inputs, every figure is current again.
        rc, out, err = run_script("--root", root)
        assert rc == 0, f"staleness: redrawing the copy succeeds: exit {rc}: {err}"
        assert stale(root) == set(), f"staleness: after the redraw nothing is stale: {stale(root)}"
        # A figure drawn with this machine's renderer is rewritten only when stale; with another
        # renderer (the committed figures' Pillow or FreeType differ) every redraw differs in
        # its bytes, so only the stale figure's rewrite can be asked for.
        same_renderer = diagrams.png_text((ROOT / "chapters" / "figures" / "reduction_tree.png").read_bytes()).get(
            "Renderer") == diagrams.renderer_version()
        assert (("wrote results/h200/ladder.png" in out
              and (not same_renderer or "unchanged chapters/figures/reduction_tree.png" in out))), f"staleness: the redraw wrote the stale figures and left the rest: {out}"
        (root / "chapters" / "figures" / "warp_shuffle_down.png").unlink()
        (root / "results" / "h200" / "access_banks.png").unlink()
        (root / "results" / "h100" / "sweep.csv").unlink()
        assert ((stale(root) == {"chapters/figures/warp_shuffle_down.png", "results/h200/access_banks.png",
                              "results/h100/sweep.png"})), f"staleness: a deleted figure or plot, or a plot whose CSV is gone, is reported: {stale(root)}"
        problems = diagrams.check(root, diagrams.FIGURES, redraw=False)
        assert any(p.startswith("results/h100/sweep.png cannot be drawn now: results/h100/sweep.csv") for p in problems), (
            "staleness: the plot whose CSV is gone names the CSV" + detail("\n".join(problems)))


def test_unlisted_pngs_fail_the_check():
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        copy_repository(root)
        assert diagrams.registry_problems(root) == [], (
            "registry: a copy of the repository has no unlisted PNG" + detail("\n".join(diagrams.registry_problems(root))))
        # A chapter links a PNG the registry does not list (the file need not exist); a fenced example does not count.
        chapter = next((root / "chapters").glob("01_*.md"))
        chapter.write_text(chapter.read_text(encoding="utf-8") + "\n![new](figures/unlisted.png)\n\n```\n"
                           "![example](figures/in_a_code_block.png)\n```\n", encoding="utf-8")
        # A lab note, wherever the lab's folder is, links a plot in results/ by a reference-style link.
        notes = root / "lab" / "notes"
        notes.mkdir(parents=True, exist_ok=True)
        (notes / "99_note.md").write_text("See [the plot][p].\n\n[p]: ../../results/h200/unlisted_plot.png\n",
                                          encoding="utf-8")
        problems = diagrams.registry_problems(root)
        assert any(p.startswith(f"chapters/{chapter.name} links figures/unlisted.png") for p in problems), (
            "registry: a chapter's link to an unlisted PNG is named" + detail("\n".join(problems)))
        assert any(p.startswith("lab/notes/99_note.md links ../../results/h200/unlisted_plot.png") for p in problems), (
            "registry: a lab note's link to an unlisted plot is named" + detail("\n".join(problems)))
        assert not any("in_a_code_block" in p for p in problems), (
            "registry: a PNG in a fenced code block is not a link" + detail("\n".join(problems)))
        # An unlisted PNG file in results/ fails even when nothing links it.
        shutil.copy(root / "results" / "h200" / "ladder.png", root / "results" / "h200x4" / "ladder.png")
        problems = diagrams.registry_problems(root)
        assert any(p.startswith("results/h200x4/ladder.png is not in the registry") for p in problems), (
            "registry: an unlisted PNG in results/ is named" + detail("\n".join(problems)))
        assert len(problems) == 3, "registry: exactly these three problems" + detail("\n".join(problems))
        rc, out, err = run_script("--root", root, "--check")
        assert ((rc == 1 and
              f"chapters/{chapter.name} links figures/unlisted.png" in out and "results/h200x4/ladder.png" in out)), f"registry: --check fails with exit 1, naming the chapter and the unlisted PNG: exit {rc}: {out}{err}"
    with tempfile.TemporaryDirectory() as tmp:
        # A module in scripts/figures/ that the registry does not name.
        extra = Path(tmp) / "figures"
        shutil.copytree(diagrams.FIGURE_DIR, extra)
        (extra / "unregistered.py").write_text("FIGURE = 'unregistered.png'\n", encoding="utf-8")
        saved, diagrams.FIGURE_DIR = diagrams.FIGURE_DIR, extra
        try:
            problems = diagrams.registry_problems(ROOT)
        finally:
            diagrams.FIGURE_DIR = saved
        assert problems == ["scripts/figures/unregistered.py is not in the registry in scripts/diagrams.py"], (
            "registry: a module of scripts/figures/ it does not name" + detail("\n".join(problems)))


def test_registry_refuses_a_module_out_of_place():
    saved = list(diagrams.REGISTRY)
    try:
        for entry, needle in ((("results/h200/float4_split.png", "figures/float4_split.py"),
                               "draws float4_split.png in chapters/figures"),
                              (("results/h200x4/ladder.png", "figures/ladder.py"), "draws ladder.png in results/h200"),
                              (("chapters/figures/x.png", "figures/no_such_module.py"), "which does not exist")):
            diagrams.REGISTRY[:] = [entry]
            with pytest.raises(SystemExit, match=needle):
                diagrams.registered()
    finally:
        diagrams.REGISTRY[:] = saved


def test_redrawn_bytes_are_compared(can_draw):
    """A figure with the right fingerprint but other pixels is caught where the renderer matches."""
    if not can_draw:
        return
    import io

    from PIL import Image, PngImagePlugin

    plt = diagrams.pyplot()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        copy_repository(root)
        for name, other_name in (("reduction_tree.png", "warp_shuffle_down.png"), ("sweep.png", "ladder.png")):
            figure = next(f for f in diagrams.FIGURES if f.name == name)
            other = next(f for f in diagrams.FIGURES if f.name == other_name)
            # Another figure's pixels under this figure's fingerprint and this machine's renderer.
            pixels = Image.open(io.BytesIO(diagrams.render(other, diagrams.figure_inputs(other, root), plt)))
            info = PngImagePlugin.PngInfo()
            info.add_text("Fingerprint", diagrams.fingerprint(figure, diagrams.figure_inputs(figure, root)))
            info.add_text("Renderer", diagrams.renderer_version())
            buf = io.BytesIO()
            pixels.save(buf, format="PNG", pnginfo=info)
            (root / figure.path).write_bytes(buf.getvalue())
            problems = diagrams.check(root, [figure])
            assert len(problems) == 1 and "differs from what scripts/diagrams.py draws now" in problems[0], (
                f"bytes: {figure.path} with the right fingerprint and other pixels differs from a fresh drawing" + detail("\n".join(problems)))


def inputs_of(name, root):
    """The parameters of the registered figure `name`, read from the repository at `root`."""
    figure = next(f for f in diagrams.FIGURES if f.name == name)
    return figure.inputs(root, figure.results(root))


def refused(what, call, needle):
    """`call` must raise DiagramError with `needle` in its sentence."""
    try:
        call()
        assert False, f"refusal: {what}: no error"
    except diagrams.DiagramError as e:
        assert needle in str(e), f"refusal: {what}" + detail(e)


def test_refusals():
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        copy_repository(root)
        stage05 = next((root / "reduction").glob("05_*.cu"))
        edit(stage05, "if (tid < stride) partial[tid] += partial[tid + stride];",
             "if (tid <= stride) partial[tid] += partial[tid + stride];")
        refused("a changed kernel line that a figure draws is named, with its file",
                lambda: inputs_of("index_maps.png", root),
                f"reduction/{stage05.name} no longer holds `if (tid < stride) partial[tid] += partial[tid + stride];`")
        stage13 = next((root / "reduction").glob("13_*.cu"))
        edit(stage13, "*ticket = 0;", "atomicExch(ticket, 0u);")
        refused("a ticket step that is gone is named", lambda: inputs_of("last_block_ticket.png", root),
                "no longer holds `*ticket = 0;`")
    # The explicit parameters are run before anything is drawn: a tree that would not sum every element once is refused.
    saved = diagrams.BLOCK_TREES["05"]
    diagrams.BLOCK_TREES["05"] = (saved[0], None, "tid <= stride", "tid", "tid + stride")
    try:
        refused("an explicit parameter that the code does not hold", lambda: diagrams.block_tree(ROOT, "05"),
                "no longer holds `if (tid <= stride)")
        diagrams.require_code, real = (lambda root, rel, *pieces: list(pieces)), diagrams.require_code
        try:
            refused("a block tree that does not sum every element once", lambda: diagrams.block_tree(ROOT, "05"), "05_")
        finally:
            diagrams.require_code = real
    finally:
        diagrams.BLOCK_TREES["05"] = saved
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        copy_repository(root)
        edit(root / "reduction" / "15_one_cluster.cu", "constexpr int kMaxCluster = 16;", "")
        try:
            inputs_of("cluster_dsmem.png", root)
            assert False, "refusal: a constant that is gone is named: no error"
        except diagrams.DiagramError as e:
            assert "defines no constant kMaxCluster" in str(e), "refusal: a constant that is gone is named" + detail(e)
        (root / "reduction" / "banks.hpp").write_text("constexpr int kBanks = 16;\n", encoding="utf-8")
        try:
            inputs_of("bank_conflicts.png", root)
            assert False, "refusal: a source that disagrees on the bank count: no error"
        except diagrams.DiagramError as e:
            assert "kBanks = 16" in str(e), "refusal: a source that disagrees on the bank count" + detail(e)


def test_command_line():
    rc, out, err = run_script("--check", "--only", "reduction_tree.png,cluster_dsmem.png")
    assert rc == 0 and "All 2 figures are current" in out, (
        f"command line: --check passes on the repository: exit {rc}: {out}{err}")
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / "out"
        for args, needle in (
            (["--only", "nothing.png"], "--only nothing.png is not a figure"),
            (["--frobnicate"], "unknown option '--frobnicate'"),
            (["--root", tmp], "is not the repository"),
        ):
            rc, out, err = run_script(*args, "--out", target)
            lines = [line for line in err.splitlines() if line.strip()]
            assert rc == 2 and len(lines) == 1 and needle in err and not out, (
                f"command line: {' '.join(args)} is refused with exit 2 and one sentence: exit {rc}: {err.strip()}")
        assert not target.exists(), "command line: nothing is written after a refusal"
    rc, out, _ = run_script("--list")
    names = [line.split("\t")[0] for line in out.splitlines()]
    assert rc == 0 and names == [f.path for f in diagrams.FIGURES], (
        f"command line: --list names every registered PNG: {out}")
    rc, out, _ = run_script("--list", "--only", "sweep.png")
    assert ((rc == 0 and len(out.splitlines()) == 2 and
          "results/h100/sweep.csv results/h100/peers_cub_modes.csv" in out)), f"command line: --list names the CSVs a data plot reads: {out}"


@pytest.fixture(scope="module")
def can_draw():
    """True with matplotlib; without it every test that draws fails, saying why."""
    missing = matplotlib_missing()
    if missing:
        pytest.fail(missing)
    return True


if __name__ == "__main__":  # python3 tests/host/test_diagrams.py: the same tests through pytest
    sys.exit(pytest.main([__file__, "-q", "-rs", "-p", "no:cacheprovider"]))
