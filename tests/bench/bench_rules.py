"""Permission rules: how long :meth:`Policy.judge` takes with 1,000 mixed rules, against
a baseline measured in the same run (the same calls judged with no rules: the servers'
lists, the store and the mode only).

The rules: allow, ask and deny over 200 servers, a third with a wildcard in the server
part (``mcp__*__delete_*``), half with argument conditions (paths with ``**`` and ``~``,
plain values, quoted ones). The calls: 400 tools, each called with arguments some rules'
conditions test. Two figures with rules: "warm" (the rules naming each tool are
remembered after its first call, as in a session) and "cold" (nothing remembered: the
name globs of the rules naming the call's server, and of those with a wildcard server,
are tried). Target: at most 10 µs a decision (warm).

    python -m tests.bench.bench_rules [--rules 1000] [--rounds 20]
"""

from __future__ import annotations

import argparse
import random
import time
from typing import Any

from tui_agent.config.rule_text import RuleEntry
from tui_agent.core.permissions import ApprovalStore, Policy
from tui_agent.core.permissions.rules import RuleSet

KINDS = ("allow", "ask", "deny")


def make_rules(count: int, rng: random.Random) -> list[RuleEntry]:
    rules = []
    for i in range(count):
        server = "*" if i % 3 == 0 else f"s{i % 200}"
        tool = rng.choice(["read_*", "write_file", "delete_*", "t?", "*", f"tool{i % 50}"])
        name = f"mcp__{server}__{tool}"
        condition = rng.choice([
            "", "", "(path=/etc/**)", "(path=~/work/**)", "(n=3)",
            '(query="a, b")', "(path=/srv/*/data, mode=w*)"])
        rules.append(RuleEntry(KINDS[i % 3], name + condition))
    return rules


def make_calls(rng: random.Random) -> list[tuple[str, str, dict[str, Any]]]:
    calls = []
    for i in range(400):
        server, tool = f"s{i % 250}", rng.choice(["read_file", "write_file", "delete_x",
                                                   "t1", f"tool{i % 60}", "other"])
        arguments: dict[str, Any] = rng.choice([
            {"path": "/etc/passwd"}, {"path": "/home/u/work/a.py"}, {"n": 3},
            {"query": "a, b"}, {"path": "/srv/x/data", "mode": "wb"}, {}])
        calls.append((server, tool, arguments))
    return calls


def per_decision(policy: Policy, calls: list[tuple[str, str, dict[str, Any]]],
                 rounds: int, *, cold: bool = False) -> float:
    """The fastest of ``rounds`` runs, in µs a decision (the least disturbed by the
    other processes of a busy machine)."""
    times = []
    remembered = policy.permission._named  # the rules naming each tool seen
    for _ in range(rounds):
        start = time.perf_counter()
        for server, tool, arguments in calls:
            if cold:
                remembered.clear()
            policy.judge(server, tool, "fp", arguments=arguments)
        times.append((time.perf_counter() - start) / len(calls) * 1e6)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    rng = random.Random(49)
    calls = make_calls(rng)
    rules = make_rules(args.rules, rng)
    baseline = Policy(store=ApprovalStore(None))
    ruled = Policy(store=ApprovalStore(None), permission=RuleSet(rules))
    verdicts = dict.fromkeys(("deny", "ask", "auto"), 0)
    for server, tool, arguments in calls:
        verdicts[ruled.judge(server, tool, "fp", arguments=arguments).verdict] += 1
    base = hot = float("inf")
    for _ in range(args.rounds):  # interleaved, so load hits both alike
        base = min(base, per_decision(baseline, calls, 1))
        hot = min(hot, per_decision(ruled, calls, 1))
    cold = per_decision(ruled, calls, args.rounds, cold=True)
    lookup = float("inf")
    for _ in range(args.rounds):
        start = time.perf_counter()
        for server, tool, arguments in calls:
            for kind in KINDS:
                ruled.permission.first(kind, server, tool, arguments)
        lookup = min(lookup, (time.perf_counter() - start) / len(calls) * 1e6)
    print(f"{len(calls)} calls, {args.rules} rules; verdicts with rules: {verdicts}")
    print(f"baseline (no rules):      {base:7.2f} µs/decision")
    print(f"{args.rules} rules, warm:        {hot:7.2f} µs/decision "
          f"({hot - base:+.2f} µs: a rule's verdict skips the servers' lists)")
    print(f"the rules' lookup alone:  {lookup:7.2f} µs/decision (deny, ask and allow "
          "all tried, as when none matches; target <= 10)")
    print(f"{args.rules} rules, cold:        {cold:7.2f} µs/decision "
          "(no tool seen before: its server's rules and the wildcard ones tried)")


if __name__ == "__main__":
    main()
