//! `serve`'s argument checks and request building on arbitrary calls: every tool of the
//! bundled examples (examples/manifests/, their providers' documents from
//! examples/specs/) and of fuzz/arguments/pay.yaml (`oneOf`/`anyOf`/`allOf` and array
//! bodies, an exploded object query, a query credential, a query retry key).
//!
//! Takes: any bytes. The first byte picks the tool (0 to 4: pay.yaml's `charge`,
//! `refund`, `upload`, `batch`, `getCharge`; then the examples' in file order); the rest is the call's arguments —
//! as JSON when it parses as a JSON object (the seeds in fuzz/arguments/seeds/ are),
//! else built from the bytes out of the tool's own argument names, a few hostile names
//! and hostile values (`..`, "", CR LF, `%2e`, reserved names).
//! Must never: panic, or build a request that breaks a promise: the host is the one
//! given; the path has the template's segments and none of them became "", `.` or `..`;
//! no header carries a line break; the credential and the retry key are in the query
//! once each, with the server's values, when the mapping puts them there; every argument
//! is one the mapping lists; a JSON body holds every body argument with the value called;
//! a second build of the same call is the same request (multipart boundaries aside).
#![no_main]

use std::sync::{Arc, OnceLock};

use connectorgen_core::render::mcp::mapping::{self, Location, RequestMapping};
use connectorgen_runtime::fuzzing::{self, BASE, RETRY_KEY, SECRET};
use libfuzzer_sys::fuzz_target;
use serde_json::{Map, Value, json};

struct Tool {
    schema: Map<String, Value>,
    mapping: RequestMapping,
    /// The argument names of the schema and the mapping, for generated calls.
    names: Vec<String>,
}

fn tools() -> &'static [Tool] {
    static TOOLS: OnceLock<Vec<Tool>> = OnceLock::new();
    TOOLS.get_or_init(|| {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(root.join("examples/manifests"))
            .expect("examples/manifests")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
            .collect();
        files.sort();
        // First, so the seeds' first bytes 0 to 4 pick its tools whatever the examples.
        files.insert(0, root.join("fuzz/arguments/pay.yaml"));
        let mut out = Vec::new();
        for file in files {
            let text = std::fs::read_to_string(&file).expect("a bundled manifest");
            let options = connectorgen_core::Options {
                templates: Some(connectorgen_core::templates::defaults()),
                manifest_dir: file.parent().map(std::path::Path::to_path_buf),
                allow_read: vec![root.join("examples/specs")],
                ..connectorgen_core::Options::default()
            };
            let name = file.to_string_lossy().to_string();
            let analysis = connectorgen_core::analyze_with(&name, Arc::new(text), &options)
                .expect("a bundled manifest renders");
            let Ok(tools) = mapping::tools_in(analysis.outputs.as_ref()) else {
                continue;
            };
            for (definition, mapping) in tools {
                let schema = fuzzing::served_schema(&definition, &mapping);
                let mut names: Vec<String> = mapping
                    .arguments
                    .iter()
                    .map(|a| a.argument.clone())
                    .collect();
                names.extend(
                    schema
                        .get("properties")
                        .and_then(Value::as_object)
                        .into_iter()
                        .flat_map(|p| p.keys().cloned()),
                );
                out.push(Tool {
                    schema,
                    mapping,
                    names,
                });
            }
        }
        assert!(
            out.len() > 50,
            "the examples' tools were not found: {}",
            out.len()
        );
        out
    })
}

const HOSTILE_NAMES: [&str; 8] = [
    "api_key",
    "access_token",
    "request_id",
    "Idempotency-Key",
    "confirmation",
    "body",
    "__proto__",
    "",
];

const HOSTILE_STRINGS: [&str; 12] = [
    "..",
    ".",
    "",
    "%2e%2e",
    "a/../b",
    "x\r\nX-Evil: 1",
    "fuzz-secret-Value_1",
    "2024-01-01T00:00:00Z",
    "https://evil.example/",
    "ü",
    "a;b=c",
    "0",
];

/// Bytes → a JSON value, shallow and bounded.
struct Gen<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Gen<'_> {
    fn byte(&mut self) -> u8 {
        let b = self.bytes.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        b
    }

    fn done(&self) -> bool {
        self.at >= self.bytes.len()
    }

    fn name(&mut self, names: &[String]) -> String {
        let b = self.byte() as usize;
        if b % 4 == 3 || names.is_empty() {
            HOSTILE_NAMES[b / 4 % HOSTILE_NAMES.len()].to_string()
        } else {
            names[b / 4 % names.len()].clone()
        }
    }

    fn value(&mut self, names: &[String], depth: usize) -> Value {
        let b = self.byte();
        match b % 8 {
            0 => Value::Null,
            1 => json!(b % 2 == 0),
            2 => json!(i64::from(self.byte()) - 64),
            3 => json!(f64::from(self.byte()) / 3.0),
            4 | 5 => json!(HOSTILE_STRINGS[self.byte() as usize % HOSTILE_STRINGS.len()]),
            6 if depth < 3 => {
                let n = self.byte() % 4;
                Value::Array((0..n).map(|_| self.value(names, depth + 1)).collect())
            }
            7 if depth < 3 => {
                let n = self.byte() % 4;
                let mut map = Map::new();
                for _ in 0..n {
                    let k = self.name(names);
                    map.insert(k, self.value(names, depth + 1));
                }
                Value::Object(map)
            }
            _ => {
                let len = (self.byte() % 16) as usize;
                let text: String = (0..len)
                    .map(|_| char::from(self.byte() % 95 + 32))
                    .collect();
                json!(text)
            }
        }
    }
}

