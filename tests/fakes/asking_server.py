"""An MCP server (the SDK's) whose tools report what the client side gave them: the roots
the client answers ``roots/list`` with, the answers to a form and a link it asks the person
for (elicitation), and the ``Authorization`` header a call came with.
The tests of the client seam run it over stdio, or streamable HTTP on a loopback port.

    python -m tests.fakes.asking_server [--transport stdio|http] [--port N]
"""

from __future__ import annotations

import argparse
import sys
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import (
    AssistantMessage,
    Context,
    Elicit,
    ElicitationResult,
    MCPServer,
    Message,
    Resolve,
    Sample,
    UserMessage,
)
from mcp.shared.exceptions import UrlElicitationRequiredError
from mcp_types import (
    Completion,
    CreateMessageResult,
    ElicitRequestURLParams,
    ResourceTemplateReference,
    SamplingMessage,
    TextContent,
    ToolAnnotations,
)
from pydantic import BaseModel, Field


class Booking(BaseModel):
    """The form of ``book``: every field has a default, so ``--elicit defaults`` answers."""

    guests: int = Field(default=2, ge=1, le=12, description="How many people")
    time: Literal["19:00", "20:00", "21:00"] = Field(default="20:00")
    terrace: bool = Field(default=False, title="Outside, on the terrace")
    name: str = Field(default="Ada", min_length=2, max_length=40)


INSTRUCTIONS = "Call roots before anything else.\x1b[2J Book tables with book, never by hand."
"""What this server tells clients about using it (with an escape sequence to be removed)."""


COURSES = {"starters": ["soup", "salad"], "mains": ["risotto", "sea bass"],
           "desserts": ["tiramisu"]}
"""What ``menu://{course}/{dish}`` suggests (``completion/complete``)."""


def haiku_request() -> Sample:
    return Sample([SamplingMessage(role="user", content=TextContent(
        type="text", text="Write a haiku about a table by the window."))],
        max_tokens=60, system_prompt="You are a poet.\x1b[31m Answer in three lines.")


def booking() -> Elicit[Booking]:
    return Elicit("Book a table: how many, and when?", Booking)


LISTED_PROMPTS = "asking: prompts/list"
"""Written to stderr (the server's log) at each ``prompts/list``, so a test can count them."""
GOT_PROMPT = "asking: prompts/get"
"""Written to stderr at each ``prompts/get``: once it is in the log, so is every listing
before it (one pipe, read in order)."""


class AskingServer(MCPServer):
    async def list_prompts(self) -> Any:
        print(LISTED_PROMPTS, file=sys.stderr, flush=True)
        return await super().list_prompts()

    async def get_prompt(self, *args: Any, **kwargs: Any) -> Any:
        print(GOT_PROMPT, file=sys.stderr, flush=True)
        return await super().get_prompt(*args, **kwargs)


def build() -> MCPServer:
    server = AskingServer("asking", instructions=INSTRUCTIONS)

    @server.tool(description="The roots the client gives when asked (roots/list).",
                 annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False))
    async def roots(ctx: Context) -> str:
        listed = await ctx.session.list_roots()
        return ", ".join(str(root.uri) for root in listed.roots) or "(none)"

    @server.tool(description="Asks the person for a table booking (a form with defaults) "
                             "and says what came back.")
    async def book(got: Annotated[ElicitationResult[Booking], Resolve(booking)]) -> str:
        # Asked through a resolver, so it works in either protocol: mid-call in 2025-11-25,
        # as an input_required result in 2026-07-28.
        return f"{got.action}: {got.data.model_dump_json() if got.action == 'accept' else ''}"

    @server.tool(description="Asks the person to open a payment page and says what came back.")
    async def pay(ctx: Context) -> str:
        got = await ctx.elicit_url("Pay the deposit on the restaurant's page",
                                   "https://pay.example.com/deposit?id=7", "deposit-7")
        return got.action

    @server.tool(description="Works in three steps, reporting progress and logging a "
                             "line of each level (debug, info, warning) on the way.")
    async def chatty(ctx: Context) -> str:
        levels: tuple[Literal["debug", "info", "warning"], ...] = ("debug", "info", "warning")
        for step, level in enumerate(levels, 1):
            await ctx.log(level, f"step {step} said {level}", logger_name="chatty")
            await ctx.report_progress(step, 3, f"step {step} of 3")
        return "talked"

    @server.tool(description="Asks the client's model for a haiku (sampling).")
    async def haiku(got: Annotated[CreateMessageResult, Resolve(haiku_request)]) -> str:
        text = getattr(got.content, "text", "")
        return f"{got.model} wrote: {text}"

    menu = ["risotto, sea bass, tiramisu"]

    @server.resource("menu://today", name="today's menu", mime_type="text/plain")
    def today() -> str:
        return menu[0]

    @server.tool(description="Change today's menu; a client that watches menu://today is "
                             "told (2026-07-28's subscriptions).")
    async def change_menu(text: str, ctx: Context) -> str:
        menu[0] = text
        await ctx.notify_resource_updated("menu://today")
        return "changed"

    @server.resource("menu://{course}/{dish}", name="a dish", mime_type="text/plain")
    def dish(course: str, dish: str) -> str:
        return f"{dish}, from the {course}"

    @server.completion()  # type: ignore[no-untyped-call,untyped-decorator]
    async def suggest(ref: Any, argument: Any, context: Any) -> Completion | None:
        if not isinstance(ref, ResourceTemplateReference):
            return None
        course = (context.arguments or {}).get("course") if context else None
        options = COURSES if argument.name == "course" else COURSES.get(course or "", [])
        return Completion(values=[o for o in options if o.startswith(argument.value)])

    @server.prompt(description="Plan a dinner: what the guest says, what the host asked, "
                               "and the request (three messages, their roles kept).")
    def plan_dinner(guests: str) -> list[Message]:
        return [UserMessage(f"I am planning a dinner for {guests}."),
                AssistantMessage("What is on the menu today?"),
                UserMessage("Suggest a menu from it.")]

    opened: list[str] = []

    @server.tool(description="Needs a link opened first (it answers -32042 until then).",
                 annotations=ToolAnnotations(destructive_hint=True, open_world_hint=True))
    def subscribe() -> str:
        if not opened:
            opened.append("deposit")  # the next try goes through, as after a real visit
            raise UrlElicitationRequiredError([ElicitRequestURLParams(
                message="Confirm the subscription on our site",
                url="https://shop.example.com/confirm?id=9", elicitation_id="sub-9")])
        return "subscribed"

    @server.tool(description="The Authorization header this call came with (HTTP only).")
    def authorization(ctx: Context) -> str:
        return (ctx.headers or {}).get("authorization", "(none)")

    return server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--transport", default="stdio", choices=("stdio", "http"))
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    server = build()
    if args.transport == "stdio":
        server.run()
    else:
        server.run("streamable-http", host="127.0.0.1", port=args.port)


if __name__ == "__main__":
    main()
