//! The OAuth scopes of a connector, from the safety classes its manifest already
//! declares: a free read needs `<service>:read`; a write or an action that cannot be
//! undone, `<service>:change`; a call that spends, `<service>:change` and
//! `<service>:spend`. So a client can hold a token that cannot spend, and ask the person
//! for more only when they want to buy something.
//!
//! Takes: the connector (its `oauth.scopes`, else names from the service), then an
//! operation. Returns: the scope names, and the ones a call of that operation needs (all
//! of them).
//! Must never: let a read scope call anything but a free read, or count a spend scope as
//! the person's yes (consent applies on top).

use connectorgen_core::model::{Connector, Operation};

/// The three scope names of a connector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Scopes {
    pub read: String,
    pub change: String,
    pub spend: String,
}

impl Scopes {
    /// The manifest's `oauth.scopes`, each class left out `<service>:read`, `:change` or
    /// `:spend` (`OAuthScopes::resolved`).
    pub(crate) fn of(connector: &Connector) -> Scopes {
        let [read, change, spend] = connector.oauth_scopes.resolved(&connector.service.name);
        Scopes {
            read,
            change,
            spend,
        }
    }

    /// Every scope, as the protected-resource metadata lists them.
    pub(crate) fn all(&self) -> [&str; 3] {
        [&self.read, &self.change, &self.spend]
    }

    /// The scopes a call of `op` needs, every one of them.
    pub(crate) fn needed(&self, op: &Operation) -> Vec<&str> {
        if op.spends.is_some() {
            vec![&self.change, &self.spend]
        } else if op.read && !op.confirm {
            vec![&self.read]
        } else {
            vec![&self.change]
        }
    }
}
