#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check the messages `twilight-server export --out-dir` wrote.

usage: check_export_mail.py CATALOG_JSON DIR LIST=FEATURE[,FEATURE...] ...

Each LIST=FEATURES names a message DIR/LIST.eml (and DIR/LIST.txt) that
must exist with exactly those features; no other .eml or .txt may be in
DIR. Every message must parse as RFC 5322 with Python's email package
without a defect, end its lines in CRLF, fold headers at 78 columns, carry
only the expected headers, and have To, Cc, In-Reply-To and References as
this script derives them from the catalog on its own (To the routes' list,
Cc every other address of the routes, In-Reply-To the thread most of the
features belong to, References that cover letter then every id of the
features' references). The .txt is the body with LF line ends, and no
body line is a header.
"""
import email
import email.policy
import email.utils
import json
import os
import sys

HEADERS = {"from", "to", "cc", "subject", "date", "in-reply-to",
           "references", "mime-version", "content-type",
           "content-transfer-encoding"}


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def addr(a):
    return email.utils.parseaddr(a)[1].lower()


def expected(catalog, list_, feats):
    routes = {r["id"]: r for r in catalog["routes"]}
    byid = {f["id"]: f for f in catalog["features"]}
    order = [f["id"] for f in catalog["features"]]
    feats = sorted(feats, key=order.index)
    cc, seen = [], {list_.lower()}
    for fid in feats:
        r = routes[byid[fid]["route"]]
        if r["to"][0] != list_:
            fail(f"{fid} routes to {r['to'][0]}, not {list_}")
        for a in r["to"] + r["cc"]:
            if addr(a) not in seen:
                seen.add(addr(a))
                cc.append(addr(a))
    threads = [byid[f]["in_reply_to"] for f in feats if byid[f]["in_reply_to"]]
    root = max(threads, key=lambda t: (threads.count(t), -threads.index(t)),
               default=None)
    refs = []
    if root:
        refs.append(root)
        for fid in feats:
            for r in byid[fid]["references"]:
                if r not in refs:
                    refs.append(r)
    return feats, cc, root, refs


def check_raw(name, raw):
    head, sep, _ = raw.partition(b"\r\n\r\n")
    if not sep:
        fail(f"{name}: no empty CRLF line after the headers")
    if raw.replace(b"\r\n", b"").find(b"\n") >= 0 or \
            raw.replace(b"\r\n", b"").find(b"\r") >= 0:
        fail(f"{name}: a bare LF or CR")
    for line in head.split(b"\r\n"):
        if len(line) > 78:
            fail(f"{name}: header line over 78 columns: {line!r}")
        if any(c > 0x7e for c in line):
            fail(f"{name}: 8-bit byte in a header: {line!r}")


def check_message(catalog, d, list_, feats):
    path = os.path.join(d, list_ + ".eml")
    with open(path, "rb") as f:
        raw = f.read()
    check_raw(path, raw)
    policy = email.policy.default.clone(raise_on_defect=True)
    msg = email.message_from_bytes(raw, policy=policy)
    if msg.defects:
        fail(f"{path}: defects {msg.defects}")
    names = [k.lower() for k in msg.keys()]
    if len(names) != len(set(names)) or not set(names) <= HEADERS:
        fail(f"{path}: headers {names}")
    for k in msg.keys():
        if msg[k].defects:
            fail(f"{path}: {k} defects {msg[k].defects}")
    feats, cc, root, refs = expected(catalog, list_, feats)
    if [a.addr_spec.lower() for a in msg["To"].addresses] != [list_]:
        fail(f"{path}: To {msg['To']}")
    got_cc = [a.addr_spec.lower() for a in msg["Cc"].addresses] \
        if msg["Cc"] else []
    if got_cc != cc:
        fail(f"{path}: Cc {got_cc}, expected {cc}")
    want_irt = f"<{root}>" if root else None
    if (msg["In-Reply-To"] and str(msg["In-Reply-To"]).strip()) != want_irt:
        fail(f"{path}: In-Reply-To {msg['In-Reply-To']}, expected {want_irt}")
    got_refs = str(msg["References"] or "").split()
    if got_refs != [f"<{r}>" for r in refs]:
        fail(f"{path}: References {got_refs}, expected {refs}")
    subject = str(msg["Subject"])
    for fid in feats:
        if fid not in subject:
            fail(f"{path}: Subject {subject!r} does not name {fid}")
    for other in catalog["features"]:
        if other["id"] not in feats and other["id"] + "," in subject + ",":
            fail(f"{path}: Subject names {other['id']}, not in use")
    if len(subject) > 160 or "of " in subject.split(":")[0]:
        fail(f"{path}: Subject {subject!r}")
    if msg.get_content_type() != "text/plain" or \
            msg.get_content_charset() != "utf-8" or \
            str(msg["MIME-Version"]) != "1.0":
        fail(f"{path}: not text/plain; charset=utf-8 MIME 1.0")
    if not msg["From"].addresses or not str(msg["Date"]) or \
            msg["Date"].datetime is None:
        fail(f"{path}: From or Date missing")
    body = msg.get_content()
    with open(os.path.join(d, list_ + ".txt"), encoding="utf-8",
              newline="") as f:
        txt = f.read()
    if body.replace("\r\n", "\n") != txt or "\r" in txt:
        fail(f"{path}: the .txt is not the body with LF line ends")
    for line in txt.split("\n"):
        head = line.split(":", 1)[0].lower()
        if ":" in line and head in HEADERS | {"bcc"}:
            fail(f"{path}: a header line in the body: {line!r}")
    for fid in feats:
        if f"\n{fid}: " not in "\n" + txt:
            fail(f"{path}: the body has no section for {fid}")
    print(f"ok {list_}: To {list_}, Cc {len(cc)}, In-Reply-To {want_irt}, "
          f"References {len(refs)}, Subject {subject!r}")


def main():
    if len(sys.argv) < 3:
        fail(__doc__)
    with open(sys.argv[1], encoding="utf-8") as f:
        catalog = json.load(f)
    d = sys.argv[2]
    want = {}
    for arg in sys.argv[3:]:
        list_, _, feats = arg.partition("=")
        want[list_] = feats.split(",")
    have = sorted(os.listdir(d))
    expect = sorted([l + ".eml" for l in want] + [l + ".txt" for l in want])
    if have != expect:
        fail(f"{d} holds {have}, expected {expect}")
    for list_, feats in want.items():
        check_message(catalog, d, list_, feats)


if __name__ == "__main__":
    main()
