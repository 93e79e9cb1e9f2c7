"""MCP servers inside Docker containers and Docker's MCP gateway, on a real engine.

The server in the containers is our hostile fake (tests/fakes/mcp_server.py), run
by the host's Python through read-only bind mounts (tests/dockerkit.py). The
gateway is the real docker CLI running our stand-in ``docker-mcp`` plugin. After
every test no container labelled by this process may be left (and the autouse
process check sees the servers' processes, which live in the host's /proc).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests import dockerkit
from tests.conftest import ROOT, fake_server, need, tagged_env
from tests.fakes.docker_mcp_plugin import install
from tests.test_hub import call, eventually, hub_of
from tests.zygote import TUI_AGENT, module
from tui_agent.config.models import ServerConfig
from tui_agent.tools.transports.docker_engine import LABEL, LABEL_OWNER, LABEL_SERVER, owner_alive

# One worker runs this file when the suite runs in parallel: a reaper removes every
# orphaned container on the engine, which another test here may have made on purpose.
pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.xdist_group("docker")]


@pytest.fixture(scope="module")
def client() -> Any:
    found = dockerkit.engine()
    need(found is not None, "a Docker engine")
    dockerkit.ensure_image(found)
    return found


@pytest.fixture(autouse=True)
def no_leftover_containers(request: pytest.FixtureRequest) -> Iterator[None]:
    yield
    if "client" not in request.fixturenames:
        return
    engine = request.getfixturevalue("client")
    left = dockerkit.ours(engine)
    for container in left:
        container.remove(force=True)
    assert not left, f"the test left containers behind: {[c.name for c in left]}"


def only(client: Any) -> Any:
    found = dockerkit.ours(client)
    assert len(found) == 1, [c.name for c in found]
    return found[0]


# -- a server in a container ------------------------------------------------------


async def test_a_server_in_a_container_created_from_an_image(client: Any,
                                                             tmp_path: Path) -> None:
    async with hub_of({"box": dockerkit.boxed()}, tmp_path) as hub:
        status = hub.statuses()[0]
        assert (status.state, status.transport, status.tools) == ("connected", "docker", 16)
        assert await call(hub, "box__echo", text="hello from a box") == ("hello from a box",
                                                                          False)
        assert await call(hub, "box__add", a=2, b=3) == ("5", False)
        container = only(client)
        config = container.attrs["HostConfig"]
        assert container.labels[LABEL] == "1" and container.labels[LABEL_SERVER] == "box"
        assert owner_alive(container.labels[LABEL_OWNER])
        assert config["ReadonlyRootfs"] is True
        assert config["CapDrop"] == ["ALL"]
        assert config["SecurityOpt"] == ["no-new-privileges"]
        assert config["NetworkMode"] == "none"
        assert config["Memory"] == 512 * 2 ** 20
        assert config["NanoCpus"] == 10 ** 9
        assert config["PidsLimit"] == 256
        assert container.attrs["Config"]["User"] == "65534:65534"
        # The server really runs inside: its process has the container's user.
        pid = int((await call(hub, "box__pid"))[0])
        top = container.top(ps_args="-o pid,user,args")
        assert any("tests.fakes.mcp_server" in " ".join(p) for p in top["Processes"]), top
        assert pid > 0
    assert dockerkit.ours(client) == []  # removed when the hub closed


async def test_a_server_in_an_existing_container(client: Any, tmp_path: Path) -> None:
    mine = client.containers.run(dockerkit.IMAGE, ["sleep", "infinity"], detach=True,
                                 volumes=dockerkit.mounts(), network_mode="none",
                                 labels={"tui-agent-test": "existing"})
    try:
        # 60 s as dockerkit.boxed gives: the server's imports under a busy suite's load
        # took past the default 10 s.
        config = ServerConfig(container=mine.name, workdir=str(ROOT), env=tagged_env(),
                              command=[sys.executable, "-m", "tests.fakes.mcp_server"],
                              startup_timeout=60)
        async with hub_of({"theirs": config}, tmp_path) as hub:
            assert hub.statuses()[0].state == "connected"
            assert await call(hub, "theirs__echo", text="in yours") == ("in yours", False)
        mine.reload()
        assert mine.status == "running"  # not ours to remove
        assert dockerkit.ours(client) == []
    finally:
        mine.remove(force=True)


async def test_a_container_killed_mid_call_is_an_error_then_a_fresh_one_works(
        client: Any, tmp_path: Path) -> None:
    async with hub_of({"box": dockerkit.boxed(backoff=0.2)}, tmp_path) as hub:
        first = only(client)
        pending = asyncio.create_task(call(hub, "box__late", seconds=30))
        await asyncio.sleep(0.5)
        first.kill()
        text, is_error = await asyncio.wait_for(pending, 20)
        assert is_error and "lost the connection during the call" in text
        await eventually(lambda: hub.connections["box"].restarts >= 1, timeout=20)
        await eventually(lambda: hub.statuses()[0].state == "connected", timeout=20)
        assert "the container stopped (exit code 137)" in (hub.statuses()[0].last_error or "")
        assert await call(hub, "box__echo", text="again") == ("again", False)
        second = only(client)  # the killed one was removed
        assert second.id != first.id


async def test_a_server_that_stops_answering_is_restarted(client: Any,
                                                          tmp_path: Path) -> None:
    config = dockerkit.boxed(heartbeat_interval=0.2, stale_timeout=2.0, timeout=1.0,
                             backoff=0.1)
    async with hub_of({"z": config}, tmp_path) as hub:
        # On a loaded machine the first start can miss the short timeouts; a retry lists it.
        await eventually(lambda: any(s.name == "z__freeze" for s in hub.specs()), timeout=30)
        text, is_error = await call(hub, "z__freeze", seconds=30)
        assert is_error
        await eventually(lambda: hub.connections["z"].restarts >= 1, timeout=15)
        await eventually(lambda: hub.statuses()[0].state == "connected", timeout=15)
        assert "no answer for" in (hub.statuses()[0].last_error or "")
        assert await call(hub, "z__echo", text="fresh") == ("fresh", False)
        assert len(dockerkit.ours(client)) == 1


async def test_per_call_exec_runs_each_call_in_a_fresh_process(client: Any,
                                                               tmp_path: Path) -> None:
    servers = {"each": dockerkit.boxed(per_call_exec=True), "one": dockerkit.boxed()}
    async with hub_of(servers, tmp_path) as hub:
        each = {(await call(hub, "each__pid"))[0] for _ in range(3)}
        one = {(await call(hub, "one__pid"))[0] for _ in range(3)}
        assert len(each) == 3 and len(one) == 1
        assert await call(hub, "each__add", a=1, b=1) == ("2", False)
        text, is_error = await call(hub, "each__crash")  # kills only this call's process
        assert is_error and "the exec running crash ended before it answered" in text, text
        assert await call(hub, "each__echo", text="unharmed") == ("unharmed", False)
        assert hub.connections["each"].state == "connected"
        assert hub.connections["each"].restarts == 0


async def test_stderr_goes_to_the_servers_log(client: Any, tmp_path: Path) -> None:
    async with hub_of({"box": dockerkit.boxed()}, tmp_path) as hub:
        assert await call(hub, "box__shout", size=300) == ("shouted", False)
        await eventually(lambda: any("x" * 50 in line for line in
                                     hub.statuses()[0].stderr), timeout=5)
        log = hub.statuses()[0].log_file
        assert log is not None and "x" * 99 in log.read_text()


# -- clear failures, one server at a time -----------------------------------------


async def test_failures_are_clear_and_other_servers_carry_on(client: Any,
                                                            tmp_path: Path) -> None:
    servers = {
        "nohost": dockerkit.boxed(docker_host=f"unix://{tmp_path}/no-engine.sock",
                                  startup_timeout=5),
        "noimage": dockerkit.boxed(image="tui-agent-test/absent:1"),
        "nopull": dockerkit.boxed(image="tui-agent-test/absent:2", pull="missing"),
        "exits": dockerkit.boxed(keep_alive=["sh", "-c", "echo going away >&2; exit 3"]),
        # ...and one that lives just long enough for the server's exec to be started in it
        "exits_later": dockerkit.boxed(keep_alive=["sh", "-c", "sleep 0.3; echo later; exit 4"]),
        "refused": dockerkit.boxed(command=["/no/such/server"]),
        "nocommand": dockerkit.boxed(command=None),
        "nocontainer": ServerConfig(container="tui-agent-test-absent", command=["x"]),
        "plain": fake_server(),
    }
    async with hub_of(servers, tmp_path) as hub:
        states = {s.name: (s.state, s.last_error or "") for s in hub.statuses()}
        assert states["plain"] == ("connected", "")
        assert await call(hub, "plain__echo", text="still here") == ("still here", False)
        expected = {
            "nohost": f"no Docker engine at unix://{tmp_path}/no-engine.sock (the socket "
                      "does not exist): start Docker (dockerd), or set docker_host",
            "noimage": "image 'tui-agent-test/absent:1' is not on this engine "
                       "(pull = \"never\")",
            "nopull": "image 'tui-agent-test/absent:2' is not on this engine and could not "
                      "be pulled: ",
            "exits": "the container exited at start (exit code 3): going away",
            "exits_later": "the container exited at start (exit code 4): later",
            "refused": "docker exec refused to run '/no/such/server' (exit code 126",
            "nocontainer": "container 'tui-agent-test-absent' does not exist",
            "nocommand": f"image '{dockerkit.IMAGE}' has no entrypoint or command: set "
                         "'command'",
        }
        for name, message in expected.items():
            state, error = states[name]
            assert state == "failed", (name, error)
            assert message in error, (name, error)
        assert "OCI runtime" in states["refused"][1]


async def test_a_stopped_container_is_named_as_not_running(client: Any,
                                                           tmp_path: Path) -> None:
    stopped = client.containers.create(dockerkit.IMAGE, ["true"],
                                       labels={"tui-agent-test": "stopped"})
    try:
        config = ServerConfig(container=stopped.name, command=["python3"])
        async with hub_of({"s": config}, tmp_path) as hub:
            status = hub.statuses()[0]
            assert status.state == "failed"
            assert f"container '{stopped.name}' is not running (created)" in \
                (status.last_error or "")
    finally:
        stopped.remove(force=True)


def test_permission_denied_on_the_socket_says_what_to_do(client: Any,
                                                         tmp_path: Path) -> None:
    """A user outside the docker group: the socket refuses the connection."""
    setpriv = shutil.which("setpriv")
    if os.geteuid() != 0 or setpriv is None:
        pytest.skip("needs root and setpriv to take away the right to open any socket")
    sock_path = tmp_path / "locked.sock"
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(sock_path))
    listener.listen()
    os.chown(sock_path, 12345, 12345)
    sock_path.chmod(0o600)
    config = tmp_path / "c.toml"
    config.write_text(f'[servers.locked]\nimage = "{dockerkit.IMAGE}"\ncommand = ["x"]\n'
                      f'docker_host = "unix://{sock_path}"\n')
    drop = "-dac_override,-dac_read_search"
    result = subprocess.run(
        [setpriv, f"--bounding-set={drop}", f"--inh-caps={drop}", sys.executable, "-m",
         "tui_agent", "servers", "--config", str(config)],
        capture_output=True, text=True, timeout=60, cwd=ROOT)
    listener.close()
    assert result.returncode == 1, result.stderr
    assert (f"permission denied on the Docker socket {sock_path}: add your user to the "
            "'docker' group") in result.stdout, result.stdout


# -- crash: the next start removes what was left ----------------------------------


def test_a_crashed_apps_containers_are_removed_at_the_next_start(client: Any,
                                                                 tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    box = dockerkit.boxed("--slow-start", "60", startup_timeout=90)  # keeps `servers` waiting
    config.write_text(toml_table("servers.box", box, ("image", "command", "workdir", "volumes",
                                                      "user", "pull", "env",
                                                      "startup_timeout")))
    first = subprocess.Popen([sys.executable, "-m", "tui_agent", "servers", "--config",
                              str(config)], cwd=ROOT, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while not dockerkit.ours(client, first.pid):
            assert time.monotonic() < deadline, "no container appeared"
            time.sleep(0.2)
        time.sleep(1.0)  # the server is starting in it
    finally:
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(30)
    left = dockerkit.ours(client, first.pid)
    assert len(left) == 1  # SIGKILL removes nothing: the container outlives its owner
    config.write_text(config.read_text().replace('"60"', '"0"'))
    second = subprocess.run([*TUI_AGENT, "servers", "--config",
                             str(config)], cwd=ROOT, capture_output=True, text=True,
                            timeout=120)
    assert "box  connected  docker  16 tools" in second.stdout, second.stdout
    assert dockerkit.ours(client, first.pid) == []
    assert dockerkit.ours(client) == []


def toml_table(name: str, server: ServerConfig, keys: tuple[str, ...]) -> str:
    """``[name]`` with ``keys`` of ``server`` (JSON strings and lists are TOML too)."""
    lines = [f"[{name}]"]
    for key in keys:
        value = getattr(server, key)
        if isinstance(value, dict):
            pairs = ", ".join(f"{k} = {json.dumps(v)}" for k, v in value.items())
            lines.append(f"{key} = {{ {pairs} }}")
        else:
            lines.append(f"{key} = {json.dumps(value)}")
    return "\n".join(lines) + "\n"


def test_two_reapers_at_once_both_finish_and_remove_every_orphan(client: Any) -> None:
    """Two tui-agents starting together reap the same orphans (a crash left them): both
    finish (neither trips over the other's removals) and no orphan is left. (Who removed
    which is not asked: any tui-agent on this engine, such as a second copy of the suite,
    reaps the same orphans.)"""
    from concurrent.futures import ThreadPoolExecutor

    from tui_agent.tools.transports.docker_engine import reap_orphans

    dead = f"{socket.gethostname()}:{2 ** 22 + 7}:1"  # beyond any pid_max: never alive
    made = [client.containers.create(dockerkit.IMAGE, ["true"],
                                     labels={LABEL: "1", LABEL_OWNER: dead})
            for _ in range(6)]
    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(lambda _: reap_orphans(client), range(2)))
    left = [c.id for c in made if c.id in {e["Id"] for e in client.api.containers(all=True)}]
    assert left == []
    assert all(isinstance(names, list) for names in results)


# -- the gateway -------------------------------------------------------------------


@pytest.fixture
def gateway(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Our docker-mcp plugin where the docker CLI looks; the file each start is logged in."""
    need(shutil.which("docker") is not None, "the docker CLI")
    monkeypatch.setenv("DOCKER_CONFIG", str(install(tmp_path / "docker-config")))
    log = tmp_path / "gateway-starts.log"
    log.touch()
    return log


