"""The saved conversations as ``/resume``'s picker lists them (core/session/listing.py):
newest first, with when each was last written, the folder it was started in and its
title (the first prompt, one line, no control characters), and which are this project's.
Real session files, written by the agent's own writer."""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path

from tui_agent.core.session import SessionStore, SessionWriter
from tui_agent.core.session.listing import (
    list_sessions,
    project_folder,
    split_by_folder,
    when_text,
)


def chat(store: SessionStore, stem: str, cwd: str | None, first: str, when: datetime,
         messages: int = 2) -> None:
    meta = {"model": "openai/x"} | ({"cwd": cwd} if cwd else {})
    writer = SessionWriter.create(store.directory / f"{stem}.jsonl", meta, ["sk-secret"])
    for i in range(messages):
        writer.message({"role": "user" if i % 2 == 0 else "assistant",
                        "content": first if i == 0 else f"reply {i}"})
    writer.close()
    stamp = when.timestamp()
    os.utime(writer.path, (stamp, stamp))


def test_listed_newest_first_with_folder_date_and_a_clean_one_line_title(
        tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "sessions")
    store.directory.mkdir()
    chat(store, "a", "/srv/site", "fix the\nlogin \x1b]52;c;ZXZpbA==\x07page sk-secret",
         datetime(2026, 3, 1, 9, 30))
    chat(store, "b", "/srv/site/docs", "write the docs", datetime(2026, 3, 2, 10, 0), 3)
    chat(store, "c", "/home/ann/other", "elsewhere", datetime(2026, 3, 3, 11, 0))
    chat(store, "d", None, "an old file without a folder", datetime(2026, 2, 1, 8, 0))
    SessionWriter.create(store.directory / "e.jsonl", {"cwd": "/srv/site"}).close()  # empty

    infos = list_sessions(store, ["sk-secret"])
    assert [i.id for i in infos] == ["c", "b", "a", "d"]
    first = infos[2]
    assert first.title == "fix the login page ***"  # one line, the escape and key gone
    assert first.when == datetime(2026, 3, 1, 9, 30) and first.folder == Path("/srv/site")
    assert infos[1].messages == 3 and infos[3].folder is None

    here, elsewhere = split_by_folder(infos, Path("/srv/site"))
    assert [i.id for i in here] == ["b", "a"]  # below the project's folder counts
    assert [i.id for i in elsewhere] == ["c", "d"]


def test_dates_read_at_a_glance() -> None:
    now = datetime(2026, 11, 28, 18, 0)
    assert when_text(datetime(2026, 11, 28, 9, 5), now) == "today 09:05"
    assert when_text(datetime(2026, 11, 27, 23, 59), now) == "yesterday 23:59"
    assert when_text(datetime(2026, 3, 1, 9, 30), now) == "Mar 01 09:30"
    assert when_text(datetime(2025, 12, 31, 9, 30), now) == "2025-12-31"


def test_the_project_folder_is_the_repository_or_the_cwd(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "src" / "deep").mkdir(parents=True)
    assert project_folder(repo / "src" / "deep") == repo.resolve()
    loose = tmp_path / "loose"
    loose.mkdir()
    assert project_folder(loose) == loose.resolve()
