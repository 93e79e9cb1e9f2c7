"""The built-in ``shell`` tools through the real hub, over stdio, with real bubblewrap,
real processes and a real Docker engine: each escape the issue names is tried and
refused or contained, and nothing is left running."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import stat
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import host_visible, need, tagged_env
from tests.shell_kit import alive, call, docker_running, need_bwrap, shell_hub, shell_server
from tui_agent.builtin.secrets import secret_places
from tui_agent.config import ConfigError, load
from tui_agent.config.builtin_server import OFF_VARIABLE

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


OTHER_SECRETS = (".claude/.credentials.json", ".codex/auth.json", ".cache/huggingface/token",
                 ".config/github-copilot/apps.json", ".bash_history",
                 ".mozilla/firefox/logins.json", ".kube/config", ".docker/config.json")
"""Other secret stores in the test's home (other agents' logins, tokens, a history...)."""


@pytest.fixture
def outside() -> Iterator[Path]:
    """A folder the sandbox sees as the host has it: not under ``/tmp`` (bwrap gives a
    command an empty ``/tmp`` of its own, where nothing of the host's is to hide)."""
    folder = Path(tempfile.mkdtemp(prefix=".test-shell-", dir=host_visible()))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def place(tmp_path: Path, outside: Path) -> tuple[Path, Path]:
    """A project and a home (outside ``/tmp``) with an SSH key, tui-agent's own config
    and other secrets."""
    project, home = tmp_path / "project", outside / "home"
    project.mkdir()
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("PRIVATE-KEY-MATERIAL\n")
    (home / ".config" / "tui-agent").mkdir(parents=True)
    (home / ".config" / "tui-agent" / "config.toml").write_text("# SECRET-CONFIG\n")
    (home / ".netrc").write_text("machine x password NETRC-PASSWORD\n")
    for name in OTHER_SECRETS:
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_text(f"OTHER-SECRET {name}\n")
    return project, home


def processes_with(marker: str) -> list[int]:
    """Live processes whose command line holds ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker in (entry / "cmdline").read_bytes().decode("utf-8", "replace"):
                    found.append(int(entry.name))
            except OSError:
                continue
    return [pid for pid in found if alive(pid) and pid != os.getpid()]


async def gone(marker: str, timeout: float = 10) -> list[int]:
    deadline = time.monotonic() + timeout
    while (left := processes_with(marker)) and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    return left


async def test_bwrap_project_writable_rest_read_only_secrets_hidden(
        tmp_path: Path, place: tuple[Path, Path]) -> None:
    need_bwrap()
    project, home = place
    async with shell_hub(shell_server(project, home), tmp_path) as hub:
        text, error = await call(hub, "shell", command="echo inside > made.txt && cat made.txt")
        assert (text, error) == ("inside", False)
        assert (project / "made.txt").read_text() == "inside\n"
        outside = host_visible() / f".escaped-{uuid.uuid4().hex}.txt"  # not a root
        try:
            text, error = await call(hub, "shell", command=f"echo out > {outside}")
            assert "Read-only file system" in text and "[exit code 2]" in text, text
            assert not outside.exists()
        finally:
            outside.unlink(missing_ok=True)
        # the home is outside /tmp: the sandbox sees it, read-only, with its secrets covered
        text, error = await call(hub, "shell", command=f"echo out > {home}/escaped.txt")
        assert "Read-only file system" in text, text
        assert not (home / "escaped.txt").exists()
        text, _ = await call(hub, "shell", command=f"cat {home}/.ssh/id_* {home}/.netrc "
                                                   f"{home}/.config/tui-agent/config.toml")
        assert "PRIVATE-KEY" not in text and "NETRC-PASSWORD" not in text, text
        assert "SECRET-CONFIG" not in text, text
        text, _ = await call(hub, "shell", command=f"cd {home} && cat {' '.join(OTHER_SECRETS)}")
        assert "OTHER-SECRET" not in text, text
        text, _ = await call(hub, "shell", command=f"ls -a {home}/.claude")
        assert ".credentials" not in text, text
        assert (home / ".bash_history").read_text().startswith("OTHER-SECRET")
        text, _ = await call(hub, "shell", command="env")
        assert "sk-test-secret-key" not in text and "OPENAI_API_KEY" not in text, text
        assert f"HOME={home}" in text
    # A project that is the home folder itself: its secrets are covered all the same.
    async with shell_hub(shell_server(home, home), tmp_path) as hub:
        text, _ = await call(hub, "shell", command="ls -a .ssh; cat .ssh/id_* .netrc "
                                                   ".config/tui-agent/config.toml; ls")
        assert "PRIVATE-KEY" not in text and "NETRC-PASSWORD" not in text, text
        assert "SECRET-CONFIG" not in text and "id_ed25519" not in text, text
        text, _ = await call(hub, "shell", command="echo x > .ssh/authorized_keys")
        assert not (home / ".ssh" / "authorized_keys").exists()


async def test_no_network_in_bwrap_unless_configured(
        tmp_path: Path, place: tuple[Path, Path]) -> None:
    need_bwrap()
    project, home = place
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    probe = (f"python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), "
             "timeout=5); print('CONNECTED')\"")
    try:
        async with shell_hub(shell_server(project, home), tmp_path) as hub:
            text, _ = await call(hub, "shell", command=probe)
            assert "CONNECTED" not in text and "Connection refused" in text, text
        async with shell_hub(shell_server(project, home, network=True), tmp_path) as hub:
            text, _ = await call(hub, "shell", command=probe)
            assert "CONNECTED" in text, text
    finally:
        listener.close()


async def test_fork_bomb_is_contained(tmp_path: Path, place: tuple[Path, Path]) -> None:
    need_bwrap()
    project, home = place
    server = shell_server(project, home, max_processes=24)
    async with shell_hub(server, tmp_path) as hub:
        text, _ = await call(hub, "shell", command=(
            "for i in $(seq 60); do sleep 31337.25 & done 2>&1; echo started"), timeout=10)
        assert "fork" in text.lower() or "resource temporarily unavailable" in text.lower(), text
        assert not await gone("31337.25")
        started = time.monotonic()
        text, error = await call(hub, "shell", command="b(){ b|b& }; b; sleep 1; echo over",
                                 timeout=30)
        # the ceiling stops it (the bomb's forks fail) and the command ends, its PID
        # namespace with it, long before its timeout
        assert "Cannot fork" in text or "Resource temporarily unavailable" in text, text
        assert "timed out" not in text, text
        assert time.monotonic() - started < 15
        text, error = await call(hub, "shell", command="echo still here")
        assert (text, error) == ("still here", False)


@pytest.mark.parametrize("sandbox", ["bwrap", "none"])
async def test_a_command_that_never_ends_is_killed_with_its_children(
        tmp_path: Path, place: tuple[Path, Path], sandbox: str) -> None:
    if sandbox == "bwrap":
        need_bwrap()
    project, home = place
    async with shell_hub(shell_server(project, home, sandbox=sandbox), tmp_path) as hub:
        started = time.monotonic()
        text, error = await call(hub, "shell", command=(
            "echo begun; sleep 31338.5 & sh -c 'sleep 31338.5' & sleep 31338.5"), timeout=1)
        assert error, text
        assert "begun" in text and "timed out after 1 s" in text, text
        assert time.monotonic() - started < 10
        assert not await gone("31338.5")


async def test_background_job_output_and_kill(tmp_path: Path,
                                              place: tuple[Path, Path]) -> None:
    need_bwrap()
    project, home = place
    async with shell_hub(shell_server(project, home), tmp_path) as hub:
        text, error = await call(hub, "shell", background=True, command=(
            "for i in 1 2 3; do echo line$i; sleep 0.1; done; sleep 31339.5"))
        assert not error and "started job 1" in text, text
        deadline = time.monotonic() + 10
        seen = ""
        while "line3" not in seen:
            assert time.monotonic() < deadline, seen
            more, error = await call(hub, "shell_output", id="1")
            assert not error and "still running" in more, more
            seen += more
            await asyncio.sleep(0.1)
        assert seen.index("line1") < seen.index("line3")
        again, _ = await call(hub, "shell_output", id="1")
        assert "line1" not in again  # only what is new
        assert processes_with("31339.5")
        text, error = await call(hub, "shell_kill", id="1")
        assert not error and "has ended" in text and "[killed]" in text, text
        assert not await gone("31339.5")
        text, error = await call(hub, "shell_output", id="7")
        assert error and "no background command has id '7'" in text, text


async def test_background_jobs_end_when_the_server_exits(
        tmp_path: Path, place: tuple[Path, Path]) -> None:
    project, home = place
    for sandbox in ("none", "bwrap"):
        async with shell_hub(shell_server(project, home, direct=True, sandbox=sandbox),
                             tmp_path) as hub:
            text, error = await call(hub, "shell", background=True,
                                     command="sleep 31340.5 & sleep 31340.5")
            assert not error, text
            assert processes_with("31340.5")
        assert not await gone("31340.5"), f"{sandbox}: a job outlived the server"


async def test_output_is_capped_head_and_tail_and_sanitised(
        tmp_path: Path, place: tuple[Path, Path]) -> None:
    project, home = place
    server = shell_server(project, home, sandbox="none", max_output=2000)
    async with shell_hub(server, tmp_path) as hub:
        text, error = await call(hub, "shell", command=(
            "echo FIRST; head -c 500000 /dev/zero | tr '\\0' a; echo; "
            "printf '\\033[31mLAST\\033[0m \\033]0;title\\007\\x9b2J\\n'; exit 3"))
        assert not error
        assert text.startswith("FIRST") and "bytes of output cut here" in text, text[:300]
        assert "LAST" in text and "[exit code 3]" in text, text[-300:]
        assert len(text) < 2500
        assert not any(ord(c) < 32 and c not in "\n\t" for c in text), repr(text[-200:])
        assert "\x1b" not in text and "\x9b" not in text and "title" not in text


async def test_cwd_outside_the_project_is_refused(tmp_path: Path,
                                                  place: tuple[Path, Path]) -> None:
    project, home = place
    (project / "sub").mkdir()
    async with shell_hub(shell_server(project, home, sandbox="none"), tmp_path) as hub:
        text, error = await call(hub, "shell", command="pwd", cwd="sub")
        assert (text, error) == (str(project / "sub"), False)
        text, error = await call(hub, "shell", command="pwd", cwd="../home")
        assert error and "cwd '../home' is outside the project" in text, text


async def test_without_a_working_bwrap_it_says_so_and_still_runs(
        tmp_path: Path, place: tuple[Path, Path]) -> None:
    project, home = place
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to creating new namespace' >&2\n"
                    "exit 1\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    server = shell_server(project, home)
    server.env["PATH"] = f"{bin_dir}:{os.environ['PATH']}"
    async with shell_hub(server, tmp_path) as hub:
        spec = next(s for s in hub.specs() if s.name == "local__shell")
        assert "Not sandboxed: no sandbox: bubblewrap failed its self-test: bwrap: No " \
               "permissions" in spec.description, spec.description
        assert "every one asks first" in spec.description
        assert "destructive" in spec.hints and "read-only" not in spec.hints
        # the server's own answer, which the gate honours (tests/test_unsandboxed_shell.py)
        assert spec.asks == "commands run without a sandbox on this machine", spec
        text, error = await call(hub, "shell", command="echo ran")
        assert (text, error) == ("ran", False)


async def test_docker_sandbox_runs_in_a_container_of_the_image(
        tmp_path: Path, place: tuple[Path, Path]) -> None:
    from tests.dockerkit import engine, ensure_image

    need(docker_running(), "a Docker engine")
    client = engine()
    assert client is not None
    image = ensure_image(client)
    project, home = place
    volumes = [f"{p}:{p}:ro" for p in ("/usr", "/lib", "/lib64", "/bin") if Path(p).exists()]
    server = shell_server(project, home, sandbox="docker", image=image, volumes=volumes)
    async with shell_hub(server, tmp_path) as hub:
        text, error = await call(hub, "shell", command=(
            "echo boxed > made.txt; cat /proc/1/cmdline | tr '\\0' ' '; echo; "
            f"ls {home}/.ssh 2>&1; cat /sys/class/net/*/operstate 2>/dev/null | wc -l"))
        assert not error, text
        assert (project / "made.txt").read_text() == "boxed\n"
        assert text.startswith("/bin/sh -c"), text  # the command is the container's pid 1
        assert "No such file" in text, text  # the home is not mounted
        assert text.rstrip().endswith("1"), text  # loopback only: network none
        text, error = await call(hub, "shell", command="sleep 30", timeout=2)
        assert error and "timed out after 2 s" in text, text
    from tui_agent.builtin.shell.docker_box import LABEL_SHELL

    # Ours only (the ones in this project): a second suite on the machine runs its own.
    left = [c for c in client.containers.list(all=True, filters={"label": LABEL_SHELL})
            if c.attrs["Config"]["WorkingDir"].startswith(str(project))]
    assert not left


def test_shell_config_errors_name_file_line_and_key(tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text("[agent]\nmax_depth = 3\n\n[tools.shell]\nsandbox = \"dockr\"\n")
    with pytest.raises(ConfigError) as info:
        load(config)
    message = str(info.value)
    assert str(config) in message and "line 5" in message and "tools.shell.sandbox" in message
    config.write_text("[tools.shell]\nsandbox = \"docker\"\n")
    with pytest.raises(ConfigError) as info:
        load(config)
    assert "needs 'image'" in str(info.value) and "tools.shell" in str(info.value)
    config.write_text("[tools.shell]\nnetwrk = true\n")
    with pytest.raises(ConfigError) as info:
        load(config)
    assert "unknown key 'netwrk'" in str(info.value) and "'network'" in str(info.value)


def test_shell_settings_merge_key_by_key_across_files(tmp_path: Path) -> None:
    user = tmp_path / "config" / "tui-agent" / "config.toml"
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text("[tools.shell]\nsandbox = \"none\"\ntimeout = 30\n")
    extra = tmp_path / "extra.toml"
    extra.write_text("[tools.shell]\nnetwork = true\n")
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config")}
    shell = load(extra, env=env, project=False).config.tools.shell
    assert (shell.sandbox, shell.timeout, shell.network) == ("none", 30, True)


def connect_probe(path: Path) -> str:
    return (f"python3 -c \"import socket; s = socket.socket(socket.AF_UNIX); "
            f"s.connect('{path}'); print('CONNECTED')\"")


async def test_bwrap_reaches_no_host_unix_socket(
        tmp_path: Path, place: tuple[Path, Path], outside: Path) -> None:
    """A path socket outside the sandbox's own ``/tmp`` and ``/run`` (where the host's
    services listen: the Docker engine, D-Bus, ssh and gpg agents) cannot be connected to,
    and the Docker engine's sockets are not there at all."""
    need_bwrap()
    project, home = place
    sockets = [outside / "service.sock", home / "agent.sock", outside / "engine.sock"]
    listeners = []
    for path in sockets:
        listener = socket.socket(socket.AF_UNIX)
        listener.bind(str(path))
        listener.listen()
        listeners.append(listener)
    docker = " ".join(["/var/run/docker.sock", "/run/docker.sock", str(sockets[2])])
    look = f"for s in {docker}; do [ -S $s ] && echo SOCKET $s; done; echo looked"
    try:
        for unix_sockets in (False, True):
            allowed: dict[str, Any] = {"unix_sockets": True} if unix_sockets else {}
            server = shell_server(project, home, **allowed)
            server.env["DOCKER_HOST"] = f"unix://{sockets[2]}"
            async with shell_hub(server, tmp_path) as hub:
                for path in sockets[:2]:
                    text, _ = await call(hub, "shell", command=connect_probe(path))
                    assert ("CONNECTED" in text) is unix_sockets, text
                    if not unix_sockets:
                        assert "Operation not permitted" in text, text
                text, _ = await call(hub, "shell", command=look)
                assert text == "looked", text
        assert sockets[2].is_socket()  # it is there, outside
    finally:
        for listener in listeners:
            listener.close()


