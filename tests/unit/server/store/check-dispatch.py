#!/usr/bin/env python3
"""check-dispatch.py SOURCE_DIR: every public store function goes through
the dispatch (server/store/store_backend.h).

Each function that store.h, store_read.h or store_alerts.h declares
(twl_store_*, twl_read_*) but for the few that are no backend's
(twl_store_is_postgresql, twl_glob_to_like) must be
- defined in server/store/store.c (its dispatcher), and
- renamed for the SQLite backend in store_sqlite_names.h, and set in its
  table (store_sqlite_ops.c),
except those store.c builds on another public function (ON_TOP), which
need only be defined there.
A function the SQLite files defined under its public name instead would
be called with a PostgreSQL store too, and read it as SQLite's.
Prints what is missing, exits 1 if anything is.
"""
import os
import re
import sys

NOT_DISPATCHED = {"twl_store_is_postgresql", "twl_glob_to_like"}
# Defined in store.c on top of another public function, for every backend.
ON_TOP = {"twl_store_annotation_add"}
DECL = re.compile(r"^(?:int|void|bool)\s+\*?(twl_(?:store|read)_\w+)\(", re.M)


def read(src, rel):
    with open(os.path.join(src, rel), encoding="utf-8") as fh:
        return fh.read()


def main(src):
    public = set()
    for h in ("store.h", "store_read.h", "store_alerts.h"):
        public |= set(DECL.findall(read(src, "server/store/" + h)))
    public -= NOT_DISPATCHED
    store_c = read(src, "server/store/store.c")
    names = read(src, "server/store/sqlite/store_sqlite_names.h")
    ops = read(src, "server/store/sqlite/store_sqlite_ops.c")
    bad = []
    for f in sorted(public):
        sq = "twl_sqlite_" + f[len("twl_"):]
        if not re.search(r"^(?:int|void|bool)\s+%s\(" % f, store_c, re.M):
            bad.append("%s: no dispatcher in server/store/store.c" % f)
        if f in ON_TOP:
            continue
        if not re.search(r"^#define %s\s+(?:\\\n\s*)?%s$" % (f, sq), names,
                         re.M):
            bad.append("%s: not renamed in store_sqlite_names.h" % f)
        if f != "twl_store_open" and not re.search(r"= %s,$" % sq, ops,
                                                   re.M):
            bad.append("%s: %s not in store_sqlite_ops.c" % (f, sq))
    for b in bad:
        print(b)
    print("%d public store functions, %d problems" % (len(public), len(bad)))
    return 1 if bad or len(public) < 40 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
