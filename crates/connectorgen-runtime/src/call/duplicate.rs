//! A retry the provider answered as a key it has seen (`idempotency.duplicate`): the
//! first request's result, read with `duplicate.readWith` by the key `serve` sent.
//!
//! Takes: the tool whose retry was so answered and its ledger row (the key). Returns:
//! the read's successful answer, or `None` (no `readWith`, a key the model sends itself,
//! no argument of the key's name on the read tool, or a read that did not succeed):
//! the call's outcome is then unknown, as for any retry that did not succeed.
//! Must never: send anything but the free read the manifest names (validation checked
//! it is one: `unusable-duplicate-read`).

use serde_json::{Map, Value, json};

use super::{Served, Stage};
use crate::client::HttpResponse;
use crate::credential::Credential;
use crate::ledger::Entry;
use connectorgen_core::render::mcp::mapping::Location;

/// What the read found.
pub(super) struct Found {
    /// The read tool's name.
    pub read: String,
    pub response: HttpResponse,
    /// Its request's URL without the query: the resource address of a non-JSON body.
    pub uri: String,
}

impl Stage {
    pub(super) async fn found_by_key(
        &self,
        served: &Served,
        person: Option<&Credential>,
        entry: &Entry,
    ) -> Option<Found> {
        let duplicate = served.op.key()?.duplicate.as_ref()?;
        let read = self
            .tools
            .get(*self.by_name.get(duplicate.read_with.as_deref()?)?)?;
        // Only a key this server sends: one the model sent is in its own arguments.
        let key = served.mapping.idempotency.as_ref()?;
        let argument = read.mapping.arguments.iter().find(|a| {
            matches!(a.location, Location::Query | Location::Path)
                && a.name.as_deref() == Some(key.name.as_str())
        });
        let Some(argument) = argument else {
            self.redactor.line(
                "warning",
                json!({"message": format!(
                    "{} takes no argument for the parameter {}: the first {} is not read",
                    read.op.id, key.name, served.op.id
                )}),
            );
            return None;
        };
        let args = Map::from_iter([(argument.argument.clone(), Value::String(entry.key.clone()))]);
        let http =
            crate::request::build(&read.mapping, &args, &self.target(read, person, None)).ok()?;
        let (sent, uri) = self.send(&http).await;
        let mut fields = json!({
            "tool": read.op.id,
            "method": http.method.as_str(),
            "url": http.url,
            "firstOf": served.op.id,
        });
        match sent {
            Ok(response) => {
                fields["status"] = json!(response.status);
                self.redactor.line("forwarded", fields);
                (200..300).contains(&response.status).then(|| Found {
                    read: read.op.id.clone(),
                    response,
                    uri,
                })
            }
            Err(error) => {
                fields["error"] = json!(error.to_string());
                self.redactor.line("forwarded", fields);
                None
            }
        }
    }
}
