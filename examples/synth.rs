//! A deterministic synthetic manifest, for benchmarks and profiling.
//!
//! ```sh
//! cargo run --release --example synth -- --ops 10000 --seed 42 > big.yaml
//! ```
//!
//! Takes: `--ops N` (operations, at least 1) and `--seed S` (default 42). Writes to
//! stdout: one valid, lint-clean manifest in block-style YAML. The same arguments always
//! give the same bytes (`SplitMix64`, no clock, no hash-map order).
//!
//! The mix is what a real connector looks like, scaled up:
//! - ~60% `get` reads with 1–3 query parameters and an output schema of about five
//!   properties; half of them fetch one item by `{id}` (the poll targets), half list;
//! - ~25% `post`s that spend (credits or money; a third of them permanent, `confirm`) and are async, each
//!   polling an earlier `get` with an `{id}` path parameter that neither spends nor is
//!   async;
//! - ~15% `delete`s.
//!
//! Summaries are 4–8 words (about 35 characters); descriptions 2–4 sentences (about
//! 100–350 characters, median ~195), a third of them as folded block scalars (`>-`).
//! Every description states a limit, so the default lints stay quiet and `build`
//! measures the clean path. Operation ids and method + path pairs are unique: each
//! operation's index is part of both. At 10,000 operations the file is 9.8 MB (9.4 MiB).
//!
//! Must never: print an invalid manifest. Check with
//! `connectorgen build big.yaml --out /tmp/x` (exit 0).

use std::fmt::Write as _;
use std::io::Write as _;
use std::process::ExitCode;

/// `SplitMix64` (Steele, Lea and Flood, 2014; the seeding generator of xoshiro): one
/// 64-bit state, a Weyl increment and a 64-bit finaliser. Tiny, fast, and the same on
/// every platform, which is all a benchmark input needs.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0; the modulo bias is irrelevant here).
    #[expect(
        clippy::cast_possible_truncation,
        reason = "the remainder is below n, a usize"
    )]
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// True with probability `percent`/100.
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    /// `k` distinct items of `items`, in a random order.
    fn distinct<'a, T>(&mut self, items: &'a [T], k: usize) -> Vec<&'a T> {
        let mut idx: Vec<usize> = (0..items.len()).collect();
        for i in 0..k.min(idx.len()) {
            let j = i + self.below(idx.len() - i);
            idx.swap(i, j);
        }
        idx[..k.min(items.len())]
            .iter()
            .map(|&i| &items[i])
            .collect()
    }
}

const NOUNS: [&str; 32] = [
    "video",
    "invoice",
    "project",
    "task",
    "order",
    "customer",
    "ticket",
    "report",
    "document",
    "payment",
    "subscription",
    "file",
    "image",
    "playlist",
    "campaign",
    "contact",
    "dataset",
    "shipment",
    "booking",
    "note",
    "comment",
    "label",
    "workspace",
    "member",
    "event",
    "refund",
    "transcript",
    "album",
    "quote",
    "survey",
    "recipe",
    "translation",
];

/// Field name, JSON Schema type, description.
const FIELDS: [(&str, &str, &str); 20] = [
    ("name", "string", "Display name, as the person wrote it."),
    ("title", "string", "Short title shown in lists."),
    ("createdAt", "string", "When it was created (RFC 3339)."),
    ("updatedAt", "string", "When it last changed (RFC 3339)."),
    ("ownerId", "string", "The id of the member who owns it."),
    ("sizeBytes", "integer", "Size in bytes."),
    ("url", "string", "A link the person can open."),
    ("priority", "integer", "1 is the most urgent, 5 the least."),
    ("currency", "string", "ISO 4217 code, e.g. EUR."),
    ("amount", "number", "Amount in the currency's major unit."),
    ("region", "string", "Where the data is stored."),
    ("language", "string", "BCP 47 language tag."),
    ("durationSeconds", "number", "Length in seconds."),
    ("archived", "boolean", "Whether it is archived."),
    ("description", "string", "Free text from the person."),
    ("itemCount", "integer", "How many items it holds."),
    ("shared", "boolean", "Whether anyone else can see it."),
    ("version", "integer", "Increases by one on every change."),
    ("thumbnailUrl", "string", "A small preview image."),
    (
        "source",
        "string",
        "Where it came from (upload, import or api).",
    ),
];