async def test_bwrap_keeps_git_metadata_read_only(
        tmp_path: Path, place: tuple[Path, Path]) -> None:
    """A hook or ``core.fsmonitor`` written into ``.git`` would run, unsandboxed, at the
    user's next ``git status``: ``.git`` is read-only inside; the project is not."""
    need_bwrap()
    project, home = place
    subprocess.run(["git", "init", "-q", str(project)], check=True, timeout=30)
    hook = project / ".git" / "hooks" / "pre-commit"
    writes = ("git config core.fsmonitor 'touch /tmp/pwned'; echo config=$?; "
              f"echo 'touch pwned' > {hook}; echo hook=$?; echo ok > tracked.txt")
    async with shell_hub(shell_server(project, home), tmp_path) as hub:
        text, _ = await call(hub, "shell", command=writes)
    assert "config=255" in text and "hook=" in text and "hook=0" not in text, text
    assert "Read-only file system" in text, text
    assert "fsmonitor" not in (project / ".git" / "config").read_text()
    assert not hook.exists() and (project / "tracked.txt").read_text() == "ok\n"
    done = subprocess.run(["sh", "-c", writes], cwd=project, capture_output=True, text=True,
                          timeout=30)  # the same, outside: it does write
    assert "config=0" in done.stdout and "hook=0" in done.stdout, done
    assert hook.exists()


