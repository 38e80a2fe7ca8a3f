#!/usr/bin/env python3
"""check-layout.py SOURCE_DIR: the layout rules a reviewer would otherwise
check by hand, as a unit test.

1. No project file cites a path outside the repository (an absolute path
   under /work, /home or /root, or a relative path climbing out of the
   tree to a "shared" folder): facts the project relies on are written into
   its own documents (docs/kernel-facts.md).
2. No C comment or script comment names an issue number ("issue 5"): the
   tracker is not part of the repository, so such a reference means nothing
   to a reader of the code.
3. No function in agent/, server/ or common/ is longer than 100 lines and no
   production C file there is longer than 900 lines (style: a function is
   read at once; a file is one concern). The function rule holds in bench/
   and tests/ too (the benchmarks, guest programs and fake servers), except
   for cmocka test cases (static void test_*(void **state)), which read as
   one list of steps and assertions.

Prints every violation with file and line, exits 1 if there was any.
"""
import os
import re
import sys

SKIP_DIRS = {".git", "build", "node_modules"}
SKIP_FILES = {"vmlinux.h", "package-lock.json", ".git"}
TEXT_EXT = (".c", ".h", ".md", ".sh", ".txt", ".json", ".sql", ".cmake",
            ".js", ".html", ".css", ".py", ".awk", ".conf", ".example",
            ".service", ".8", "")
OUTSIDE = re.compile(r"((?<![\w}$.])/work/|(?<![\w}$.])/home/[a-z]|\.\./shared/|(?<![\w}$.])/root/)")
ISSUE = re.compile(r"\b[Ii]ssue\s+#?\d+\b")
MAX_FN, MAX_FILE = 100, 900
TEST_CASE = re.compile(r"static void test_\w+\(void \*\*state\)")


def project_files(src):
    for root, dirs, files in os.walk(src):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS]
        for f in files:
            if f in SKIP_FILES:
                continue
            path = os.path.join(root, f)
            ext = os.path.splitext(f)[1]
            if ext in TEXT_EXT or f in ("CMakeLists.txt",):
                yield os.path.relpath(path, src)


def read(src, rel):
    try:
        with open(os.path.join(src, rel), encoding="utf-8") as fh:
            return fh.read().split("\n")
    except (UnicodeDecodeError, OSError):
        return []


def comment_lines(rel, lines):
    """Yield (lineno, text) of comment text in C files, '#' lines elsewhere."""
    if rel.endswith((".c", ".h", ".js")):
        in_block = False
        for i, line in enumerate(lines, 1):
            s = line
            if in_block:
                yield i, s
                if "*/" in s:
                    in_block = False
                continue
            if "/*" in s:
                yield i, s[s.index("/*"):]
                in_block = "*/" not in s[s.index("/*"):]
            elif "//" in s:
                yield i, s[s.index("//"):]
    elif rel.endswith((".sh", ".py", ".cmake", ".awk", ".conf", ".example",
                       ".service")) or rel.endswith("CMakeLists.txt") or \
            os.path.splitext(rel)[1] == "":
        for i, line in enumerate(lines, 1):
            if "#" in line:
                yield i, line[line.index("#"):]


def long_functions(lines):
    """Yield (lineno, length, head) of top-level functions over MAX_FN lines:
    a function is a line at column 0 ending in ')' (or a continued
    signature) followed by '{' alone on a line, up to the '}' alone."""
    i = 0
    while i < len(lines):
        line = lines[i]
        if re.match(r"^[A-Za-z_].*[),(]\s*$", line) and not line.endswith(";"):
            j = i
            while j < len(lines) and j < i + 8 and lines[j] != "{":
                if lines[j].endswith(";"):
                    break
                j += 1
            if j < len(lines) and lines[j] == "{":
                k = j + 1
                while k < len(lines) and lines[k] != "}":
                    k += 1
                n = k - i + 1
                if n > MAX_FN:
                    yield i + 1, n, line.strip()[:60]
                i = k
        i += 1


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else "."
    problems = []
    n = 0
    for rel in sorted(project_files(src)):
        if rel.startswith("tests/unit/style/check-layout.py"):
            continue
        lines = read(src, rel)
        n += 1
        for i, line in enumerate(lines, 1):
            if OUTSIDE.search(line):
                problems.append(f"{rel}:{i}: cites a path outside the "
                                f"repository: {line.strip()[:80]}")
        for i, text in comment_lines(rel, lines):
            if ISSUE.search(text):
                problems.append(f"{rel}:{i}: a comment names an issue "
                                f"number: {text.strip()[:80]}")
        top = rel.split("/")[0]
        if top in ("bench", "tests") and rel.endswith(".c"):
            for ln, length, head in long_functions(lines):
                if not TEST_CASE.match(head):
                    problems.append(f"{rel}:{ln}: function of {length} "
                                    f"lines, more than {MAX_FN}: {head}")
        if top in ("agent", "server", "common") and rel.endswith(".c"):
            if len(lines) > MAX_FILE:
                problems.append(f"{rel}: {len(lines)} lines, more than "
                                f"{MAX_FILE}: cut it along its seams")
            for ln, length, head in long_functions(lines):
                problems.append(f"{rel}:{ln}: function of {length} lines, "
                                f"more than {MAX_FN}: {head}")
    for p in problems:
        print(p)
    print(f"check-layout: {n} files, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
