// A person's browser on serve's connect page (`auth.perPerson: { connect: apiKey }`):
// headless Chromium from the distribution's packages, driven by playwright-core (pinned by
// package-lock.json beside this file), never a browser Playwright downloads.
//
//   node connect.mjs          (commands on stdin, one JSON object a line)
//
// Prints `{"ready":true,"browser":VERSION}` once Chromium runs, then one JSON line per
// command, in order:
//
//   {"do":"open","url":URL,"screenshot":PNG?,"mobile":PNG?}
//       opens URL in the person's browser (JavaScript off: the page must work without it),
//       a screenshot of the whole page at a desktop width and at a phone's;
//   {"do":"submit","key":KEY,"tamper":T?,"screenshot":PNG?}
//       types KEY into the key field of the page shown and submits its form, as the person
//       does; T first alters the form as a forger would: "remove-form" takes the
//       anti-forgery field out of the DOM, {"formFrom":URL} puts in the value of another
//       person's page (URL opened in another browser, that person's).
//
// Each answer says what the browser saw: the status, title and text of the page shown,
// the URL after it, every request the page made (method, URL, status, Location), the
// Content-Security-Policy, whether the HTML holds a <script>, the text of its alert (what
// went wrong with the last form, shown apart), the console's errors and warnings (a CSP
// violation is one), the cookie, and whether any key typed so far appears
// in the page's HTML or text, a URL, a Location or any response's body. A command that
// fails answers {"do":…,"error":MESSAGE}. Closing stdin closes the browser and ends the
// script. Run by tests/runtime/browser.rs (tests/browser/README.md).
//
// Must never: print a key, load anything but the URLs it is given, or wait without a
// deadline.

import { createInterface } from "node:readline";

import { chromium } from "playwright-core";

const CHROMIUM = process.env.CONNECTORGEN_CHROMIUM || "/usr/bin/chromium";
/** The flags that let Chromium start quietly on a closed network: nothing of its own
 * (sync, component updates, background requests, QUIC) is tried. */
const FLAGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
const STEP_DEADLINE_MS = Number(process.env.STEP_DEADLINE_MS ?? 30_000);
const DESKTOP = { width: 1024, height: 720 };
const PHONE = { width: 390, height: 844 };

const say = (value) => process.stdout.write(`${JSON.stringify(value)}\n`);

// Whatever happens, the script ends: a hang is an error line, never a stuck test.
const watchdog = setTimeout(() => {
  say({ error: "the whole script passed its deadline" });
  process.exit(1);
}, Number(process.env.SCRIPT_DEADLINE_MS ?? 170_000));
watchdog.unref();

let browser;
try {
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS });
} catch (error) {
  say({ error: `Chromium did not start (${CHROMIUM}): ${String(error?.message ?? error).split("\n")[0]}` });
  process.exit(1);
}

/** A browser of its own (cookies apart), with JavaScript off as a person's could be. */
async function person() {
  const context = await browser.newContext({ javaScriptEnabled: false, viewport: DESKTOP });
  context.setDefaultTimeout(STEP_DEADLINE_MS);
  const page = await context.newPage();
  return { context, page };
}

const me = await person();
/** Every key typed, to look for in whatever comes back. */
const typed = [];
/** What the page did during the current command. */
let seen = { requests: [], bodies: [], problems: [] };

me.page.on("response", (response) => {
  const request = response.request();
  seen.requests.push({
    method: request.method(),
    url: request.url(),
    status: response.status(),
    location: response.headers().location ?? null,
  });
  // Bodies are read at once: a redirect's or an aborted one has none.
  seen.bodies.push(response.text().catch(() => ""));
});
me.page.on("requestfailed", (request) =>
  seen.requests.push({ method: request.method(), url: request.url(), failed: request.failure()?.errorText ?? "failed" }),
);
me.page.on("console", (message) => {
  if (!["error", "warning"].includes(message.type())) return;
  // Chromium logs a 4xx or 5xx page as a resource that failed to load: the page's own
  // status, already in the answer, not a problem of the page.
  const own = message.location()?.url === me.page.url();
  if (own && message.text().startsWith("Failed to load resource: the server responded with a status of")) return;
  seen.problems.push(`${message.type()}: ${message.text()}`);
});
me.page.on("pageerror", (error) => seen.problems.push(`pageerror: ${error.message}`));