async def test_the_apps_own_places_are_hidden_wherever_they_are(
        tmp_path: Path, place: tuple[Path, Path], outside: Path) -> None:
    """A config file named by ``TUI_AGENT_CONFIG`` and config, data and state folders
    moved by XDG variables: the app resolves them and hands them to ``local``, whose
    shell hides them (the server's own environment does not name them). The hub waits for
    a ``local`` call as long as the longest command may run, and ``shell_output`` only
    reads."""
    need_bwrap()
    project, home = place
    config = outside / "dotfiles" / "tui.toml"
    config.parent.mkdir()
    config.write_text("# SECRET-CONFIG\n")
    state = outside / "state"
    (state / "tui-agent").mkdir(parents=True)
    (state / "tui-agent" / "trusted.json").write_text("SECRET-STATE\n")
    env = {**os.environ, "HOME": str(home), "TUI_AGENT_CONFIG": str(config),
           "XDG_STATE_HOME": str(state), "XDG_CONFIG_HOME": str(outside / "cfg"),
           "XDG_DATA_HOME": str(outside / "data")}
    env.pop(OFF_VARIABLE, None)  # the suite turns the built-in server off
    settings = load(env=env, cwd=project, project=False)
    local = settings.config.servers["local"]
    assert local.timeout == settings.config.tools.shell.max_timeout + 30
    assert "shell_output" in local.auto and "shell" not in local.auto
    server = local.model_copy(update={"env": {**tagged_env(HOME=str(home)), **local.env},
                                      "cwd": str(project), "startup_timeout": 60})
    async with shell_hub(server, tmp_path) as hub:
        text, _ = await call(hub, "shell", command=f"cat {config} {state}/tui-agent/*; "
                                                   f"ls {state}/tui-agent")
        assert "SECRET-CONFIG" not in text and "SECRET-STATE" not in text, text
        assert "trusted.json" not in text, text


