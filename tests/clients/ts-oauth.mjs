// The MCP TypeScript SDK's own client authorization (@modelcontextprotocol/client) against
// `connectorgen serve --http --auth-issuer`: the 401, discovery, dynamic registration,
// PKCE and the authorization code flow through oidc-provider's development login, driven
// headlessly; then tools/list and a free call; then a paid call with a read-only token,
// the step-up, and the paid call answered with serve's consent question.
//
//   node ts-oauth.mjs MCP_URL PROVIDER_URL      (or the variables MCP_URL, PROVIDER_URL)
//
// MCP_URL is serve's /mcp endpoint; PROVIDER_URL the reference provider, read through its
// GET /_counters. Prints one line per finding: `ok` (an expectation held), `FAIL` (one did
// not: exit 1) and `saw` (what the SDK requested and got, recorded without judging it).
// Run by tests/runtime/ts_oauth.rs (see tests/clients/README.md). Must never: listen on
// anything but 127.0.0.1, print a token or a code, or wait without a deadline.

import { randomBytes } from "node:crypto";
import { createServer } from "node:http";

import { Client, StreamableHTTPClientTransport, UnauthorizedError } from "@modelcontextprotocol/client";

const NAME = "ts-oauth";
const MCP_URL = process.argv[2] ?? process.env.MCP_URL;
const PROVIDER_URL = process.argv[3] ?? process.env.PROVIDER_URL;
if (!MCP_URL || !PROVIDER_URL) {
  console.error(`${NAME}: FAIL usage: node ts-oauth.mjs MCP_URL PROVIDER_URL`);
  process.exit(2);
}
/** The bound on each step that waits for a server or for the person's browser. */
const STEP_DEADLINE_MS = Number(process.env.STEP_DEADLINE_MS ?? 30_000);
const SERVE_META = "dev.connectorgen/serve";
/** The SDK's own choice of protocol revision, unpinned. */
const DEFAULT = "default";
const PAID = { name: "createVideo", arguments: { prompt: `a cat on a skateboard (${NAME} ${process.pid})`, aspectRatio: "16:9" } };

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
const short = (value, max = 400) => {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  return text.length > max ? `${text.slice(0, max)}…` : text;
};
const firstLine = (text) => String(text ?? "").split("\n")[0];
const describe = (error) => `${error?.name ?? "Error"}: ${firstLine(error?.message ?? error)}`;

// Whatever happens, the script ends: a hang is a FAIL, never a stuck test.
const watchdog = setTimeout(() => {
  console.log(`${NAME} FAIL [${scope}] the whole script passed its deadline`);
  process.exit(1);
}, Number(process.env.SCRIPT_DEADLINE_MS ?? 180_000));
watchdog.unref();

// ---- what the provider received -------------------------------------------------------

async function creates() {
  const response = await fetch(`${PROVIDER_URL}/_counters`, { signal: AbortSignal.timeout(STEP_DEADLINE_MS) });
  if (!response.ok) throw new Error(`GET /_counters answered ${response.status}`);
  return (await response.json()).requests?.createVideo ?? 0;
}

// ---- every HTTP exchange the SDK makes (MCP, discovery, registration, token) -------------

/** { at, method, url, status, challenge, rpc, form, error } in the order they were sent. */
const wire = [];

/** The payload of a JWT, to read its claims (never printed whole, never its signature). */
function claims(jwt) {
  try {
    return JSON.parse(Buffer.from(String(jwt).split(".")[1], "base64url").toString("utf8"));
  } catch {
    return undefined;
  }
}

