"""Link checker for the repository's documents (CTest docs.links).

Scans every tracked *.md file for references to files: relative Markdown links `[text](path)`,
`dir/file.ext` paths, and bare `name.md` document names. Each must name a file in the
repository (relative to the document, to the repository root, or, for a path, as the tail of a
tracked file's path such as `store/kube/kube_store.cc` for src/store/kube/kube_store.cc).
URLs, absolute paths, home paths, globs and placeholders (`<node>`, `$VAR`, `*`) are not
file references in this sense and are skipped, as are paths under build/ (generated) and the
contents of fenced code blocks (examples of commands and state, not references).

KNOWN_MISSING lists documents still cited that are not in the repository yet; the test fails
when one of them appears in the repository (remove it from the list) and when any other
reference is missing. Run: /usr/bin/python3 -m unittest -v check_links (from tests/docs).
"""

import os
import re
import subprocess
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.environ.get("REPO_ROOT", os.path.abspath(os.path.join(HERE, "..", "..")))

# Behaviour specs the documents still cite by name; their facts are to move into docs/.
KNOWN_MISSING = set()

EXTENSIONS = r"(?:md|json|yaml|yml|cc|h|proto|py|txt|sh|cmake|jsonl|csv|service)"
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
PATH = re.compile(r"(?<![\w/.~$<-])((?:[\w.-]+/)+[\w.-]+\." + EXTENSIONS + r")(?![\w/-]|\.\w)")
DOC = re.compile(r"(?<![\w/.-])([\w-]+\.md)(?![\w/-]|\.\w)")


def tracked_files():
    out = subprocess.run(["git", "-C", ROOT, "ls-files"], capture_output=True, text=True,
                         check=True)
    return [line for line in out.stdout.splitlines() if line]


FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def references(text):
    text = FENCE.sub("", text)
    refs = set()
    for m in LINK.finditer(text):
        target = m.group(1).split("#", 1)[0]
        if target.strip(".") and not re.match(r"^[a-z]+:", target):
            refs.add(target)
    refs.update(m.group(1) for m in PATH.finditer(text))
    refs.update(m.group(1) for m in DOC.finditer(text))
    return refs


def skipped(ref):
    return (ref.startswith(("/", "~", "build/", "build-")) or "://" in ref or
            any(c in ref for c in "<>*$"))


def exists(ref, doc, files, names):
    ref = ref.lstrip("./") if ref.startswith("./") else ref
    candidates = [os.path.normpath(os.path.join(os.path.dirname(doc), ref)), os.path.normpath(ref)]
    if any(c in files or any(f.startswith(c + "/") for f in files) for c in candidates):
        return True
    if "/" not in ref:
        return ref in names
    return any(f.endswith("/" + ref) for f in files)


def missing_references():
    files = set(tracked_files())
    names = {os.path.basename(f) for f in files}
    missing = []
    for doc in sorted(f for f in files if f.endswith(".md")):
        with open(os.path.join(ROOT, doc), encoding="utf-8") as f:
            text = f.read()
        for ref in sorted(references(text)):
            if skipped(ref) or exists(ref, doc, files, names):
                continue
            missing.append((doc, ref))
    return missing, names


class DocumentLinks(unittest.TestCase):
    def test_every_referenced_file_is_in_the_repository(self):
        missing, _ = missing_references()
        unexpected = [(d, r) for d, r in missing if os.path.basename(r) not in KNOWN_MISSING]
        self.assertEqual(unexpected, [], "documents reference files that are not in the repo")

    def test_known_missing_documents_are_still_missing(self):
        _, names = missing_references()
        self.assertEqual(KNOWN_MISSING & names, set(),
                         "now in the repository: remove from KNOWN_MISSING")

    def test_the_checker_finds_a_broken_reference(self):
        refs = references("see [x](docs/nowhere.md), `src/agent/none.cc` and gone.md; "
                          "not /var/lib/x.json or `dir:<path>/a.json`")
        self.assertEqual(refs, {"docs/nowhere.md", "src/agent/none.cc", "nowhere.md", "gone.md",
                                "/var/lib/x.json", "a.json"} & refs)
        self.assertIn("src/agent/none.cc", refs)
        self.assertIn("gone.md", refs)
        self.assertEqual(references("`deploy/x.service.in` and a.md.in"), set())
        files = set(tracked_files())
        names = {os.path.basename(f) for f in files}
        self.assertFalse(exists("src/agent/none.cc", "docs/x.md", files, names))
        self.assertTrue(exists("store/kube/kube_store.cc", "docs/x.md", files, names))
        self.assertTrue(skipped("/var/lib/x.json"))


if __name__ == "__main__":
    unittest.main()
