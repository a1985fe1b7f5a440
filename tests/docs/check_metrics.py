"""Completeness check of docs/metrics.md (CTest docs.metrics).

Collects the metric names of the source: every string literal "clusterd_..." or "process_..."
in the *.cc and *.h files under src/ and apps/ (tracked by git, or untracked and not ignored, so
that a new file counts before it is added). Each must appear in docs/metrics.md as `name`; each
name in the first column of a table there must still be in the source. NOT_METRICS lists the
literals of that shape that are not metrics. Run: /usr/bin/python3 -m unittest -v check_metrics
(from tests/docs).
"""

import os
import re
import subprocess
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.environ.get("REPO_ROOT", os.path.abspath(os.path.join(HERE, "..", "..")))
DOC = os.path.join(ROOT, "docs", "metrics.md")

# Literals the pattern finds that are not metric names.
NOT_METRICS = {
    "process_recover",  # a clustersim scenario key (src/sim/scenario.cc), not a series
}

NAME = re.compile(r'"((?:clusterd|process)_[a-z0-9_]+)"')
ROW = re.compile(r"^\|\s*`([a-z][a-z0-9_]*)`\s*\|", re.M)


def source_files():
    files = set()
    for extra in ([], ["--others", "--exclude-standard"]):
        out = subprocess.run(["git", "-C", ROOT, "ls-files", *extra, "--", "src", "apps"],
                             capture_output=True, text=True, check=True)
        files.update(line for line in out.stdout.splitlines() if line)
    return sorted(f for f in files if f.endswith((".cc", ".h")))


def names_in(text):
    return set(NAME.findall(text))


def source_names():
    names = set()
    for f in source_files():
        path = os.path.join(ROOT, f)
        if not os.path.isfile(path):  # tracked, deleted in the working tree
            continue
        with open(path, encoding="utf-8", errors="replace") as fh:
            names |= names_in(fh.read())
    return names - NOT_METRICS


def documented():
    with open(DOC, encoding="utf-8") as fh:
        text = fh.read()
    return text, set(ROW.findall(text))


class MetricsReference(unittest.TestCase):
    def test_every_metric_is_documented(self):
        text, _ = documented()
        missing = sorted(n for n in source_names() if f"`{n}`" not in text)
        self.assertEqual(missing, [], "metrics not in docs/metrics.md")

    def test_every_documented_metric_exists(self):
        _, rows = documented()
        gone = sorted(rows - source_names())
        self.assertEqual(gone, [], "docs/metrics.md tables name metrics the source no longer has")

    def test_not_metrics_are_still_in_the_source(self):
        found = set()
        for f in source_files():
            path = os.path.join(ROOT, f)
            if os.path.isfile(path):
                with open(path, encoding="utf-8", errors="replace") as fh:
                    found |= names_in(fh.read())
        self.assertEqual(NOT_METRICS - found, set(), "gone from the source: remove from NOT_METRICS")

    def test_the_checker_finds_names_and_rows(self):
        self.assertEqual(names_in('GetCounter("clusterd_x_total", "help clusterd_y")'),
                         {"clusterd_x_total"})
        self.assertEqual(set(ROW.findall("| metric | type |\n|---|---|\n| `clusterd_a` | gauge |\n"
                                         "text `clusterd_b`\n")), {"clusterd_a"})


if __name__ == "__main__":
    unittest.main()