/** The SDK's fetch: the real one, each exchange recorded without its secrets. */
async function recordingFetch(input, init = {}) {
  const request = input instanceof Request ? input : undefined;
  const url = String(request?.url ?? input);
  const entry = { at: wire.length, method: init.method ?? request?.method ?? "GET", url };
  if (typeof init.body === "string") {
    let message;
    try {
      message = JSON.parse(init.body);
    } catch {
      message = undefined;
    }
    const messages = [message].flat();
    if (messages.every((m) => m?.jsonrpc === "2.0")) {
      entry.rpc = messages.map((m) => m.method ?? "response").join(",");
      entry.tool = messages.find((m) => m.method === "tools/call")?.params?.name;
    } else {
      // Not MCP: the registration request (client metadata, no secret).
      entry.body = init.body;
    }
  } else if (init.body instanceof URLSearchParams) {
    // A token request: which grant, scope and resource (never the code or the verifier).
    const form = init.body;
    entry.form = {
      grant_type: form.get("grant_type"),
      scope: form.get("scope") ?? undefined,
      resource: form.get("resource") ?? undefined,
      code_verifier: form.has("code_verifier") ? "(sent)" : undefined,
      client_id: form.get("client_id") ?? undefined,
    };
  }
  entry.bearer = new Headers(init.headers ?? request?.headers).has("authorization");
  wire.push(entry);
  let response;
  try {
    response = await fetch(input, init);
  } catch (error) {
    entry.error = describe(error);
    throw error;
  }
  entry.status = response.status;
  entry.challenge = response.headers.get("www-authenticate") ?? undefined;
  if (!response.ok) entry.text = await response.clone().text().catch(() => undefined);
  else if (entry.form) {
    // The token answer: the granted scope and the access token's claims, to show what the
    // SDK now holds; the token itself is never kept.
    const body = await response.clone().json().catch(() => ({}));
    const c = claims(body.access_token);
    entry.granted = { scope: body.scope, token_type: body.token_type, refresh_token: body.refresh_token ? "(issued)" : undefined, aud: c?.aud, sub: c?.sub, token_scope: c?.scope };
  } else if (entry.method === "GET" && /\.well-known|\/reg/.test(url)) {
    entry.json = await response.clone().json().catch(() => undefined);
  } else if (entry.method === "POST" && entry.body !== undefined) {
    entry.json = await response.clone().json().catch(() => undefined);
  }
  return response;
}

const since = (mark) => wire.slice(mark);
const pathOf = (url) => new URL(url).pathname;
function sawWire(mark) {
  for (const e of since(mark)) {
    const what = e.rpc ? ` ${e.rpc}${e.tool ? ` ${e.tool}` : ""}` : e.form ? ` ${short(e.form)}` : "";
    const answer = e.error ?? `${e.status}${e.challenge ? ` WWW-Authenticate: ${e.challenge}` : ""}${e.granted ? ` granted ${short(e.granted)}` : ""}`;
    saw(`SDK ${e.method} ${e.url}${what}${e.bearer ? " (with a bearer token)" : ""} -> ${answer}`);
  }
}

// ---- the redirect URI: a listener on loopback, as a native app's would be -----------------

const callbacks = [];
let wake = () => undefined;
const listener = createServer((request, response) => {
  const url = new URL(request.url, "http://127.0.0.1");
  if (url.pathname !== "/callback") {
    response.writeHead(404).end();
    return;
  }
  callbacks.push(url.searchParams);
  response.writeHead(200, { "content-type": "text/plain" }).end("Signed in: you can close this window.\n");
  wake();
});
await new Promise((resolve, reject) => {
  listener.once("error", reject);
  listener.listen(0, "127.0.0.1", resolve);
});
const REDIRECT_URL = `http://127.0.0.1:${listener.address().port}/callback`;

/** Waits for the `n`th callback to reach the listener, at most STEP_DEADLINE_MS. */
function callback(n) {
  return new Promise((resolve, reject) => {
    const check = () => {
      if (callbacks.length >= n) {
        clearTimeout(timer);
        resolve(callbacks[n - 1]);
      }
    };
    const timer = setTimeout(() => reject(new Error(`no redirect reached ${REDIRECT_URL} within ${STEP_DEADLINE_MS} ms`)), STEP_DEADLINE_MS);
    wake = check;
    check();
  });
}

