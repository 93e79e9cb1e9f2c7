"""The official MCP conformance suite's client under test: tui-agent's own client stack
(the hub, one server's lifecycle and call path, the client seam, OAuth) against the
server of one scenario.

The suite runs ``python -m tests.conformance.client URL`` with
``MCP_CONFORMANCE_SCENARIO`` set, and ``MCP_CONFORMANCE_CONTEXT`` (JSON) for the
scenarios that hand out credentials or name the calls to make. The client connects,
lists the tools and makes the scenario's calls (:func:`planned_calls`), then loads the
skill the scenario has the model ask for (:func:`load_skills`: the hub lists skills at
connect, reads nothing until then); a server that asks for input gets the form's defaults
(``tui-agent run --elicit defaults``). A browser login
is finished by a stand-in browser that follows the authorization server's redirect back
to our loopback listener. Credentials the config loader would refuse are refused here
too. Exit 0 once the
server answered; 1 (with why, on stderr) if it did not.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import threading
import urllib.request
from pathlib import Path
from typing import Any

from tui_agent.config.models import ServerConfig
from tui_agent.config.oauth import OAuthSettings
from tui_agent.headless.elicit import TerminalAsker
from tui_agent.tools.auth.providers import provider
from tui_agent.tools.auth.storage import FileVault, TokenStore
from tui_agent.tools.client import ClientSide
from tui_agent.tools.frontdesk import FrontDesk
from tui_agent.tools.hub import Hub
from tui_agent.tools.skills import SkillError

CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"
"""The Client ID Metadata Document the suite's authorization servers accept (used only
where one advertises ``client_id_metadata_document_supported``)."""


ECHO = "json_schema_echo"
"""The tool ``json-schema-2020-12-preservation`` wants the focal tool's schema echoed to."""


def oauth_table(context: dict[str, Any]) -> dict[str, Any]:
    """The ``[servers.NAME.oauth]`` table a user would write for the scenario's
    credentials (``context``, with the scenario's ``name``)."""
    if "valid_jwt" in context:  # workload identity: the JWT the platform issued
        return {"grant": "jwt_bearer", "client_id": context["client_id"],
                "assertion": context["valid_jwt"]}
    table = {k: v for k, v in context.items() if k in OAuthSettings.model_fields}
    if "idp_id_token" in context:
        table["grant"] = "id_jag"
    elif context.get("name", "").startswith("auth/client-credentials"):
        table["grant"] = "client_credentials"
    return {**table, "client_metadata_url": CLIENT_METADATA_URL}


def plan_of(context: dict[str, Any]) -> OAuthSettings:
    """The login the scenario's credentials call for, as the config loader takes it."""
    return OAuthSettings.model_validate(oauth_table(context))


def planned_calls(tools: dict[str, dict[str, Any]], context: dict[str, Any]
                  ) -> list[tuple[str, dict[str, Any]]]:
    """The calls a scenario wants, by the tools' own names (``tools``: name -> input
    schema as the caller holds it): the context's ``toolCalls`` where it gives them, the
    other tools' schemas echoed where the scenario offers :data:`ECHO`, else every tool
    once with arguments made from its schema."""
    if given := context.get("toolCalls"):
        return [(call["name"], call.get("arguments") or {}) for call in given]
    if ECHO in tools:
        return [(ECHO, {"schema": schema}) for name, schema in tools.items() if name != ECHO]
    return [(name, arguments(schema)) for name, schema in tools.items()]


SKILL_LOADS = {f"sep-2640-client-verify-{what}": ("pdf-processing", "references/FORMS.md")
               for what in ("digest", "size", "frontmatter")}
"""Scenario -> the skill a host is asked to load there and the file it then asks for (the
"load" the suite scripts: ``SKILL.md`` first, then the file). ``sep-2640-client-no-prefetch``
loads nothing: it checks that connecting and listing read no skill file."""


def skill_steps(scenario: str) -> list[dict[str, str]]:
    """The ``skill`` tool's calls a model makes in ``scenario``: load the skill, then ask
    for its file (:data:`SKILL_LOADS`); none elsewhere."""
    if scenario not in SKILL_LOADS:
        return []
    name, path = SKILL_LOADS[scenario]
    return [{"name": name}, {"name": name, "file": path}]


async def load_skills(hub: Hub, scenario: str) -> None:
    """Load the scenario's skill as a host does when the model asks for it: read its
    ``SKILL.md`` (verified), then the file it names; a refused skill is reported and its
    file is asked for all the same (the hub must not read it)."""
    for step in skill_steps(scenario):
        for skill in hub.server_skills():
            if skill.name != step["name"]:
                continue
            try:
                text = await hub.read_skill_file(skill.server, skill.uri, step.get("file"))
                print(f"skill {skill.name} {step.get('file') or 'SKILL.md'}: {len(text)} chars")
            except SkillError as exc:
                print(f"skill {skill.name}: {exc}", file=sys.stderr)


def browse(url: str) -> None:
    """A browser that approves at once: GET the authorization URL and follow its redirect
    to our listener, in a thread of its own (the listener answers on the event loop)."""
    def go() -> None:
        try:
            with urllib.request.urlopen(url, timeout=15) as answer:  # noqa: S310
                answer.read()
        except Exception as exc:  # the client reports the login's failure itself
            print(f"browser: {exc}", file=sys.stderr)

    threading.Thread(target=go, name="browser", daemon=True).start()


def arguments(schema: dict[str, Any]) -> dict[str, Any]:
    """Plausible values for a tool's required parameters."""
    sample = {"integer": 1, "number": 1, "boolean": True, "string": "test", "array": [],
              "object": {}}
    props = schema.get("properties") or {}
    return {name: sample.get(props.get(name, {}).get("type"), "test")
            for name in schema.get("required") or []}


async def run(url: str, scenario: str, context: dict[str, Any], state: Path) -> int:
    store = TokenStore(FileVault(state / "tokens.json"))
    try:
        plan = plan_of({"name": scenario, **context})
    except ValueError as exc:  # what the config loader would refuse
        print(f"[servers.conformance.oauth] refused: {exc}", file=sys.stderr)
        return 1
    auth = provider(url, plan, store, open_url=browse, login_timeout=20)
    config = ServerConfig(url=url, transport="http", startup_timeout=25, max_attempts=1)
    desk = FrontDesk(ask=TerminalAsker("defaults", sys.stderr))  # run --elicit defaults
    async with Hub({"conformance": config}, log_dir=state / "logs", default_timeout=20,
                   client_side=lambda name, cfg: desk.side(name, cfg, ClientSide(auth=auth))
                   ) as hub:
        await hub.wait_all()
        status = hub.statuses()[0]
        if status.state != "connected":
            print(f"not connected: {status.state}: {status.last_error}", file=sys.stderr)
            return 1
        specs = {spec.tool: spec for spec in hub.specs()}
        calls = planned_calls({tool: spec.parameters for tool, spec in specs.items()},
                              context)
        for tool, args in calls:
            outcome = await hub.call(specs[tool], args)
            print(f"{tool}: {'error: ' if outcome.is_error else ''}{outcome.text[:200]}")
        await load_skills(hub, scenario)
    return 0


def main() -> None:
    url = sys.argv[-1]
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    with tempfile.TemporaryDirectory(prefix="tui-agent-conformance-") as state:
        sys.exit(asyncio.run(run(url, scenario, context, Path(state))))


if __name__ == "__main__":
    main()
