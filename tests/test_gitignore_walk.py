"""Outside git the ``@`` picker walks the directory and honours its ``.gitignore`` files:
it must keep and leave out exactly what git itself would (git's wildmatch rules).

Each case writes a tree that is no git work tree, lists it (the walk), then makes it a
work tree and lists it again (git's own ``ls-files``): the two lists must be the same, and
the one expected. The cases are those a hand translation of globs to regexes got wrong.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tui_agent.core.project_files import list_files

CASES = {
    # `**/` in the middle matches no directory too; a leading `**/` matches at the top.
    "double star in the middle": ("a/**/b\n", ["a/b", "a/x/b", "a/x/y/b", "a/bb", "c/a/b"],
                                  ["a/bb", "c/a/b"]),
    "leading double star": ("**/foo\n**/doc/*.txt\n",
                            ["foo", "x/foo", "doc/a.txt", "x/doc/b.txt", "doc/x/c.txt"],
                            ["doc/x/c.txt"]),
    # A backslash makes a leading `#` or `!`, a `*` or a trailing space literal.
    "escapes": ("\\#note\n\\!bang\na\\*b\ntrail\\ \n",
                ["#note", "!bang", "a*b", "axb", "trail ", "trail"], ["axb", "trail"]),
    # Unescaped trailing spaces are dropped.
    "trailing spaces": ("spaced   \n", ["spaced", "spaced2"], ["spaced2"]),
    # `[!...]` is a negated class (not a `!` or the letters), `[]...]` holds a `]`.
    "character classes": ("[!a]x\n[]]y\n[a-c]z\n", ["ax", "bx", "!x", "]y", "by", "bz", "dz"],
                          ["ax", "by", "dz"]),
    # `dir/` leaves out directories only; `!` brings back what a line above left out.
    "directory only and negation": ("out/\n*.log\n!keep.log\n",
                                    ["out/a.txt", "src/out/b.txt", "src2/out", "a.log",
                                     "src/keep.log"],
                                    ["src/keep.log", "src2/out"]),
    # A deeper .gitignore overrides a shallower one: its `!` brings a file back.
    "a deeper file wins": ("*.log\nbuild/\n", ["a.log", "sub/.gitignore", "sub/b.log",
                                               "sub/keep.log"],
                           ["sub/.gitignore", "sub/keep.log"]),
    # `foo/**` leaves out what is inside foo, not foo itself: `!foo/keep` brings it back.
    "inside a directory": ("foo/**\n!foo/keep\n", ["foo/keep", "foo/drop", "foo/x/y"],
                           ["foo/keep"]),
    # A line git rejects (a reversed range, a trailing backslash, a lone `!`) is skipped
    # and the lines around it still apply.
    "lines git rejects": ("[z-a]\n*.tmp\nodd\\\n!\n", ["a.tmp", "m", "odd", "odd\\"],
                          ["m", "odd", "odd\\"]),
}
NESTED = {"a deeper file wins": {"sub/.gitignore": "!keep.log\n"}}


def tree(root: Path, gitignore: str, files: list[str], nested: dict[str, str]) -> None:
    (root / ".gitignore").write_text(gitignore, encoding="utf-8")
    for name in files:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(nested.get(name, "x"), encoding="utf-8")


@pytest.mark.parametrize("case", list(CASES))
def test_the_walk_keeps_what_git_keeps(tmp_path: Path, case: str) -> None:
    gitignore, files, kept = CASES[case]
    root = tmp_path / "project"
    root.mkdir()
    tree(root, gitignore, files, NESTED.get(case, {}))
    expected = sorted([".gitignore", *kept])
    assert list_files(root) == expected  # walked: no git work tree here
    subprocess.run(["git", "init", "-q", str(root)], check=True, timeout=30)
    assert list_files(root) == expected  # git's own list agrees