/** What the page shown looks like now, and what was sent and received since `seen` was reset. */
async function report(command, document, shots) {
  const page = me.page;
  await page.waitForLoadState("load");
  const html = await page.content();
  const text = await page.locator("body").innerText();
  const bodies = await Promise.all(seen.bodies);
  const raw = document ? await document.text().catch(() => "") : "";
  const within = (value) => typed.some((key) => String(value ?? "").includes(key));
  const origin = new URL(page.url()).origin;
  const cookies = await me.context.cookies();
  return {
    do: command,
    status: document?.status() ?? null,
    title: await page.title(),
    text,
    url: page.url(),
    requests: seen.requests,
    elsewhere: seen.requests.filter((r) => new URL(r.url).origin !== origin).map((r) => r.url),
    csp: document ? ((await document.headerValue("content-security-policy")) ?? null) : null,
    script: /<script\b/i.test(raw) || /<script\b/i.test(html),
    alert: (await page.locator("[role=alert]").count()) ? await page.locator("[role=alert]").innerText() : null,
    keyField: (await page.locator("input#key[type=password]").count()) === 1,
    formValue: (await page.locator("input[type=hidden][name=form]").count()) === 1,
    cookies: cookies.map((c) => ({ name: c.name, path: c.path, httpOnly: c.httpOnly, sameSite: c.sameSite })),
    problems: seen.problems,
    keyShown: {
      html: within(html) || within(raw),
      text: within(text),
      urls: seen.requests.some((r) => within(r.url)) || within(page.url()),
      locations: seen.requests.some((r) => within(r.location)),
      bodies: bodies.some(within),
    },
    screenshots: shots,
  };
}

/** Screenshots of the page shown: the whole page at a desktop width, then at a phone's. */
async function shoot(desktop, mobile) {
  const shots = [];
  if (desktop) {
    await me.page.screenshot({ path: desktop, fullPage: true });
    shots.push(desktop);
  }
  if (mobile) {
    await me.page.setViewportSize(PHONE);
    await me.page.screenshot({ path: mobile, fullPage: true });
    await me.page.setViewportSize(DESKTOP);
    shots.push(mobile);
  }
  return shots;
}

async function open({ url, screenshot, mobile }) {
  const document = await me.page.goto(url);
  const shots = await shoot(screenshot, mobile);
  return report("open", document, shots);
}

/** The value of the anti-forgery field on `url`, opened in another person's browser. */
async function formOf(url) {
  const other = await person();
  try {
    await other.page.goto(url);
    return await other.page.locator("input[type=hidden][name=form]").getAttribute("value");
  } finally {
    await other.context.close();
  }
}

async function submit({ key, tamper, screenshot }) {
  const page = me.page;
  const field = page.locator("form:has(input#key) input[name=form]");
  if (tamper === "remove-form") {
    await field.evaluate((input) => input.remove());
  } else if (tamper?.formFrom) {
    const value = await formOf(tamper.formFrom);
    if (!value) throw new Error("the other person's page has no form value");
    await field.evaluate((input, v) => input.setAttribute("value", v), value);
  } else if (tamper) {
    throw new Error(`unknown tamper ${JSON.stringify(tamper)}`);
  }
  typed.push(key);
  await page.locator("input#key").fill(key);
  const [document] = await Promise.all([
    page.waitForResponse((r) => r.request().isNavigationRequest() && r.request().method() === "POST"),
    page.locator("form:has(input#key) button[type=submit]").click(),
  ]);
  const shots = await shoot(screenshot, null);
  return report("submit", document, shots);
}

say({ ready: true, browser: browser.version() });
const commands = { open, submit };
for await (const line of createInterface({ input: process.stdin })) {
  if (!line.trim()) continue;
  let command = {};
  seen = { requests: [], bodies: [], problems: [] };
  try {
    command = JSON.parse(line);
    const run = commands[command.do];
    if (!run) throw new Error(`unknown command ${JSON.stringify(command.do)}`);
    say(await run(command));
  } catch (error) {
    say({ do: command.do ?? null, error: String(error?.message ?? error).split("\n")[0] });
  }
}
await browser.close();
process.exit(0);
