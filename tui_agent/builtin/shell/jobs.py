"""Background commands (``shell`` with ``background = true``): each a
:class:`~tui_agent.builtin.shell.process.Running` under a short id, read with
``shell_output`` (what arrived since the last read, and whether it still runs) and ended
with ``shell_kill``. They run without a timeout, in the same sandbox as any command, and
all end when the server does: :meth:`Jobs.close` at its exit, and the kernel's parent-death
signal (bwrap's ``--die-with-parent``, ``PR_SET_PDEATHSIG``) if it is killed outright."""

from __future__ import annotations

import itertools

from tui_agent.builtin.shell.process import Running


class JobError(Exception):
    """A job id that names nothing, or one job too many; the message is for the model."""


class Jobs:
    def __init__(self, most: int) -> None:
        self.most = most
        self.running: dict[str, Running] = {}
        self._ids = itertools.count(1)

    def add(self, job: Running) -> str:
        job_id = str(next(self._ids))
        self.running[job_id] = job
        return job_id

    def check_room(self) -> None:
        alive = [i for i, job in self.running.items() if job.returncode is None]
        if len(alive) >= self.most:
            raise JobError(f"{len(alive)} background commands already run (the most "
                           f"[tools.shell] max_jobs allows); end one with shell_kill "
                           f"(ids: {', '.join(alive)})")

    def get(self, job_id: str) -> Running:
        job = self.running.get(str(job_id).strip())
        if job is None:
            known = ", ".join(self.running) or "none"
            raise JobError(f"no background command has id '{job_id}' (ids: {known})")
        return job

    def report(self, job_id: str, job: Running) -> str:
        """New output since the last report, then the job's state."""
        text = job.capture.take_new()
        if job.returncode is None:
            state = f"[job {job_id} is still running (pid {job.pid})]"
        else:
            state = f"[job {job_id} has ended] {job.footer()}".rstrip()
        return f"{text.rstrip()}\n{state}" if text.strip() else state

    def close(self) -> None:
        """End every job now (synchronous: it runs at the server's exit)."""
        for job in self.running.values():
            job.end()