const STATUSES: [&str; 4] = ["queued", "running", "succeeded", "failed"];

const GET_ONE_SUMMARIES: [&str; 4] = [
    "Fetch one {noun} by its id",
    "Read a {noun} and its current status",
    "Look up a single {noun} with its details",
    "Show one {noun} the person owns",
];
const LIST_SUMMARIES: [&str; 4] = [
    "List the person's recent {noun}s",
    "Search {noun}s by keyword and status",
    "Browse {noun}s in the workspace, newest first",
    "Find {noun}s that match a filter",
];
const POST_SUMMARIES: [&str; 4] = [
    "Generate a new {noun} from a prompt",
    "Start an export of a {noun}",
    "Render a {noun} in high quality",
    "Order a professional review of a {noun}",
];
const DELETE_SUMMARIES: [&str; 3] = [
    "Delete a {noun} for good",
    "Remove one {noun} from the workspace",
    "Permanently erase a {noun} and its history",
];

/// Sentences that say what a call does; `{noun}`, `{a}`, `{b}` and `{c}` are filled in.
const DOES: [&str; 6] = [
    "Returns the {noun} with its {a}, {b} and {c}.",
    "Use this when the person asks about a specific {noun} or wants its {a}.",
    "The result includes the {a} and the {b}, plus a link the person can open.",
    "Results are sorted by {a}; pass the cursor from a previous page to continue.",
    "Works on {noun}s in every workspace the token can see, including shared ones.",
    "The {b} is reported in the person's own time zone and language where possible.",
];
/// Sentences that bound a call (the `missing-limit` lint looks for these words).
const READ_LIMITS: [&str; 4] = [
    "Read-only. It never changes or deletes a {noun}.",
    "Read-only; it cannot start, cancel or pay for anything.",
    "Does not return {noun}s from workspaces the person has left.",
    "Free to call as often as needed; it never starts or charges for a job.",
];
const POST_DOES: [&str; 4] = [
    "Starts a job that produces the {noun} and returns its id at once.",
    "Queues the work on the provider's servers; the result appears on the {noun} when done.",
    "Uses the settings given in the body, and the person's defaults for everything else.",
    "The finished {noun} keeps its {a} and {b} from the input.",
];
const POST_LIMITS: [&str; 3] = [
    "Does not publish or share the {noun}.",
    "Only affects the {noun} named in the body; never touches other {noun}s.",
    "It will not send anything to other people.",
];
const DELETE_DOES: [&str; 3] = [
    "Deletes the {noun} and every file attached to it.",
    "Removes the {noun} from all lists and shared links.",
    "The {noun} disappears from the person's workspace at once.",
];
const DELETE_LIMITS: [&str; 3] = [
    "This cannot be undone. Only the named {noun} is deleted.",
    "Does not delete the {noun}'s owner or its workspace.",
    "It never refunds credits already spent on the {noun}.",
];

struct Args {
    ops: usize,
    seed: u64,
}

fn parse_args() -> Result<Args, String> {
    let mut ops = None;
    let mut seed = 42;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = |name: &str| {
            args.next()
                .ok_or_else(|| format!("{name} needs a value"))
                .and_then(|v| {
                    v.parse::<u64>()
                        .map_err(|e| format!("{name} {v}: {e} (expected a whole number)"))
                })
        };
        match arg.as_str() {
            "--ops" => ops = Some(value("--ops")?),
            "--seed" => seed = value("--seed")?,
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    let ops = ops.ok_or("--ops is required")?;
    if ops == 0 {
        return Err("--ops must be at least 1".to_string());
    }
    let ops = usize::try_from(ops).map_err(|_| "--ops is too large".to_string())?;
    Ok(Args { ops, seed })
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(args) => args,
        Err(message) => {
            if !message.is_empty() {
                eprintln!("error: {message}");
            }
            eprintln!("usage: synth --ops N [--seed S]   (writes a manifest to stdout)");
            return ExitCode::from(2);
        }
    };
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let mut generator = Generator::new(args.seed);
    let mut buf = String::with_capacity(4096);
    generator.header(&mut buf, args.ops);
    let mut result = out.write_all(buf.as_bytes());
    for i in 0..args.ops {
        if result.is_err() {
            break;
        }
        buf.clear();
        generator.operation(&mut buf, i);
        result = out.write_all(buf.as_bytes());
    }
    match result.and_then(|()| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        // `synth … | head` closed the pipe: not an error of the generator.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: cannot write: {e}");
            ExitCode::FAILURE
        }
    }
}

