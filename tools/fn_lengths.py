#!/usr/bin/env python3
"""List Rust functions over a line limit and files over a line limit in library code.

Issue 18's "done when" sets two limits on library code: no function over 250 lines and no file
over 1,200. This walks `<crate>/src/**/*.rs` (library code: tests/, benches/ and examples/ are
not walked) and prints every breach, longest first.

Hand-written rather than built on a Rust parser (syn needs a Rust build; this must run anywhere
python3 does): it blanks comments, string, byte-string, raw-string and char literals, then
matches braces from each `fn NAME` to the end of its body. A function's length counts from the
line of `fn` to the line of its closing brace; a nested function is counted on its own and also
inside its parent.

Usage: tools/fn_lengths.py [--fn-limit N] [--file-limit N] PATH...   (a crate dir, src dir or file)
Exit status 1 when anything is over a limit, so it can gate a CI step.
"""

import argparse
import pathlib
import re
import sys

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def blank(src: str) -> str:
    """`src` with comments and literals replaced by spaces, newlines kept (so lines still count)."""
    out = []
    i, n = 0, len(src)

    def keep_newlines(s):
        return "".join("\n" if c == "\n" else " " for c in s)

    while i < n:
        c = src[i]
        if src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif src.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if src.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif src.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(keep_newlines(src[i:j]))
            i = j
        elif (m := re.compile(r'b?r(#*)"').match(src, i)) and (i == 0 or not (src[i - 1].isalnum() or src[i - 1] == "_")):
            end = '"' + m.group(1)
            j = src.find(end, m.end())
            j = n if j < 0 else j + len(end)
            out.append(keep_newlines(src[i:j]))
            i = j
        elif c == '"' or (c == "b" and src.startswith('b"', i) and (i == 0 or not (src[i - 1].isalnum() or src[i - 1] == "_"))):
            j = i + (2 if c == "b" else 1)
            while j < n and src[j] != '"':
                j += 2 if src[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(keep_newlines(src[i:j]))
            i = j
        elif c == "'":
            # A char literal ('x', '\n', '\u{1F600}', '{') or a lifetime ('a): a lifetime has no
            # closing quote right after its first character.
            m = re.compile(r"'(\\(u\{[0-9a-fA-F]+\}|x[0-9a-fA-F]{2}|.)|[^\\'])'").match(src, i)
            if m:
                out.append(" " * (m.end() - i))
                i = m.end()
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(src: str):
    """(name, first line, last line) of each function with a body."""
    text = blank(src)
    line_starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def line_of(pos):
        lo, hi = 0, len(line_starts)
        while lo + 1 < hi:
            mid = (lo + hi) // 2
            if line_starts[mid] <= pos:
                lo = mid
            else:
                hi = mid
        return lo + 1

    for m in re.finditer(r"\bfn\s+([A-Za-z_][A-Za-z0-9_]*)", text):
        # Find the body: the first `{` outside parentheses/brackets, unless a `;` (a declaration
        # without a body, as in a trait) comes first.
        depth, j = 0, m.end()
        while j < len(text):
            ch = text[j]
            if ch in "([":
                depth += 1
            elif ch in ")]":
                depth -= 1
            elif depth == 0 and ch == ";":
                j = -1
                break
            elif depth == 0 and ch == "{":
                break
            j += 1
        if j < 0 or j >= len(text):
            continue
        braces, k = 0, j
        while k < len(text):
            if text[k] == "{":
                braces += 1
            elif text[k] == "}":
                braces -= 1
                if braces == 0:
                    break
            k += 1
        yield m.group(1), line_of(m.start()), line_of(k)


def rust_files(path: pathlib.Path):
    if path.is_file():
        yield path
        return
    root = path / "src" if (path / "src").is_dir() else path
    yield from sorted(root.rglob("*.rs"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fn-limit", type=int, default=250)
    ap.add_argument("--file-limit", type=int, default=1200)
    ap.add_argument("paths", nargs="+", type=pathlib.Path)
    args = ap.parse_args()

    long_files, long_fns = [], []
    for p in args.paths:
        for f in rust_files(p):
            src = f.read_text(encoding="utf-8")
            lines = src.count("\n") + (0 if src.endswith("\n") or not src else 1)
            if lines > args.file_limit:
                long_files.append((lines, str(f)))
            for name, first, last in functions(src):
                length = last - first + 1
                if length > args.fn_limit:
                    long_fns.append((length, f"{f}:{first}", name))

    print(f"files over {args.file_limit} lines: {len(long_files)}")
    for lines, f in sorted(long_files, reverse=True):
        print(f"  {lines:6} {f}")
    print(f"functions over {args.fn_limit} lines: {len(long_fns)}")
    for length, where, name in sorted(long_fns, reverse=True):
        print(f"  {length:6} {name} ({where})")
    return 1 if long_files or long_fns else 0


if __name__ == "__main__":
    sys.exit(main())