// ---- the SDK's OAuthClientProvider: the application's side, in memory --------------------

class MemoryProvider {
  /** Every authorization URL the SDK sent the person to. */
  authorizations = [];
  #client;
  #tokens;
  #verifier;
  #discovery;
  #state;

  get redirectUrl() {
    return REDIRECT_URL;
  }
  get clientMetadata() {
    // A public native client: no secret, a loopback redirect (RFC 8252). grant_types and
    // application_type are left to the SDK's defaults, as an application would.
    return { client_name: "connectorgen ts-oauth test", redirect_uris: [REDIRECT_URL], token_endpoint_auth_method: "none" };
  }
  state() {
    this.#state = randomBytes(16).toString("base64url");
    return this.#state;
  }
  get expectedState() {
    return this.#state;
  }
  clientInformation() {
    return this.#client;
  }
  saveClientInformation(information) {
    this.#client = information;
  }
  tokens() {
    return this.#tokens;
  }
  saveTokens(tokens) {
    this.#tokens = tokens;
  }
  redirectToAuthorization(url) {
    this.authorizations.push(new URL(url));
  }
  saveCodeVerifier(verifier) {
    this.#verifier = verifier;
  }
  codeVerifier() {
    return this.#verifier;
  }
  saveDiscoveryState(state) {
    this.#discovery = state;
  }
  discoveryState() {
    return this.#discovery;
  }
  invalidateCredentials(what) {
    saw(`the SDK invalidated the stored ${what}`);
    if (what === "all" || what === "client") this.#client = undefined;
    if (what === "all" || what === "tokens") this.#tokens = undefined;
    if (what === "all" || what === "verifier") this.#verifier = undefined;
    if (what === "all" || what === "discovery") this.#discovery = undefined;
  }
}

// ---- the person: a browser without a screen at oidc-provider's development login ---------

/** The person's cookies, kept across sign-ins as a browser keeps them. */
const jar = new Map();

/**
 * Follows `authorizationUrl` as a browser would: redirects, the login form (any name and
 * password), the consent form, until the authorization server sends the browser to the
 * redirect URI. Returns the pages it was shown (`login`, `consent`).
 */
async function signIn(authorizationUrl, person) {
  const shown = [];
  let url = authorizationUrl.href;
  let method = "GET";
  let body;
  for (let hop = 0; hop < 20; hop += 1) {
    const headers = { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join("; ") };
    if (body) headers["content-type"] = "application/x-www-form-urlencoded";
    const response = await fetch(url, { method, body, headers, redirect: "manual", signal: AbortSignal.timeout(STEP_DEADLINE_MS) });
    for (const cookie of response.headers.getSetCookie()) {
      const [pair] = cookie.split(";");
      const at = pair.indexOf("=");
      jar.set(pair.slice(0, at).trim(), pair.slice(at + 1).trim());
    }
    if (response.status >= 300 && response.status < 400) {
      await response.body?.cancel();
      url = new URL(response.headers.get("location"), url).href;
      method = "GET";
      body = undefined;
      if (url.startsWith(REDIRECT_URL)) {
        // The browser lands on the application's redirect URI.
        const landed = await fetch(url, { signal: AbortSignal.timeout(STEP_DEADLINE_MS) });
        await landed.text();
        return shown;
      }
      continue;
    }
    const page = await response.text();
    if (response.status !== 200) throw new Error(`${method} ${url} answered ${response.status}: ${short(page)}`);
    const action = /<form[^>]*action="([^"]+)"[^>]*method="post"/i.exec(page)?.[1];
    const prompt = /name="prompt" value="([^"]+)"/.exec(page)?.[1];
    if (!action || !prompt) throw new Error(`${url} is neither a redirect nor a form this person knows: ${short(page)}`);
    shown.push(prompt);
    const form = new URLSearchParams({ prompt });
    if (prompt === "login") {
      form.set("login", person);
      form.set("password", "any password");
    }
    url = new URL(action.replaceAll("&amp;", "&"), url).href;
    method = "POST";
    body = form.toString();
  }
  throw new Error("more than 20 redirects and forms before the redirect URI");
}