struct Generator {
    rng: SplitMix64,
    /// Ids of the `get {id}` reads written so far: the safe poll targets.
    poll_targets: Vec<String>,
}

fn capitalise(word: &str) -> String {
    let mut chars = word.chars();
    match chars.next() {
        Some(first) => first.to_ascii_uppercase().to_string() + chars.as_str(),
        None => String::new(),
    }
}

impl Generator {
    fn new(seed: u64) -> Self {
        Generator {
            rng: SplitMix64(seed),
            poll_targets: Vec::new(),
        }
    }

    fn header(&mut self, out: &mut String, ops: usize) {
        let _ = write!(
            out,
            "\
# Synthetic manifest: {ops} operations (examples/synth.rs). Do not edit; regenerate.
version: 1
service:
  name: Synthia
  title: Synthia Workspace for Agents
  version: 2.{minor}.0
  description: Synthia keeps the person's projects, media and paperwork in one workspace. This connector lets an assistant find and read their items, start paid generation jobs and follow them to completion, and delete what the person no longer wants.
  publicUrl: https://agents.synthia.example
  dashboardUrl: https://synthia.example/settings/connections
auth:
  tokenPrefix: syn_
operations:
",
            minor = self.rng.below(20)
        );
    }

    /// A sentence template with the placeholders filled in.
    fn fill(&mut self, template: &str, noun: &str) -> String {
        let fields = self.rng.distinct(&FIELDS, 3);
        template
            .replace("{noun}", noun)
            .replace("{a}", fields[0].0)
            .replace("{b}", fields[1].0)
            .replace("{c}", fields[2].0)
    }