fn arguments(data: &[u8], tool: &Tool) -> Map<String, Value> {
    if let Ok(Value::Object(map)) = serde_json::from_slice::<Value>(data) {
        return map;
    }
    let mut generator = Gen { bytes: data, at: 0 };
    let mut map = Map::new();
    while !generator.done() && map.len() < 8 {
        let name = generator.name(&tool.names);
        let value = generator.value(&tool.names, 0);
        map.insert(name, value);
    }
    map
}

fn pairs(query: &str) -> Vec<(String, String)> {
    query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| match p.split_once('=') {
            Some((k, v)) => (k.to_string(), v.to_string()),
            None => (p.to_string(), String::new()),
        })
        .collect()
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let all = tools();
    let tool = &all[pick as usize % all.len()];
    let args = arguments(rest, tool);
    let Ok(built) = fuzzing::build(&tool.schema, &tool.mapping, &args) else {
        return;
    };
    let mapping = &tool.mapping;

    // The host is the one given; the path keeps the template's segments.
    let after = built
        .url
        .strip_prefix(BASE)
        .unwrap_or_else(|| panic!("another host: {}", built.url));
    assert!(
        after.starts_with('/'),
        "the path does not follow the host: {}",
        built.url
    );
    let (path, query) = after.split_once('?').unwrap_or((after, ""));
    assert!(!path.contains(['#', '?']), "{path}");
    let template: Vec<&str> = mapping.path.split('/').collect();
    let sent: Vec<&str> = path.split('/').collect();
    assert_eq!(template.len(), sent.len(), "{} became {path}", mapping.path);
    for (t, s) in template.iter().zip(&sent) {
        if t.contains('{') {
            assert!(
                !matches!(*s, "" | "." | ".."),
                "{} became {path}",
                mapping.path
            );
        } else {
            assert_eq!(t, s, "{} became {path}", mapping.path);
        }
    }

    // No header carries a line break.
    for (name, value) in &built.headers {
        assert!(
            !name.contains(['\r', '\n']) && !value.contains(['\r', '\n']),
            "{name}: {value:?}"
        );
    }

    // The credential and the retry key, in the query once each, with the server's values.
    let pairs = pairs(query);
    let once = |name: &str, value: &str| {
        let found: Vec<&(String, String)> = pairs
            .iter()
            .filter(|(k, _)| k.eq_ignore_ascii_case(name))
            .collect();
        assert_eq!(found.len(), 1, "{name} in {query}");
        assert_eq!(found[0].1, value, "{name} in {query}");
    };
    if let mapping::Credential::ApiKey {
        location: Location::Query,
        name,
    } = &mapping.credential
    {
        once(name, SECRET);
    }
    if let Some(idem) = &mapping.idempotency
        && idem.location == Location::Query
    {
        once(&idem.name, RETRY_KEY);
    }

    // Every argument is one the mapping lists (else nothing was built).
    for key in args.keys() {
        let listed = mapping.arguments.iter().any(|a| &a.argument == key);
        let taken_out = mapping
            .idempotency
            .as_ref()
            .is_some_and(|i| &i.argument == key);
        assert!(
            listed || taken_out,
            "`{key}` was accepted but the mapping does not send it"
        );
    }

    // A JSON body of fields holds every body argument with the value called.
    let json_body = mapping.body.as_ref().is_some_and(|b| {
        let essence = b.media_type.split(';').next().unwrap_or_default().trim();
        essence == "application/json" || essence.ends_with("+json")
    });
    let whole = mapping.arguments.iter().any(|a| {
        a.location == Location::Body && a.name.is_none() && args.contains_key(&a.argument)
    });
    if json_body
        && !whole
        && let Some(body) = &built.body
    {
        let body: Value = serde_json::from_slice(body).expect("a JSON body is JSON");
        let filled: Vec<&str> = mapping
            .fixed
            .iter()
            .filter(|f| f.location == Location::Body)
            .map(|f| f.name.as_str())
            .collect();
        for argument in mapping
            .arguments
            .iter()
            .filter(|a| a.location == Location::Body)
        {
            let (Some(name), Some(value)) = (&argument.name, args.get(&argument.argument)) else {
                continue;
            };
            // The retry key argument carries the server's key, whatever was called.
            let key = mapping
                .idempotency
                .as_ref()
                .is_some_and(|i| i.argument == argument.argument);
            if value.is_null() || key || filled.contains(&name.as_str()) {
                continue;
            }
            assert_eq!(body.get(name), Some(value), "body field {name} of {body}");
        }
    }

    // The same call builds the same request.
    let again =
        fuzzing::build(&tool.schema, &tool.mapping, &args).expect("built once, built again");
    let multipart = mapping
        .body
        .as_ref()
        .is_some_and(|b| b.media_type.starts_with("multipart/"));
    assert_eq!(again.url, built.url);
    if !multipart {
        assert_eq!(again, built);
    }
});
