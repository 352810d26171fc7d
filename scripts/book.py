#!/usr/bin/env python3
"""The tutorial as a website: the staging step that scripts/book.sh runs before MkDocs,
and the MkDocs hook (mkdocs.yml names this file under hooks:).

    scripts/book.py STAGING_DIR

Staging copies what the reader's Markdown links to into STAGING_DIR (MkDocs' docs_dir),
in the repository's own layout, so that most links need no change: README.md becomes
the front page (index.md), REFERENCE.md, chapters/*.md and every Markdown file they lead
to are copied as they are, and so are the images they show (chapters/figures/*.png,
results/.../*.png). What is not Markdown becomes a page of its own: a linked source or
result file (../reduction/14_tagged_slots.cu) is shown as a page holding the file whole
in one code block (staged as reduction/14_tagged_slots.cu.md), and a linked folder
without a README.md as a page listing its files; these pages are left out of the
search, which finds the text (the chapters, the README, the reference, the lab). Link targets are rewritten only where
the staged name differs (README.md -> index.md, x.cu -> x.cu.md, a folder ->
folder/index.md or folder/README.md); the text is not otherwise touched. Nothing is
staged by hand: the site is built from the same files scripts/update_docs.py fills.
STAGING_DIR is emptied first; it must lie under a folder named build*.

The hook drops indented lines that hold only HTML comments (the docs' markers) before a
page is rendered, since Python-Markdown ends a list at such a line where GitHub does not;
it sets the order of the pages from the README's list of chapters (section
"The chapters", which is the reading order), with REFERENCE.md as an appendix, and gives
headings GitHub's anchors, so that a link such as 00_introduction.md#how-we-time finds
the same heading on the site as on the code host.

Exit codes: 0 staged; 2 bad usage (one sentence on stderr).
"""

from __future__ import annotations

import os
import posixpath
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
IMAGES = {".png", ".svg", ".jpg", ".jpeg", ".gif"}
LANGUAGES = {".cu": "cuda", ".cuh": "cuda", ".cpp": "cpp", ".hpp": "cpp", ".h": "cpp", ".py": "python",
             ".sh": "bash", ".json": "json", ".yml": "yaml", ".yaml": "yaml", ".cmake": "cmake"}
# A Markdown link or image: [text](target "title"); the text may hold one level of [].
LINK = re.compile(r"(!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\()(<?)([^()\s<>]+)(>?)((?:\s+\"[^\"]*\")?\))")
FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
CODE_SPAN = re.compile(r"(`+)(?:.*?[^`])?\1(?!`)")


def tracked_files(root: Path) -> list[str]:
    """The repository's files (git ls-files), or every file outside build*/ and dot folders
    where there is no git."""
    try:
        out = subprocess.run(["git", "-C", str(root), "ls-files", "-z"], capture_output=True, check=True).stdout
        names = [n for n in out.decode("utf-8", "surrogateescape").split("\0") if n and (root / n).is_file()]
        if names:
            return names
    except (OSError, subprocess.CalledProcessError):
        pass
    names = []
    for folder, dirs, files in os.walk(root):
        rel = os.path.relpath(folder, root)
        if rel == ".":
            dirs[:] = [d for d in dirs if not d.startswith(("build", "."))]
        names += [Path(os.path.normpath(os.path.join(rel, f))).as_posix() for f in files]
    return sorted(names)


class Repo:
    def __init__(self, root: Path):
        self.root = root
        self.files = set(tracked_files(root))
        self.folders = {""}
        for name in self.files:
            parts = name.split("/")[:-1]
            self.folders.update("/".join(parts[:i]) for i in range(1, len(parts) + 1))

    def is_text(self, rel: str) -> bool:
        data = (self.root / rel).read_bytes()
        if b"\0" in data:
            return False
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return False
        return True

    def staged_name(self, rel: str) -> str | None:
        """The name under which a repository path is staged, or None when it is not
        (outside the repository's files, or a binary file that is not an image)."""
        if rel in self.folders:
            readme = posixpath.join(rel, "README.md") if rel else "README.md"
            if readme in self.files:
                return self.staged_name(readme)
            return posixpath.join(rel, "index.md")
        if rel not in self.files:
            return None
        if rel == "README.md":
            return "index.md"
        suffix = posixpath.splitext(rel)[1].lower()
        if suffix == ".md" or suffix in IMAGES:
            return rel
        return rel + ".md" if self.is_text(rel) else None

    def children(self, folder: str) -> list[str]:
        prefix = folder + "/" if folder else ""
        names = {prefix + n[len(prefix):].split("/")[0] for n in self.files if n.startswith(prefix)}
        return sorted(names, key=lambda n: (n not in self.folders, n))


