// The official TypeScript tasks client (@modelcontextprotocol/ext-tasks on
// @modelcontextprotocol/client) against `connectorgen serve --http` and the reference
// provider: a paid job started as a task with the person's yes, followed, then cancelled
// through each cancel API the client has; the cancel's consent is asked through the task.
//
// Env: MCP_URL (serve's /mcp endpoint), PROVIDER_URL (the reference provider, for
// GET /_counters). Prints one line per finding; exits 1 when an expectation fails.
// Run by scripts/real-task-clients.sh (see tests/clients/README.md).

import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import {
  createApplicationInputHandler,
  createTaskSessionFromClient,
} from "@modelcontextprotocol/ext-tasks/client";

const NAME = "ts-tasks";
const MCP_URL = must("MCP_URL");
const PROVIDER_URL = must("PROVIDER_URL");
const STEP_DEADLINE_MS = Number(process.env.STEP_DEADLINE_MS ?? 45_000);
const PROTOCOL = "2026-07-28";
const CLIENT_INFO = { name: "connectorgen-real-task-clients", version: "1.0.0" };
const CAPABILITIES = { elicitation: { form: {} } };

function must(name) {
  const value = process.env[name];
  if (!value) {
    console.error(`${NAME}: FAIL the variable ${name} is not set`);
    process.exit(2);
  }
  return value;
}

let failures = 0;
let scope = "setup";
function line(kind, text) {
  console.log(`${NAME} ${kind.padEnd(4)} [${scope}] ${text}`);
}
const saw = (text) => line("saw", text);
function expect(ok, text, detail = "") {
  if (ok) line("ok", text);
  else {
    failures += 1;
    line("FAIL", `${text}${detail ? ` (${detail})` : ""}`);
  }
  return ok;
}
const short = (value, max = 300) => {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  return text.length > max ? `${text.slice(0, max)}…` : text;
};
const firstLine = (text) => String(text ?? "").split("\n")[0];

// ---- what the provider received -------------------------------------------------------

async function counters() {
  const response = await fetch(`${PROVIDER_URL}/_counters`, { signal: AbortSignal.timeout(5_000) });
  if (!response.ok) throw new Error(`GET /_counters answered ${response.status}`);
  const body = await response.json();
  const of = (op) => body.requests?.[op] ?? 0;
  return { creates: of("createVideo"), polls: of("getVideo"), deletes: of("deleteVideo"), jobs: body.jobs_created };
}

// ---- events, each waited on with a deadline ---------------------------------------------

const waiters = new Set();
function notify() {
  for (const waiter of [...waiters]) waiter();
}
/** Resolves when `ready()` holds (checked at each event and every 100 ms for counters), or
 * with false after `ms`. */
function until(ready, ms = STEP_DEADLINE_MS) {
  return new Promise((resolve) => {
    let done = false;
    const finish = (value) => {
      if (done) return;
      done = true;
      waiters.delete(check);
      clearInterval(timer);
      clearTimeout(limit);
      resolve(value);
    };
    const check = async () => {
      try {
        if (await ready()) finish(true);
      } catch {
        // a counter read that failed: try again at the next event
      }
    };
    waiters.add(check);
    const timer = setInterval(check, 100);
    const limit = setTimeout(() => finish(false), ms);
    void check();
  });
}

// ---- the wire: requests the tasks session sends raw (the V2 task shapes) go through the
// SDK transport itself, so its SEP-2243 headers (Mcp-Method, Mcp-Name) are the client's own.

/** Every task request and its answer, in order. */
const wire = [];
/** Headers of every POST the transport made, by JSON-RPC method. */
const posted = [];

function recordingFetch(input, init = {}) {
  try {
    const body = typeof init.body === "string" ? JSON.parse(init.body) : undefined;
    if (body && !Array.isArray(body) && typeof body.method === "string") {
      const headers = new Headers(init.headers);
      posted.push({ method: body.method, mcpName: headers.get("mcp-name"), mcpMethod: headers.get("mcp-method") });
    }
  } catch {
    // not JSON: not ours to record
  }
  return fetch(input, init);
}

class RawChannel {
  constructor(transport) {
    this.transport = transport;
    this.pending = new Map();
    this.next = 1;
  }

