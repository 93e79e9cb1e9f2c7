// An editor written with the official ACP TypeScript SDK (npm @agentclientprotocol/sdk,
// its stable v1 entrypoint, pinned in tests/acp_ts/package.json), for
// tests/test_acp_ts_client.py (here, beside its package, so that Node finds it). SDK 2.x
// removed ClientSideConnection: a client is `client().onRequest(...).onNotification(...)`
// connected to `ndJsonStream` over the agent's stdio, and calls the agent with
// `ctx.request(methods.agent..., params)`, as the SDK's README and migration guide show.
//
// argv[2]: a JSON file {"command": [...], "cwd": "...", "env": {...}, "steps": [...]}.
// It spawns the command (`tui-agent acp ...`), runs the steps in order and prints one JSON
// line per event on stdout: {"event": "response", "step": i, "op": ..., "result": ...},
// {"event": "error", "step": i, "op": ..., "code": ..., "message": ..., "data": ...},
// {"event": "update", "sessionId": ..., "update": ...} and {"event": "permission", ...}.
//
// A step is {"op": METHOD-OR-NAME, "params": {...}}; in params, "$session" is the id of
// the last session/new, "$first" that of the first, and "$read:PATH#FIELD" the field of the
// JSON object in file PATH, read when the step runs (e.g. what a hook was given). Ops: the
// agent's methods by their ACP names, "cancel" (the request "method" sent with the SDK's
// cancellation signal, aborted after "afterMs": the SDK sends $/cancel_request), "wait"
// ("ms") and "ls" (the names of the files in folder "dir" ending ".jsonl", as its result).
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { Readable, Writable } from "node:stream";

import * as acp from "@agentclientprotocol/sdk";

const plan = JSON.parse(readFileSync(process.argv[2], "utf8"));
const out = (record) => process.stdout.write(JSON.stringify(record) + "\n");
const [exe, ...args] = plan.command;
const child = spawn(exe, args, {
  cwd: plan.cwd,
  env: plan.env,
  stdio: ["pipe", "pipe", "inherit"],
});
const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
const answers = [...(plan.answers ?? [])];

const app = acp
  .client({ name: "tui-agent-ts-test" })
  .onNotification(acp.methods.client.session.update, ({ params }) => {
    out({ event: "update", sessionId: params.sessionId, update: params.update });
  })
  .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
    out({ event: "permission", toolCall: params.toolCall, options: params.options });
    const optionId = answers.shift();
    return optionId
      ? { outcome: { outcome: "selected", optionId } }
      : { outcome: { outcome: "cancelled" } };
  });

const ids = { session: null, first: null };
const fill = (value) => {
  if (value === "$session") return ids.session;
  if (value === "$first") return ids.first;
  if (typeof value === "string" && value.startsWith("$read:")) {
    const [path, field] = value.slice("$read:".length).split("#");
    return JSON.parse(readFileSync(path, "utf8"))[field];
  }
  if (Array.isArray(value)) return value.map(fill);
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fill(v)]));
  }
  return value;
};

async function step(ctx, i, { op, method: cancelled, params = {}, afterMs = 1500, ms = 0,
                              dir = "" }) {
  if (op === "ls") {
    const names = existsSync(dir) ? readdirSync(dir).filter((n) => n.endsWith(".jsonl")) : [];
    out({ event: "response", step: i, op, result: names });
    return;
  }
  if (op === "wait") {
    await new Promise((resolve) => setTimeout(resolve, ms));
    out({ event: "response", step: i, op, result: null });
    return;
  }
  const filled = fill(params);
  const method = op === "cancel" ? cancelled : op;
  const options = {};
  if (op === "cancel") {
    const controller = new AbortController();
    options.cancellationSignal = controller.signal;
    setTimeout(() => controller.abort(), afterMs);
  }
  try {
    const result = await ctx.request(method, filled, options);
    if (method === acp.methods.agent.session.new) {
      ids.session = result.sessionId;
      ids.first ??= result.sessionId;
    }
    out({ event: "response", step: i, op, result: result ?? null });
  } catch (error) {
    out({ event: "error", step: i, op, code: error.code ?? null,
          message: String(error.message ?? error), data: error.data ?? null });
  }
}

try {
  await app.connectWith(stream, async (ctx) => {
    for (const [i, s] of plan.steps.entries()) {
      await step(ctx, i, s);
    }
    // Let the updates sent after the last response arrive before the connection closes.
    await new Promise((resolve) => setTimeout(resolve, plan.settleMs ?? 500));
  });
} finally {
  child.stdin.end();
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const timer = setTimeout(() => child.kill("SIGTERM"), 30000);
  await exited;
  clearTimeout(timer);
  out({ event: "exit", code: child.exitCode });
}