async def test_the_shell_hides_each_place_the_file_tools_refuse(
        tmp_path: Path, place: tuple[Path, Path], outside: Path) -> None:
    """One list of the places that hold secrets serves the file tools and the shell: the
    app's state folder where it is by default (trust and history kept there before
    ``XDG_STATE_HOME`` moved it, as the server's environment does here) is refused by the
    file tools and hidden from a command alike, and so is ``$DOCKER_HOST``'s socket."""
    need_bwrap()
    project, home = place
    server = shell_server(project, home)
    engine = outside / "engine.sock"
    server.env["DOCKER_HOST"] = f"unix://{engine}"
    kept = home / ".local" / "state" / "tui-agent"
    assert Path(server.env["XDG_STATE_HOME"]) != kept.parent
    kept.mkdir(parents=True)
    (kept / "trusted.json").write_text("SECRET-STATE\n")
    refused = secret_places(server.env)  # what the file tools refuse
    assert kept in refused and engine in refused, refused
    async with shell_hub(server, tmp_path) as hub:
        text, _ = await call(hub, "shell", command=f"cat {kept}/trusted.json 2>/dev/null; "
                                                   f"ls -A {kept}; echo looked")
    assert text == "looked", text  # an empty folder in its place


@pytest.mark.parametrize("sandbox", ["bwrap", "none"])
async def test_a_call_the_hub_gives_up_on_ends_its_command(
        tmp_path: Path, place: tuple[Path, Path], sandbox: str) -> None:
    """The hub's timeout (or Esc) cancels the call: the command ends with it, and the
    server goes on answering."""
    if sandbox == "bwrap":
        need_bwrap()
    project, home = place
    server = shell_server(project, home, sandbox=sandbox).model_copy(update={"timeout": 2})
    async with shell_hub(server, tmp_path) as hub:
        started = time.monotonic()
        text, error = await call(hub, "shell", command="sleep 31341.5 & sleep 31341.5",
                                 timeout=300)
        assert error and time.monotonic() - started < 30, text
        assert not await gone("31341.5"), "the command outlived its cancelled call"
        text, error = await call(hub, "shell", command="echo still here")
        assert (text, error) == ("still here", False)