  attach() {
    const previous = this.transport.onmessage;
    this.transport.onmessage = (message, extra) => {
      if (message && "id" in message && this.pending.has(message.id) && ("result" in message || "error" in message)) {
        const settle = this.pending.get(message.id);
        this.pending.delete(message.id);
        settle(message);
        return;
      }
      previous?.(message, extra);
    };
  }

  rawDispatch = async (request, options = {}) => {
    const id = `raw-${this.next++}`;
    const message = { jsonrpc: "2.0", id, ...request };
    const timeoutMs = options.context?.requestTimeoutMs ?? 30_000;
    const answer = new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`${request.method}: no answer within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, (m) => {
        clearTimeout(timer);
        resolve(m);
      });
      options.signal?.addEventListener(
        "abort",
        () => {
          clearTimeout(timer);
          this.pending.delete(id);
          reject(options.signal.reason ?? new Error("aborted"));
        },
        { once: true },
      );
    });
    await this.transport.send(message, options.context?.headers ? { headers: options.context.headers } : undefined);
    const response = await answer;
    const entry = { method: request.method, taskId: request.params?.taskId, params: request.params, response };
    wire.push(entry);
    if (request.method.startsWith("tasks/")) {
      const r = response.result ?? {};
      const summary = response.error
        ? `error ${response.error.code} ${firstLine(response.error.message)}`
        : request.method === "tasks/get"
          ? `status ${r.status}${r.inputRequests ? ` inputRequests ${Object.keys(r.inputRequests).join(",")}` : ""}`
          : request.method === "tasks/update"
            ? `${short(r, 80)} (it carried inputResponses ${short(request.params?.inputResponses, 160)})`
            : short(r, 120);
      saw(`wire ${request.method} ${request.params?.taskId ?? ""} -> ${summary}`);
    }
    notify();
    return response.error ? { kind: "error", error: response.error } : { kind: "result", result: response.result };
  };
}

// ---- the person -------------------------------------------------------------------------

/** Every question put to the person: { message, context, answer }. */
const asked = [];
/** How the person answers the cancel's question in the current run: "yes" or "no". */
let cancelAnswer = "yes";

const person = createApplicationInputHandler({
  elicitation: async (request, context) => {
    const message = String(request.params?.message ?? "");
    const isCancel = message.includes("deleteVideo");
    const yes = isCancel ? cancelAnswer === "yes" : true;
    const answer = yes ? { action: "accept", content: { confirm: true } } : { action: "decline" };
    asked.push({ message, context, answer, at: Date.now() });
    saw(
      `the person is asked (${context.scope}, ${context.delivery}${context.inputId ? `, key ${context.inputId}` : ""}): ` +
        `"${firstLine(message)}" -> ${answer.action}`,
    );
    notify();
    return answer;
  },
  sampling: async () => {
    throw new Error("no sampling here");
  },
  roots: async () => ({ roots: [] }),
});

// ---- one run: create, follow, cancel, resubmit --------------------------------------------

const PROMPTS = new Map();
function prompt(run) {
  // One job per run: identical arguments would be the same task.
  if (!PROMPTS.has(run)) PROMPTS.set(run, `a cat on a skateboard (${NAME} run ${run}, ${process.pid})`);
  return { prompt: PROMPTS.get(run) };
}

async function create(session, run, before) {
  const askedBefore = asked.length;
  const execution = await session.callTool("createVideo", prompt(run));
  const after = await counters();
  saw(`callTool answered kind=${execution.kind}${execution.handle ? ` taskId=${execution.handle.taskId}` : ""}`);
  expect(execution.kind === "task", "the paid async call is a task", `kind ${execution.kind}`);
  const questions = asked.slice(askedBefore);
  expect(
    questions.length === 1 && questions[0].message.includes("createVideo") && questions[0].context.delivery === "request-retry",
    "the person was asked once, by elicitation in the call (input_required), before the create",
    `asked ${questions.length}: ${short(questions.map((q) => firstLine(q.message)))}`,
  );
  expect(after.creates - before.creates === 1, "exactly one create reached the provider", `creates +${after.creates - before.creates}`);
  return execution;
}

async function follow(execution, events, before) {
  const taskId = execution.handle.taskId;
  const gotWorking = await until(() =>
    wire.some((w) => w.method === "tasks/get" && w.taskId === taskId && w.response.result?.status === "working"),
  );
  expect(gotWorking, "the client follows the task: its own tasks/get answers working");
  const working = wire.findLast((w) => w.method === "tasks/get" && w.taskId === taskId)?.response.result;
  if (working) saw(`tasks/get: status ${working.status}, statusMessage "${working.statusMessage ?? ""}", pollIntervalMs ${working.pollIntervalMs}`);
  await until(() => events.some((e) => e.type === "task" && e.task.status === "working"), 2_000);
  saw(`settle() events so far: ${short(events.map((e) => (e.type === "task" ? e.task.status : `outcome:${e.outcome.status}`)))}`);
  const now = await counters();
  expect(now.polls > before.polls && now.creates === before.creates + 1, "serve polled getVideo for it, and never sent the create again", `polls +${now.polls - before.polls}, creates +${now.creates - before.creates}`);
}

/** Waits for `n` more tasks/get answers for `taskId`, or the deadline; true if they came. */
function morePolls(taskId, n, ms) {
  const start = wire.filter((w) => w.method === "tasks/get" && w.taskId === taskId).length;
  return until(() => wire.filter((w) => w.method === "tasks/get" && w.taskId === taskId).length >= start + n, ms);
}

async function run(session, id, api, answer) {
  scope = `run ${id}: ${api}, the person answers ${answer}`;
  cancelAnswer = answer;
  const before = await counters();
  const execution = await create(session, id, before);
  if (execution.kind !== "task") return;
  const taskId = execution.handle.taskId;
  const pollMs = execution.handle && wire.findLast((w) => w.method === "tools/call")?.response.result?.pollIntervalMs;
  saw(`CreateTaskResult: ${short(wire.findLast((w) => w.method === "tools/call")?.response.result, 400)}`);

  const events = [];
  let outcome;
  let outcomeAt;
  const settled = execution
    .settle({ onEvent: (event) => void (events.push(event), notify()), close: false })
    .then((s) => {
      outcome = s.outcome;
      outcomeAt = Date.now();
      saw(`settle() resolved: outcome ${outcome.status}${outcome.error ? ` (${firstLine(outcome.error.message)})` : ""}`);
      notify();
      return s;
    });

  await follow(execution, events, before);

  // 3. The cancel, as this API sends it.
  const askedBefore = asked.length;
  const deletesBefore = (await counters()).deletes;
  const cancelAt = Date.now();
  if (api === "execution.cancel()") await execution.cancel();
  else if (api === "session.cancelTask(id)") await session.cancelTask(taskId);
  else await session.task(taskId).cancel();
  const ack = wire.findLast((w) => w.method === "tasks/cancel" && w.taskId === taskId);
  saw(`tasks/cancel acknowledged: ${short(ack?.response.error ?? ack?.response.result ?? "(none sent)")}`);
  expect((await counters()).deletes === deletesBefore, "the acknowledgement sent nothing to the provider");

  if (api === "session.task(id).cancel()") {
    // The running settle() is still following: its next tasks/get shows the question.
    const gotAsked = await until(() => asked.length > askedBefore);
    const cancelQuestion = asked[askedBefore];
    expect(
      gotAsked && cancelQuestion.message.includes("deleteVideo") && cancelQuestion.context.delivery === "task-update",
      "the person is asked the cancel's question, through the task (input_required, then tasks/update)",
      gotAsked ? firstLine(cancelQuestion.message) : "never asked",
    );
    expect(
      outcome === undefined || outcomeAt > (cancelQuestion?.at ?? 0),
      "the client did not show cancelled before the person was asked",
      outcome ? `outcome ${outcome.status} first` : "",
    );
    const updated = await until(() => wire.some((w) => w.method === "tasks/update" && w.taskId === taskId));
    const update = wire.find((w) => w.method === "tasks/update" && w.taskId === taskId);
    expect(
      updated && Object.keys(update.params?.inputResponses ?? {}).includes(cancelQuestion?.context.inputId),
      "the answer went back with tasks/update under the question's key",
    );
    if (answer === "yes") {
      const deleted = await until(async () => (await counters()).deletes > deletesBefore);
      expect(deleted, "after the yes the delete reached the provider");
      const ended = await until(() => outcome !== undefined);
      expect(ended && outcome.status === "cancelled", "settle() ends cancelled", outcome ? outcome.status : "not settled");
      const snapshot = await session.task(taskId).snapshot();
      saw(`tasks/get after the yes: status ${snapshot.status}`);
      expect(snapshot.status === "cancelled", "the task reads cancelled");
      expect((await counters()).deletes - deletesBefore === 1, "exactly one delete", `deletes +${(await counters()).deletes - deletesBefore}`);
    } else {
      // After the no, the follower goes on: wait for two more of its polls.
      await morePolls(taskId, 2, 3 * (pollMs ?? 10_000) + 5_000);
      const last = wire.findLast((w) => w.method === "tasks/get" && w.taskId === taskId)?.response.result;
      saw(`tasks/get after the no: status ${last?.status}`);
      expect(last?.status === "working", "after the no the task goes on working");
      expect((await counters()).deletes === deletesBefore, "after the no nothing was deleted");
      expect(outcome === undefined, "settle() is still following", outcome?.status);
      await execution.detach();
      await settled.catch(() => undefined);
    }
  } else {
    // execution.cancel() and session.cancelTask(id) on a live execution: the acknowledgement
    // ends the local execution (docs/serve.md: it stops following before the person is asked).
    const ended = await until(() => outcome !== undefined, 5_000);
    saw(`after the acknowledgement the client shows: ${ended ? `outcome ${outcome.status}` : "nothing yet"}`);
    expect(ended && outcome.status === "cancelled", "the client shows cancelled at the acknowledgement (documented)");
    expect(asked.length === askedBefore, "the person had not been asked when the client showed cancelled");
    const server = await session.task(taskId).snapshot();
    saw(`the task on the server meanwhile: status ${server.status}${server.raw.inputRequests ? `, inputRequests ${Object.keys(server.raw.inputRequests).join(",")}` : ""}`);
    expect(server.status === "input_required", "serve holds the cancel's question (input_required)");
    // Nobody follows any more: a poll interval and more passes without the person.
    const askedLater = await until(() => asked.length > askedBefore, (pollMs ?? 9_000) + 3_000);
    expect(!askedLater, "the person is never asked (the client stopped following)");
    expect((await counters()).deletes === deletesBefore, "nothing was deleted: the job goes on");
  }
  await settled.catch(() => undefined);

  // 4. The identical call again: the same task, nothing sent.
  const again = await counters();
  const askedBeforeResubmit = asked.length;
  const lastGet = wire.findLast((w) => w.method === "tasks/get" && w.taskId === taskId)?.response.result?.status;
  let resubmitted;
  try {
    resubmitted = await session.callTool("createVideo", prompt(id));
  } catch (error) {
    expect(false, "the identical call is answered", `${error.name}: ${firstLine(error.message)}`);
  }
  if (resubmitted) {
    saw(
      `identical call answered kind=${resubmitted.kind}${resubmitted.handle ? ` taskId=${resubmitted.handle.taskId}` : ""}, ` +
        `its status ${wire.findLast((w) => w.method === "tools/call")?.response.result?.status} (the last tasks/get said ${lastGet})`,
    );
    expect(resubmitted.kind === "task" && resubmitted.handle.taskId === taskId, "the identical call answers the same task");
    expect((await counters()).creates === again.creates, "no second create reached the provider");
    const newQuestions = asked.slice(askedBeforeResubmit).filter((q) => q.message.includes("createVideo"));
    saw(`the person was asked ${newQuestions.length} time(s) about the create again`);
    // The resubmitted execution follows the task as it now stands; see what it does in one
    // poll interval and more, then let go of it without cancelling.
    if (resubmitted.kind === "task") {
      let resubmittedOutcome;
      void resubmitted.result().then((o) => (resubmittedOutcome = o, notify()));
      await until(() => resubmittedOutcome !== undefined || asked.length > askedBeforeResubmit, (pollMs ?? 9_000) + 3_000);
      const later = asked.slice(askedBeforeResubmit);
      saw(
        `following the resubmitted task: ${resubmittedOutcome ? `outcome ${resubmittedOutcome.status}` : "no outcome yet"}; ` +
          `the person asked ${later.length} time(s)${later.length ? `: "${firstLine(later[0].message)}" -> ${later[0].answer.action}` : ""}`,
      );
      if (later.some((q) => q.message.includes("deleteVideo") && q.answer.action === "accept")) {
        const floor = deletesBefore + (answer === "yes" && api === "session.task(id).cancel()" ? 1 : 0);
        const deleted = await until(async () => (await counters()).deletes > floor);
        saw(`after that yes the delete ${deleted ? "reached" : "did not reach"} the provider`);
      }
      await resubmitted.detach();
      await resubmitted.result().catch(() => undefined);
    }
  }
  const end = await counters();
  saw(`provider counters for this run: creates +${end.creates - before.creates}, deletes +${end.deletes - before.deletes}, polls +${end.polls - before.polls}`);
  expect(end.creates - before.creates === 1, "one create in the whole run");
  expect(end.deletes - before.deletes <= asked.filter((q) => q.message.includes("deleteVideo") && q.answer.action === "accept" && q.at >= cancelAt).length,
    "no delete without a yes to the cancel's question");
}

// ---- main --------------------------------------------------------------------------------

const watchdog = setTimeout(() => {
  console.log(`${NAME} FAIL [${scope}] the whole script passed its deadline`);
  process.exit(1);
}, Number(process.env.SCRIPT_DEADLINE_MS ?? 300_000));
watchdog.unref();

const client = new Client(CLIENT_INFO, {
  capabilities: CAPABILITIES,
  versionNegotiation: { mode: { pin: PROTOCOL } },
});
const transport = new StreamableHTTPClientTransport(new URL(MCP_URL), { fetch: recordingFetch });
await client.connect(transport, { timeout: 15_000 });
saw(`connected: era ${client.getProtocolEra()}, revision ${client.getNegotiatedProtocolVersion()}, server extensions ${short(client.getServerCapabilities()?.extensions ?? {})}`);
const channel = new RawChannel(transport);
channel.attach();
const errors = [];
const session = createTaskSessionFromClient(client, {
  endpointId: "connectorgen-real-task-clients",
  rawDispatch: channel.rawDispatch,
  v2RequestFraming: { protocolVersion: PROTOCOL, clientInfo: CLIENT_INFO, clientCapabilities: CAPABILITIES },
  onInputRequest: person,
  onError: (error) => {
    errors.push(error);
    saw(`ext-tasks background error: ${error.name}: ${firstLine(error.message)}`);
  },
});
expect(session.capabilities.execution === true, "ext-tasks negotiated the tasks extension (V2)", short(session.capabilities));

const only = process.env.RUNS ? process.env.RUNS.split(",") : undefined;
const runs = [
  ["A", "execution.cancel()", "yes"],
  ["B", "session.cancelTask(id)", "yes"],
  ["C", "session.task(id).cancel()", "yes"],
  ["D", "session.task(id).cancel()", "no"],
];
try {
  for (const [id, api, answer] of runs) {
    if (only && !only.includes(id)) continue;
    try {
      await run(session, id, api, answer);
    } catch (error) {
      expect(false, "the run went through", `${error.name}: ${firstLine(error.message)}`);
    }
  }
  scope = "wire";
  const tasksPosts = posted.filter((p) => p.method.startsWith("tasks/"));
  saw(`the transport posted ${tasksPosts.length} tasks/* requests; Mcp-Name on ${tasksPosts.filter((p) => p.mcpName).length} of them`);
  expect(tasksPosts.every((p) => p.mcpName), "every tasks/* request carried Mcp-Name (SEP-2243)");
} finally {
  await session.close().catch(() => undefined);
  await client.close().catch(() => undefined);
}
scope = "result";
if (failures) {
  line("FAIL", `${failures} expectation(s) failed`);
  process.exit(1);
}
line("ok", "every expectation held");
process.exit(0);