    /// 2–4 sentences: what it does, then a limit, sometimes more of what it does.
    fn description(&mut self, does: &[&str], limits: &[&str], noun: &str) -> String {
        let mut templates = vec![*self.rng.pick(does)];
        if self.rng.chance(50) {
            templates.push(*self.rng.pick(&DOES));
        }
        templates.push(*self.rng.pick(limits));
        if self.rng.chance(30) {
            templates.push(*self.rng.pick(does));
        }
        templates
            .into_iter()
            .map(|t| self.fill(t, noun))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// `    description: …`, a third of the time as a folded block scalar.
    fn write_description(&mut self, out: &mut String, text: &str) {
        if self.rng.chance(33) {
            let _ = writeln!(out, "    description: >-");
            let mut line = String::new();
            for word in text.split(' ') {
                if !line.is_empty() && line.len() + word.len() > 72 {
                    let _ = writeln!(out, "      {line}");
                    line.clear();
                }
                if !line.is_empty() {
                    line.push(' ');
                }
                line.push_str(word);
            }
            let _ = writeln!(out, "      {line}");
        } else {
            let _ = writeln!(out, "    description: {text}");
        }
    }

    fn operation(&mut self, out: &mut String, i: usize) {
        let noun = *self.rng.pick(&NOUNS);
        let roll = self.rng.below(100);
        // The first operation is always a poll target, so every POST has one to poll.
        if i == 0 || (roll < 60 && self.rng.chance(50)) {
            self.get_one(out, i, noun);
        } else if roll < 60 {
            self.list(out, i, noun);
        } else if roll < 85 {
            self.post(out, i, noun);
        } else {
            self.delete(out, i, noun);
        }
        out.push('\n');
    }

    #[expect(
        clippy::unused_self,
        reason = "one of the generator's steps, called like the others"
    )]
    fn start(&mut self, out: &mut String, id: &str, method: &str, path: &str, summary: &str) {
        let _ = write!(
            out,
            "  - id: {id}\n    method: {method}\n    path: {path}\n    summary: {summary}\n"
        );
    }

    fn get_one(&mut self, out: &mut String, i: usize, noun: &str) {
        let id = format!("get{}{i}", capitalise(noun));
        let summary = self.rng.pick(&GET_ONE_SUMMARIES).replace("{noun}", noun);
        self.start(out, &id, "get", &format!("/v1/{noun}s{i}/{{id}}"), &summary);
        let text = self.description(&DOES, &READ_LIMITS, noun);
        self.write_description(out, &text);
        let n = self.rng.range(1, 3);
        self.query(out, n, false);
        self.output_object(out, true);
        self.poll_targets.push(id);
    }

    fn list(&mut self, out: &mut String, i: usize, noun: &str) {
        let id = format!("list{}s{i}", capitalise(noun));
        let summary = self.rng.pick(&LIST_SUMMARIES).replace("{noun}", noun);
        self.start(out, &id, "get", &format!("/v1/{noun}s{i}"), &summary);
        let text = self.description(&DOES, &READ_LIMITS, noun);
        self.write_description(out, &text);
        let n = self.rng.range(1, 3);
        self.query(out, n, true);
        self.output_object(out, false);
    }

    fn post(&mut self, out: &mut String, i: usize, noun: &str) {
        let id = format!("create{}{i}", capitalise(noun));
        let summary = self.rng.pick(&POST_SUMMARIES).replace("{noun}", noun);
        self.start(out, &id, "post", &format!("/v1/{noun}s{i}"), &summary);
        let text = self.description(&POST_DOES, &POST_LIMITS, noun);
        self.write_description(out, &text);

        out.push_str("    input:\n      type: object\n      properties:\n");
        out.push_str(
            "        prompt:\n          type: string\n          minLength: 1\n          maxLength: 4000\n          description: What the result should contain.\n",
        );
        let n = self.rng.range(1, 2);
        for (name, ty, description) in self.rng.distinct(&FIELDS, n) {
            let _ = write!(out, "        {name}:\n          type: {ty}\n");
            if self.rng.chance(50) {
                let _ = writeln!(out, "          description: {description}");
            }
        }
        out.push_str("      required: [prompt]\n      additionalProperties: false\n");
        out.push_str("    output:\n      type: object\n      properties:\n");
        let _ = write!(
            out,
            "        id:\n          type: string\n          description: The job id; poll it to follow the job.\n"
        );
        self.status_property(out);
        out.push_str("      required: [id, status]\n");

        let (kind, note) = match self.rng.below(3) {
            0 => (
                "credits",
                format!("Costs {} generation credits.", self.rng.range(1, 20)),
            ),
            1 => (
                "money",
                format!(
                    "Charges {}.{:02} EUR to the person's saved card.",
                    self.rng.range(1, 99),
                    self.rng.below(100)
                ),
            ),
            // Paid and permanent: `spends` for the fee, `confirm` for what cannot be undone.
            _ => (
                "money",
                "Charges a 5.00 EUR review fee; the work goes to a human reviewer and cannot be recalled."
                    .to_string(),
            ),
        };
        let _ = write!(out, "    spends:\n      kind: {kind}\n      note: {note}\n");
        if note.contains("cannot be recalled") {
            out.push_str("    confirm: true\n");
        }
        let target = self.rng.pick(&self.poll_targets).clone();
        let _ = write!(out, "    async:\n      pollWith: {target}\n");
        if self.rng.chance(80) {
            let _ = writeln!(out, "      typicalSeconds: {}", self.rng.range(5, 600));
        }
        match self.rng.below(10) {
            0..=2 => out.push_str("    idempotency: required\n"),
            3 => out.push_str("    idempotency: optional\n"),
            _ => {}
        }
    }

    fn delete(&mut self, out: &mut String, i: usize, noun: &str) {
        let id = format!("delete{}{i}", capitalise(noun));
        let summary = self.rng.pick(&DELETE_SUMMARIES).replace("{noun}", noun);
        self.start(
            out,
            &id,
            "delete",
            &format!("/v1/{noun}s{i}/{{id}}"),
            &summary,
        );
        let text = self.description(&DELETE_DOES, &DELETE_LIMITS, noun);
        self.write_description(out, &text);
        if self.rng.chance(50) {
            out.push_str(
                "    output:\n      type: object\n      properties:\n        id:\n          type: string\n        deleted:\n          type: boolean\n      required: [id, deleted]\n",
            );
        }
    }

    #[expect(
        clippy::unused_self,
        reason = "one of the generator's steps, called like the others"
    )]
    fn status_property(&mut self, out: &mut String) {
        out.push_str("        status:\n          type: string\n          enum: [");
        out.push_str(&STATUSES.join(", "));
        out.push_str("]\n");
    }

    /// `n` query parameters; a list also gets paging ones first.
    fn query(&mut self, out: &mut String, n: usize, list: bool) {
        out.push_str("    query:\n");
        let mut params: Vec<&str> = Vec::with_capacity(n);
        if list {
            params.push("limit");
            if n > 1 {
                params.push("cursor");
            }
        }
        let extra = ["status", "q", "sort", "createdAfter", "fields", "expand"];
        for p in self.rng.distinct(&extra, n.saturating_sub(params.len())) {
            params.push(p);
        }
        for p in params {
            let _ = writeln!(out, "      - name: {p}");
            match p {
                "limit" => out.push_str(
                    "        description: Items to return (1-100).\n        required: false\n        schema:\n          type: integer\n          minimum: 1\n          maximum: 100\n          default: 20\n",
                ),
                "cursor" => out.push_str(
                    "        description: Opaque cursor from a previous page's nextCursor.\n        schema:\n          type: string\n",
                ),
                "status" => {
                    out.push_str("        description: Only items in this state.\n        schema:\n          type: string\n          enum: [");
                    out.push_str(&STATUSES.join(", "));
                    out.push_str("]\n");
                }
                "q" => out.push_str(
                    "        description: Words to search for in names and descriptions.\n        required: true\n        schema:\n          type: string\n          minLength: 1\n          maxLength: 200\n",
                ),
                "sort" => out.push_str(
                    "        description: Sort order.\n        schema:\n          type: string\n          enum: [newest, oldest, name]\n          default: newest\n",
                ),
                "createdAfter" => out.push_str(
                    "        description: Only items created after this instant (RFC 3339).\n        schema:\n          type: string\n          format: date-time\n",
                ),
                "fields" => out.push_str(
                    "        description: Comma-separated fields to include; all when absent.\n",
                ),
                _ => out.push_str(
                    "        description: Related objects to embed (owner, workspace).\n        schema:\n          type: array\n          items:\n            type: string\n",
                ),
            }
        }
    }

    /// An output schema of about five properties: one item, or a page of items.
    fn output_object(&mut self, out: &mut String, one: bool) {
        out.push_str("    output:\n      type: object\n      properties:\n");
        if one {
            out.push_str("        id:\n          type: string\n");
            self.status_property(out);
            let n = self.rng.range(2, 4);
            for (name, ty, description) in self.rng.distinct(&FIELDS, n) {
                let _ = write!(out, "        {name}:\n          type: {ty}\n");
                if self.rng.chance(50) {
                    let _ = writeln!(out, "          description: {description}");
                }
            }
            out.push_str("      required: [id, status]\n");
        } else {
            out.push_str("        items:\n          type: array\n          items:\n            type: object\n            properties:\n              id:\n                type: string\n");
            let n = self.rng.range(2, 3);
            for (name, ty, _) in self.rng.distinct(&FIELDS, n) {
                let _ = write!(out, "              {name}:\n                type: {ty}\n");
            }
            out.push_str("        nextCursor:\n          type: [string, \"null\"]\n");
        }
    }
}