async def test_an_added_folder_is_writable_by_the_next_command(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``/add-dir`` grows the client's roots: the real server's shell asks for them again
    before its next command (without a file tool asking first)."""
    need_bwrap()
    from tui_agent.config.builtin_server import builtin_server
    from tui_agent.tools.client import ClientSide
    from tui_agent.tools.frontdesk import FrontDesk
    from tui_agent.tools.hub import Hub

    project, notes = tmp_path / "project", tmp_path / "notes"
    project.mkdir()
    notes.mkdir()
    monkeypatch.chdir(project)
    config = builtin_server().model_copy(update={"env": tagged_env(), "startup_timeout": 60})
    desk = FrontDesk(project=project)
    async with Hub({"local": config}, log_dir=tmp_path / "logs", default_timeout=60,
                   client_side=lambda n, c: desk.side(n, c, ClientSide())) as hub:
        await hub.wait_all()
        text, error = await call(hub, "shell", command="echo x > made.txt", cwd=str(notes))
        assert error and "outside the project" in text, text
        desk.shared_roots = [str(notes)]
        await hub.roots_changed()
        deadline = time.monotonic() + 30  # the notification and the call may cross
        while error and time.monotonic() < deadline:
            text, error = await call(hub, "shell", command="echo x > made.txt",
                                     cwd=str(notes))
            await asyncio.sleep(0.05)
        assert (text, error) == ("(no output)", False)
    assert (notes / "made.txt").read_text() == "x\n"


async def test_docker_sandbox_runs_as_the_user(
        tmp_path: Path, place: tuple[Path, Path]) -> None:
    """Not as the image's user (root, or here ``nobody``): files a command makes in the
    project are the user's, who can edit them and ``/rewind`` them."""
    import io
    import tarfile

    from tests.dockerkit import engine

    need(docker_running(), "a Docker engine")
    client = engine()
    assert client is not None
    image = "tui-agent-test-nobody:1"
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w"):
        pass
    client.api.import_image_from_data(buffer.getvalue(), repository=image.split(":")[0],
                                      tag="1", changes=["USER 65534:65534"])
    project, home = place
    volumes = [f"{p}:{p}:ro" for p in ("/usr", "/lib", "/lib64", "/bin") if Path(p).exists()]
    server = shell_server(project, home, sandbox="docker", image=image, volumes=volumes)
    async with shell_hub(server, tmp_path) as hub:
        text, error = await call(hub, "shell", command="id -u; id -g; echo boxed > made.txt")
    assert not error and text.split() == [str(os.getuid()), str(os.getgid())], text
    made = (project / "made.txt").stat()
    assert (made.st_uid, made.st_gid) == (os.getuid(), os.getgid())


def test_command_output_goes_through_the_one_sanitiser() -> None:
    """Escapes, controls and format characters (a bidi override that reorders what the
    reader sees) go as in every other output; a carriage return shows the last state."""
    from tui_agent.builtin.shell.output import sanitise

    assert sanitise("a\u202eb\u200bc\x1b[31md\x07\r\n50%\r100%\n") == "abcd\n100%\n"