def in_code(lines: list[str]) -> list[bool]:
    """For each line, whether it belongs to a fenced code block (its fences included)."""
    marks, fence = [], None
    for line in lines:
        f = FENCE.match(line)
        if fence is None and f:
            fence = f.group(1)
            marks.append(True)
        elif fence is not None:
            if f and f.group(1)[0] == fence[0] and len(f.group(1)) >= len(fence) and not line.strip()[len(f.group(1)):]:
                fence = None
            marks.append(True)
        else:
            marks.append(False)
    return marks


def rewrite_links(text: str, page: str, staged_page: str, repo: Repo, found: list[str]) -> str:
    """Rewrites the link targets of Markdown file PAGE (staged as STAGED_PAGE) that point
    at repository files whose staged name differs; appends each repository path linked
    to FOUND. Fenced code blocks and code spans are left as they are."""
    here = posixpath.dirname(page)

    def one(m: re.Match) -> str:
        target = m.group(3)
        if re.match(r"[a-zA-Z][a-zA-Z0-9+.-]*:", target) or target.startswith(("#", "/")):
            return m.group(0)
        path, hash_, anchor = target.partition("#")
        rel = posixpath.normpath(posixpath.join(here, path)) if path else page
        rel = "" if rel == "." else rel
        if rel == ".." or rel.startswith("../"):
            return m.group(0)
        staged = repo.staged_name(rel)
        if staged is None:
            return m.group(0)  # left for MkDocs' link check to report
        found.append(rel)
        if staged == (rel or None) or not path:
            return m.group(0)
        new = posixpath.relpath(staged, posixpath.dirname(staged_page) or ".") + hash_ + anchor
        return m.group(1) + m.group(2) + new + m.group(4) + m.group(5)

    lines = text.split("\n")
    out = []
    for line, code in zip(lines, in_code(lines)):
        if not code:
            spans = [m.span() for m in CODE_SPAN.finditer(line)]
            line = LINK.sub(lambda m: m.group(0) if any(a <= m.start() < b for a, b in spans) else one(m), line)
        out.append(line)
    return "\n".join(out)


def code_page(rel: str, text: str) -> str:
    """A page that shows one file whole, highlighted by its kind."""
    name = posixpath.basename(rel)
    language = "cmake" if name == "CMakeLists.txt" else LANGUAGES.get(posixpath.splitext(name)[1].lower(), "text")
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"---\nsearch:\n  exclude: true\n---\n# {rel}\n\n{fence}{language}\n{text.rstrip(chr(10))}\n{fence}\n"


def folder_page(rel: str, repo: Repo, staged: set[str]) -> str:
    """A page that lists a folder's files; those the site has (STAGED: the repository
    paths it stages) are linked to their pages."""
    lines = ["---", "search:", "  exclude: true", "---", f"# {rel}/", ""]
    for child in repo.children(rel):
        name = posixpath.basename(child) + ("/" if child in repo.folders else "")
        if child in staged and repo.staged_name(child):
            lines.append(f"- [`{name}`]({posixpath.relpath(repo.staged_name(child), rel)})")
        else:
            lines.append(f"- `{name}`")
    return "\n".join(lines) + "\n"


