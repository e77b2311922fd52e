#!/usr/bin/python3
"""A clone is the whole product: no tracked file reads or cites a folder beside the repository (the workspace's
shared corpora and notes exist only next to the developers' checkout), and every real file in tests/data is named,
with its origin, in tests/data/README.md.
usage: test_self_contained.py SOURCE_DIR"""
import os
import re
import subprocess
import sys
import unittest

SOURCE = os.path.abspath(sys.argv[1])
# Spelled in pieces so that this file does not match itself.
SIDE = "sha" + "red"
OUTSIDE = re.compile(r"\.\./" + SIDE + r"\b|\b" + SIDE + r"/(corpora|reference|seeds|DESIGN\.md)\b")
SKIP_DIRS = {".git", ".deps", "node_modules", "__pycache__"}


def tracked_files():
    """git's list when SOURCE is a checkout; otherwise (an exported tarball) every file but build folders."""
    r = subprocess.run(["git", "-C", SOURCE, "ls-files", "-z"], capture_output=True, check=False)
    if r.returncode == 0 and r.stdout:
        return [p for p in r.stdout.decode().split("\0") if p]
    found = []
    for root, dirs, files in os.walk(SOURCE):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS and not d.startswith("build")]
        found += [os.path.relpath(os.path.join(root, f), SOURCE) for f in files]
    return found


class SelfContained(unittest.TestCase):
    def test_nothing_refers_outside_the_repository(self):
        hits = []
        for rel in tracked_files():
            path = os.path.join(SOURCE, rel)
            if not os.path.isfile(path):
                continue
            with open(path, "rb") as f:
                text = f.read().decode("utf-8", errors="replace")
            for no, line in enumerate(text.splitlines(), 1):
                if OUTSIDE.search(line):
                    hits.append(f"{rel}:{no}: {line.strip()[:120]}")
        self.assertEqual(hits, [], "files that read or cite a folder outside the repository:\n" + "\n".join(hits))

    def test_every_data_file_has_its_origin(self):
        data = os.path.join(SOURCE, "tests", "data")
        readme = open(os.path.join(data, "README.md"), encoding="utf-8").read()
        missing = []
        for root, _, files in os.walk(data):
            for f in files:
                rel = os.path.relpath(os.path.join(root, f), data)
                parents = [rel[:i + 1] for i, ch in enumerate(rel) if ch == "/"]  # "a/", "a/b/": a folder row covers it
                if rel != "README.md" and rel not in readme and f not in readme and not any(p in readme for p in parents):
                    missing.append(rel)
        self.assertEqual(missing, [], "tests/data files that its README does not name: " + ", ".join(missing))

    def test_the_pattern_catches_a_reference(self):
        # The check above is only as good as its pattern: it must see the two ways a path leaks in.
        self.assertTrue(OUTSIDE.search("open('../" + SIDE + "/corpora/om/x.om')"))
        self.assertTrue(OUTSIDE.search("// Source: " + SIDE + "/reference/atc.md §1.5"))
        self.assertFalse(OUTSIDE.search("std::make_" + SIDE + "<Err>(...)"))


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
