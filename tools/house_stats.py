#!/usr/bin/env python3
"""The house figures a closing note gives: the longest library functions, the biggest library
files, and the public items of each crate.

- Functions and files: library code only (`<crate>/src/**/*.rs`, as `tools/fn_lengths.py` walks
  it, with its function finder), longest first.
- Public items: what `cargo doc` lists in `target/doc/<crate>/all.html`, the page of every
  public item of a crate under its canonical path (an item re-exported from a private module is
  listed once, at its re-exported path; an item of a private module that is not re-exported is
  not listed). Counted per kind (structs, enums, functions, ...) from the page's sections. Run
  `cargo doc --workspace --no-deps` first; `--doc DIR` names the doc directory
  (default `$CARGO_TARGET_DIR/doc`, else `target/doc`).
- Public modules: the module pages `cargo doc` writes (`doc/<crate>/**/index.html`, the crate's
  own page not counted): every module a user can name, nested ones included (the issue's "110
  `pub mod`s exported"). `pub mod` lines are also counted, in library code, reachable or not.

Usage: tools/house_stats.py [--top N] [--doc DIR] [--json]   (run from the repository root)
"""

import argparse
import html
import json
import os
import pathlib
import re
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from fn_lengths import functions, rust_files  # noqa: E402


def members(root: pathlib.Path):
    """The workspace members, in Cargo.toml's order."""
    text = (root / "Cargo.toml").read_text(encoding="utf-8")
    m = re.search(r"members\s*=\s*\[([^\]]*)\]", text)
    return re.findall(r'"([^"]+)"', m.group(1)) if m else []


def lines_of(src: str) -> int:
    return src.count("\n") + (0 if src.endswith("\n") or not src else 1)


def code_figures(root: pathlib.Path, crates):
    """(functions, files, pub mods per crate) over library code."""
    fns, files, pub_mods = [], [], {}
    for crate in crates:
        count = 0
        for f in rust_files(root / crate):
            src = f.read_text(encoding="utf-8")
            rel = str(f.relative_to(root))
            files.append((lines_of(src), rel))
            for name, first, last in functions(src):
                fns.append((last - first + 1, f"{rel}:{first}", name))
            count += len(re.findall(r"^\s*pub mod \w+", src, re.M))
        pub_mods[crate] = count
    return sorted(fns, reverse=True), sorted(files, reverse=True), pub_mods


SECTION = re.compile(r'<h3 id="([a-z-]+)">')
ITEM = re.compile(r'<li><a href="[^"]*">([^<]*)</a></li>')


def public_items(doc: pathlib.Path, crate: str):
    """{kind: count} from `doc/<crate>/all.html`, or None when the page is missing."""
    page = doc / crate / "all.html"
    if not page.is_file():
        return None
    text = page.read_text(encoding="utf-8")
    counts = {}
    # Each section is an `<h3 id="KIND">` followed by a list of links, one per item.
    marks = list(SECTION.finditer(text))
    for i, m in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        items = [html.unescape(x) for x in ITEM.findall(text, m.end(), end)]
        if items:
            counts[m.group(1)] = len(items)
    # Modules are not listed on the page: each public module has its own directory.
    counts["modules"] = sum(1 for _ in (doc / crate).rglob("index.html")) - 1
    return counts


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("--doc", type=pathlib.Path)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    root = pathlib.Path.cwd()
    crates = members(root)
    if not crates:
        print("no [workspace] members in ./Cargo.toml: run from the repository root", file=sys.stderr)
        return 2
    doc = args.doc or pathlib.Path(os.environ.get("CARGO_TARGET_DIR", "target")) / "doc"
    fns, files, pub_mods = code_figures(root, crates)
    items = {c: public_items(doc, c) for c in crates}

    if args.json:
        json.dump(
            {
                "functions": [{"lines": n, "at": at, "name": name} for n, at, name in fns[: args.top]],
                "files": [{"lines": n, "path": p} for n, p in files[: args.top]],
                "pub_mod": pub_mods,
                "public_items": items,
            },
            sys.stdout,
            indent=1,
        )
        print()
        return 0

    print(f"longest library functions (top {args.top}):")
    for n, at, name in fns[: args.top]:
        print(f"  {n:5} {name} ({at})")
    print(f"biggest library files (top {args.top}):")
    for n, p in files[: args.top]:
        print(f"  {n:5} {p}")
    print(f"public items per crate (from {doc}/<crate>/all.html), public modules, `pub mod` lines:")
    print(f"  {'crate':16} {'items':>6} {'modules':>8} {'pub mod':>8}  items by kind")
    total_items = total_mods = total_modules = 0
    for c in crates:
        kinds = items[c]
        if kinds is None:
            print(f"  {c:16} {'-':>6} {'-':>8} {pub_mods[c]:8}  (no all.html: run cargo doc)")
        else:
            n = sum(v for k, v in kinds.items() if k != "modules")
            total_items += n
            total_modules += kinds["modules"]
            detail = ", ".join(f"{k} {v}" for k, v in sorted(kinds.items()) if k != "modules")
            print(f"  {c:16} {n:6} {kinds.get('modules', 0):8} {pub_mods[c]:8}  {detail}")
        total_mods += pub_mods[c]
    print(f"  {'total':16} {total_items:6} {total_modules:8} {total_mods:8}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