// ---- the steps -----------------------------------------------------------------------------

const CLIENT_INFO = { name: "connectorgen-ts-oauth", version: "1.0.0" };
// No elicitation capability: serve answers a paid call with its consent question as a
// tool error (consentRequired), and nothing is sent.
const connectTo = (provider, revision) => ({
  client: new Client(CLIENT_INFO, {
    capabilities: {},
    ...(revision === DEFAULT ? {} : { versionNegotiation: { mode: { pin: revision } } }),
  }),
  transport: new StreamableHTTPClientTransport(new URL(MCP_URL), { authProvider: provider, fetch: recordingFetch }),
});

/** Waits for `promise` at most STEP_DEADLINE_MS; the error says what was awaited. */
function bounded(what, promise) {
  let timer;
  const deadline = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${STEP_DEADLINE_MS} ms`)), STEP_DEADLINE_MS);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

/** The authorization URL's parameters that matter, as the SDK built them. */
function sawAuthorization(url) {
  const p = url.searchParams;
  saw(
    `the SDK sends the person to ${url.origin}${url.pathname} with response_type=${p.get("response_type")} ` +
      `scope="${p.get("scope")}" resource=${p.get("resource")} code_challenge_method=${p.get("code_challenge_method")} ` +
      `code_challenge ${p.get("code_challenge") ? "set" : "MISSING"} state ${p.get("state") ? "set" : "none"}` +
      `${p.getAll("prompt").length ? ` prompt=${p.getAll("prompt").join(",")}` : ""} redirect_uri=${p.get("redirect_uri")}`,
  );
}

/** The person signs in at the last authorization URL; the SDK redeems the code. */
async function personSignsIn(provider, transport, person) {
  const url = provider.authorizations.at(-1);
  const n = callbacks.length + 1;
  const shown = await signIn(url, person);
  const params = await callback(n);
  saw(`the person was shown: ${shown.join(", ") || "nothing (already signed in and consented)"}; the redirect carried ${[...params.keys()].join(", ")}`);
  expect(params.get("state") === provider.expectedState, "the redirect carries the state the SDK sent");
  expect(params.has("code") && !params.has("error"), "the authorization server answered with a code", params.get("error_description") ?? params.get("error") ?? "");
  const mark = wire.length;
  try {
    // The URLSearchParams form: the SDK checks `iss` (RFC 9207) before redeeming the code.
    await bounded("finishAuth", transport.finishAuth(params));
    expect(true, "finishAuth redeemed the code (PKCE verifier, RFC 9207 iss checked)");
  } catch (error) {
    expect(false, "finishAuth redeemed the code", describe(error));
  }
  sawWire(mark);
  return since(mark).findLast((e) => e.form?.grant_type === "authorization_code")?.granted;
}

const metadataUrl = `${new URL(MCP_URL).origin}/.well-known/oauth-protected-resource${new URL(MCP_URL).pathname}`;

/** The whole flow, from no token to the consent question, over one protocol revision. */
async function run(revision) {
  const provider = new MemoryProvider();
  // A new person's browser: each run signs in from scratch.
  jar.clear();
  const step = (name) => {
    scope = `${revision} ${name}`;
  };
  let session;
  try {
    await steps(provider, revision, step, (client) => (session = client));
  } catch (error) {
    expect(false, "the steps ran", `${describe(error)}\n${error?.stack ?? ""}`);
  } finally {
    await session?.close().catch(() => undefined);
  }
}

async function steps(provider, revision, step, connected) {
  // 1. No token: the 401, discovery, registration, the authorization request.
  step("1 connect without a token");
  let { client, transport } = connectTo(provider, revision);
  let mark = wire.length;
  let first;
  try {
    await bounded("connect", client.connect(transport));
    first = "connected";
  } catch (error) {
    first = error;
  }
  sawWire(mark);
  expect(first instanceof UnauthorizedError, "connect ends with UnauthorizedError: the person must sign in", first === "connected" ? "connected without a token" : describe(first));
  const challenged = since(mark).find((e) => e.status === 401);
  expect(
    challenged !== undefined && challenged.bearer === false && /^Bearer /.test(challenged.challenge ?? "") &&
      challenged.challenge.includes(`resource_metadata="${metadataUrl}"`) && challenged.challenge.includes('scope="vidgen:read"'),
    "serve's 401 names its metadata and the read scope",
    short(challenged ?? "no 401"),
  );
  const prm = since(mark).find((e) => e.url.includes("/.well-known/oauth-protected-resource") && e.status === 200);
  expect(prm?.url === metadataUrl && prm.json?.resource === MCP_URL, "the SDK read serve's protected-resource metadata at the URL the 401 named", short(prm ?? "not read"));
  const asMeta = since(mark).find((e) => /oauth-authorization-server|openid-configuration/.test(e.url) && e.status === 200);
  expect(asMeta !== undefined && prm?.json?.authorization_servers?.includes(asMeta.json?.issuer), "the SDK discovered the authorization server the metadata lists", short(asMeta ?? "not read"));
  const registered = since(mark).find((e) => e.method === "POST" && e.url === asMeta?.json?.registration_endpoint);
  expect(registered?.status === 201, "the SDK registered itself dynamically", short(registered ?? "no registration"));
  if (registered?.body) saw(`registration request: ${short(JSON.parse(registered.body))}`);
  if (registered?.json) {
    const { scope: registeredScope, requested_scope: requestedScope, client_id: clientId, token_endpoint_auth_method: method } = registered.json;
    saw(`registration answer: client_id ${clientId}, token_endpoint_auth_method ${method}, scope ${registeredScope ?? "(none)"}, requested_scope ${requestedScope ?? "(none)"}`);
  }
  const authorization = provider.authorizations.at(-1);
  if (authorization) sawAuthorization(authorization);
  expect(
    authorization?.searchParams.get("code_challenge_method") === "S256" && authorization.searchParams.get("resource") === MCP_URL &&
      authorization.searchParams.get("scope")?.split(" ").includes("vidgen:read") &&
      !authorization.searchParams.get("scope")?.split(" ").some((s) => s === "vidgen:change" || s === "vidgen:spend"),
    "the authorization request asks for the read scope only, for serve's resource, with PKCE S256",
    authorization ? authorization.href.replace(/code_challenge=[^&]+/, "code_challenge=…") : "none",
  );

  // 2. The person signs in and consents; the SDK redeems the code.
  step("2 the person signs in");
  const granted = await personSignsIn(provider, transport, "alice");
  expect(granted?.aud === MCP_URL && granted?.sub === "alice", "the access token is alice's, for serve's resource", short(granted ?? "no token"));
  expect(
    granted?.token_scope?.split(" ").includes("vidgen:read") && !/vidgen:(change|spend)/.test(granted?.token_scope ?? ""),
    "the access token has the read scope only",
    granted?.token_scope,
  );

  // 3. Connected with the token: tools/list and the free call.
  step("3 read with the token");
  await client.close().catch(() => undefined);
  ({ client, transport } = connectTo(provider, revision));
  mark = wire.length;
  try {
    await bounded("connect", client.connect(transport));
    saw(`connected: era ${client.getProtocolEra?.()}, revision ${client.getNegotiatedProtocolVersion?.()}`);
    connected(client);
    const tools = await bounded("tools/list", client.listTools());
    const names = tools.tools.map((t) => t.name);
    expect(names.includes("listVideos") && names.includes("createVideo"), "tools/list shows the free and the paid tool", short(names));
    const free = await bounded("tools/call listVideos", client.callTool({ name: "listVideos", arguments: {} }));
    expect(!free.isError, "the free call listVideos goes through", short(free.content));
  } catch (error) {
    expect(false, "connect, tools/list and the free call with the read token", describe(error));
  }
  sawWire(mark);
  expect(since(mark).every((e) => e.status !== 401 && e.status !== 403), "nothing was refused with the read token");

  // 4. The paid call with the read token: 403 insufficient_scope, and the SDK steps up.
  step("4 a paid call with the read token");
  const before = await creates();
  mark = wire.length;
  const authorizationsBefore = provider.authorizations.length;
  let paid;
  try {
    paid = await bounded("tools/call createVideo", client.callTool(PAID));
  } catch (error) {
    paid = error;
  }
  sawWire(mark);
  const refused = since(mark).find((e) => e.rpc === "tools/call" && e.status === 403);
  expect(
    refused !== undefined && /error="insufficient_scope"/.test(refused.challenge ?? "") && refused.challenge.includes('scope="vidgen:change vidgen:spend"') &&
      refused.challenge.includes(`resource_metadata="${metadataUrl}"`),
    "serve answers 403 insufficient_scope naming vidgen:change vidgen:spend",
    short(refused ?? since(mark).map((e) => `${e.rpc ?? e.url} ${e.status}`)),
  );
  expect(provider.authorizations.length === authorizationsBefore + 1, "the SDK started a new authorization on the 403 (its step-up)", `${provider.authorizations.length - authorizationsBefore} new`);
  expect(paid instanceof UnauthorizedError, "the paid call ends with UnauthorizedError until the person consents", paid instanceof Error ? describe(paid) : `answered ${short(paid)}`);
  const stepUp = provider.authorizations.at(-1);
  if (provider.authorizations.length > authorizationsBefore) {
    sawAuthorization(stepUp);
    const asked = stepUp.searchParams.get("scope")?.split(" ") ?? [];
    expect(["vidgen:read", "vidgen:change", "vidgen:spend"].every((s) => asked.includes(s)), "the step-up asks for the read scope and the two it was told", asked.join(" "));
  }
  expect((await creates()) === before, "nothing reached the provider");

  // 5. The person consents to the wider scope; the same client calls again.
  step("5 the step-up");
  if (provider.authorizations.length > authorizationsBefore) {
    const wider = await personSignsIn(provider, transport, "alice");
    const has = wider?.token_scope?.split(" ") ?? [];
    expect(wider?.sub === "alice" && ["vidgen:read", "vidgen:change", "vidgen:spend"].every((s) => has.includes(s)), "the new token is alice's and can read, change and spend", short(wider ?? "no token"));
  }
  mark = wire.length;
  let again;
  try {
    again = await bounded("tools/call createVideo", client.callTool(PAID));
  } catch (error) {
    again = error;
  }
  sawWire(mark);
  if (again instanceof Error) expect(false, "the paid call is answered after the step-up", describe(again));
  else {
    const meta = again._meta?.[SERVE_META] ?? {};
    // The confirmation value opens the call: shown as present, never printed.
    const shown = { ...meta, ...(meta.confirmation ? { confirmation: "(present)" } : {}) };
    saw(`the paid call answered isError=${again.isError} _meta["${SERVE_META}"]=${short(shown)} text: ${firstLine(again.content?.find((c) => c.type === "text")?.text)}`);
    expect(again.isError === true && meta.consentRequired === true, "serve asks for consent as ever: a tool error with consentRequired");
  }
  expect((await creates()) === before, "nothing was charged: no createVideo reached the provider", `createVideo +${(await creates()) - before}`);
}

// The SDK's default connect (the 2025 initialize handshake), then the 2026-07-28 revision
// pinned (server/discover, no session): the authorization is the transport's in both.
const only = process.env.REVISIONS?.split(",");
for (const revision of [DEFAULT, "2026-07-28"]) {
  if (!only || only.includes(revision)) await run(revision);
}
listener.close();

scope = "result";
if (failures) {
  line("FAIL", `${failures} expectation(s) failed`);
  process.exit(1);
}
line("ok", "every expectation held");
process.exit(0);