def gateway_config(log: Path, **config: Any) -> ServerConfig:
    env = tagged_env(TUI_AGENT_FAKE_GATEWAY_LOG=str(log))
    # A call to the idle gateway waits for its start at most startup_timeout: 10 s ran out
    # beside a busy suite (a bound, not a speed test).
    config.setdefault("startup_timeout", 60)
    return ServerConfig(transport="docker-gateway", env=env, **config)


async def test_the_gateway_starts_lazily_and_stops_when_idle(client: Any, gateway: Path,
                                                             tmp_path: Path) -> None:
    config = gateway_config(gateway, args=["--servers", "fetch"], idle_timeout=1.0)
    async with hub_of({"gw": config}, tmp_path, wait=False) as hub:
        await asyncio.sleep(1.0)
        conn = hub.connections["gw"]
        assert hub.statuses()[0].state == "idle" and gateway.read_text() == ""  # not yet
        notes = [note async for note in hub.prepare()]  # the first turn wants tools
        assert hub.statuses()[0].state == "connected", notes
        assert gateway.read_text().splitlines() == ["--transport stdio --servers fetch"]
        assert hub.statuses()[0].tools == 16
        assert await call(hub, "gw__echo", text="through the gateway") == (
            "through the gateway", False)
        await eventually(lambda: conn.state == "idle", timeout=10)  # 1 s without calls
        assert len(hub.specs()) == 18  # its catalog stays listed (16 tools, 2 resource tools)
        [note async for note in hub.prepare()]
        assert conn.state == "idle"  # a turn alone does not wake it
        assert await call(hub, "gw__add", a=20, b=22) == ("42", False)  # a call does
        assert len(gateway.read_text().splitlines()) == 2
        assert conn.restarts == 0