def stage(root: Path, out: Path) -> int:
    """Stages the site's sources into OUT (emptied first); returns the number of pages."""
    repo = Repo(root)
    start = ["README.md", "REFERENCE.md"] + sorted(n for n in repo.files if re.fullmatch(r"chapters/[^/]+\.md", n))
    queue = [n for n in start if n in repo.files]
    done: set[str] = set()
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    pages = 0
    folders = []  # listed once every other page is known
    while queue:
        rel = queue.pop(0)
        if rel in done:
            continue
        done.add(rel)
        staged = repo.staged_name(rel)
        if staged is None:
            continue
        found: list[str] = []
        target = out / staged
        target.parent.mkdir(parents=True, exist_ok=True)
        readme = posixpath.join(rel, "README.md") if rel else "README.md"
        if rel in repo.folders and readme in repo.files:
            queue.append(readme)
            continue
        if rel in repo.folders:
            folders.append(rel)
        elif staged.endswith(tuple(IMAGES)):
            shutil.copyfile(root / rel, target)
            continue
        elif rel.endswith(".md"):
            text = (root / rel).read_text(encoding="utf-8")
            target.write_text(rewrite_links(text, rel, staged, repo, found), encoding="utf-8")
        else:
            target.write_text(code_page(rel, (root / rel).read_text(encoding="utf-8")), encoding="utf-8")
        pages += 1
        queue += [f for f in found if f not in done]
    for rel in folders:
        (out / repo.staged_name(rel)).write_text(folder_page(rel, repo, done), encoding="utf-8")
    return pages


# ---- the MkDocs hook -----------------------------------------------------------------

def slug(text: str, separator: str = "-") -> str:
    """GitHub's anchor for a heading's text (as tests/host/test_docs.py computes it)."""
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", separator)


def reading_order(front_page: str) -> list[str]:
    """The chapters as the README's section "The chapters" lists them, in its order."""
    m = re.search(r"^## The chapters\n(.*?)(?=^## )", front_page, re.S | re.M)
    if not m:
        raise SystemExit("book.py: the README has no section '## The chapters' to take the reading order from.")
    order = []
    for target in re.findall(r"^- \[[^\]]*\]\((chapters/[^)#]+\.md)\)", m.group(1), re.M):
        if target not in order:
            order.append(target)
    return order


# An indented line that holds only HTML comments (the docs' claim: markers, below a list
# item's text): Python-Markdown ends the list there and prints the next item as a
# paragraph starting "- ", where GitHub keeps the list. Such lines show nothing either way.
COMMENT_LINE = re.compile(r"[ \t]+(?:<!--.*?-->[ \t]*)+")


def on_page_markdown(markdown, **kwargs):
    """Drops the indented comment-only lines outside code blocks before MkDocs renders a
    page (the staged file keeps them); nothing a reader sees changes."""
    lines = markdown.split("\n")
    return "\n".join(line for line, code in zip(lines, in_code(lines)) if code or not COMMENT_LINE.fullmatch(line))


def on_config(config, **kwargs):
    docs = Path(config["docs_dir"])
    chapters = reading_order((docs / "index.md").read_text(encoding="utf-8"))
    config["nav"] = [{"Start": "index.md"}, {"Chapters": chapters}, {"Appendix": ["REFERENCE.md"]}]
    config["mdx_configs"].setdefault("toc", {})["slugify"] = slug
    return config


def main(argv: list[str]) -> int:
    if any(a in ("-h", "--help") for a in argv):
        print(__doc__.strip())
        return 0
    options = [a for a in argv if a.startswith("-")]
    if options:
        print(f"book.py: unknown option '{options[0]}' (it takes the staging folder, or --help).", file=sys.stderr)
        return 2
    if len(argv) != 1:
        print(f"book.py: give one argument, the staging folder (such as build/book-src), not {len(argv)}; see --help.",
              file=sys.stderr)
        return 2
    out = Path(argv[0]).resolve()
    if not any(p.name.startswith("build") for p in [out, *out.parents]):
        print(f"book.py: the staging folder '{argv[0]}' is not under a folder named build*; it is emptied first, so "
              "it must be a build folder (such as build/book-src).", file=sys.stderr)
        return 2
    pages = stage(ROOT, out)
    print(f"book.py: staged {pages} pages in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