async def test_a_busy_gateway_is_not_stopped_mid_call(client: Any, gateway: Path,
                                                      tmp_path: Path) -> None:
    config = gateway_config(gateway, idle_timeout=1.0)
    async with hub_of({"gw": config}, tmp_path) as hub:
        assert await call(hub, "gw__late", seconds=2.5) == ("late answer", False)
        assert len(gateway.read_text().splitlines()) == 1


async def test_gateway_missing_plugin_or_engine_is_said_plainly(
        gateway: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_CONFIG", str(tmp_path / "no-plugins"))
    async with hub_of({"gw": gateway_config(gateway), "plain": fake_server()},
                      tmp_path) as hub:
        states = {s.name: s for s in hub.statuses()}
        assert states["plain"].state == "connected"
        assert states["gw"].state == "failed"
        assert "Docker's MCP gateway is not available (the CLI has no 'mcp' command)" in \
            (states["gw"].last_error or "")
    monkeypatch.setenv("DOCKER_CONFIG", str(gateway.parent / "docker-config"))
    config = gateway_config(gateway, docker_host=f"unix://{tmp_path}/none.sock")
    async with hub_of({"gw": config}, tmp_path) as hub:
        status = hub.statuses()[0]
        assert status.state == "failed"
        assert "Docker's MCP gateway needs a running Docker engine" in (status.last_error
                                                                          or "")
        assert gateway.read_text() == ""


def test_owner_labels_tell_a_live_owner_from_a_dead_one() -> None:
    host = socket.gethostname()
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait(30)
    assert owner_alive(f"{host}:{os.getpid()}:?")
    from tui_agent.tools.transports.docker_engine import owner_label
    assert owner_alive(owner_label())
    assert not owner_alive(owner_label().rsplit(":", 1)[0] + ":1")  # pid reused since
    assert not owner_alive(f"{host}:{child.pid}:1")
    assert owner_alive(f"some-other-host:{child.pid}:1")  # not ours to judge


def test_the_benchmark_runs_and_prints_its_figure(client: Any) -> None:
    out = subprocess.run(module("tests.bench.bench_docker", "--calls", "10"),
                         capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert "call ratio docker/stdio" in out.stdout and "left behind: 0" in out.stdout
