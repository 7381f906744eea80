//! Client-safe MCP argument names (a leaf: validation checks the names an author
//! chooses, the mcp target maps the others).
//!
//! Takes: the HTTP names of a tool's inputs (and the names an author chose). Returns: a
//! name for each that every client accepts — Anthropic's API refuses a whole tool list
//! when one `inputSchema` property name is outside `^[a-zA-Z0-9_.-]{1,64}$` — by one
//! deterministic rule (docs/mcp.md, "Argument names").
//! Must never: depend on anything but the names and their order, or give two arguments
//! one name.

use std::collections::BTreeSet;

/// The longest argument name.
pub(crate) const ARGUMENT_MAX: usize = 64;

/// Whether `name` matches `^[a-zA-Z0-9_.-]{1,64}$`, the property names every client
/// accepts.
pub(crate) fn is_safe(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= ARGUMENT_MAX
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

/// A client-safe spelling of `name`: itself when it is safe; else comparison operators
/// become words (`<=` `_lte`, `>=` `_gte`, `!=` `_ne`, `<` `_lt`, `>` `_gt`, `=` `_eq`),
/// `[]` is dropped, `[` becomes `_` and `]` nothing, any other character outside
/// `[A-Za-z0-9_.-]` becomes `_`; runs of `_` are one, `_` at either end is trimmed; an
/// empty result is `arg`; a result over 64 characters keeps 55 and adds `_` and 8 hex
/// digits of a hash of the original name, so long names that share a start differ.
pub(crate) fn safe_name(name: &str) -> String {
    if is_safe(name) {
        return name.to_string();
    }
    let mut out = String::with_capacity(name.len() + 4);
    let mut chars = name.chars().peekable();
    while let Some(c) = chars.next() {
        let next = chars.peek().copied();
        match (c, next) {
            ('<', Some('=')) => {
                chars.next();
                out.push_str("_lte");
            }
            ('>', Some('=')) => {
                chars.next();
                out.push_str("_gte");
            }
            ('!', Some('=')) => {
                chars.next();
                out.push_str("_ne");
            }
            ('[', Some(']')) => {
                chars.next();
            }
            ('<', _) => out.push_str("_lt"),
            ('>', _) => out.push_str("_gt"),
            ('=', _) => out.push_str("_eq"),
            (']', _) => {}
            (c, _) if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-') => out.push(c),
            _ => out.push('_'),
        }
    }
    let mut collapsed = String::with_capacity(out.len());
    for c in out.chars() {
        if !(c == '_' && collapsed.ends_with('_')) {
            collapsed.push(c);
        }
    }
    let trimmed = collapsed.trim_matches('_');
    let safe = if trimmed.is_empty() { "arg" } else { trimmed };
    shorten(safe, name)
}

/// `name` cut to 55 characters plus `_` and a hash of `original`, when over 64.
fn shorten(name: &str, original: &str) -> String {
    if name.len() <= ARGUMENT_MAX {
        return name.to_string();
    }
    // ASCII only by now, so byte slicing is on character boundaries.
    format!("{}_{:08x}", &name[..55], fnv1a(original))
}

/// FNV-1a, 32 bits: stable across builds and platforms (std's hasher is not).
fn fnv1a(text: &str) -> u32 {
    text.bytes().fold(0x811c_9dc5, |hash, b| {
        (hash ^ u32::from(b)).wrapping_mul(0x0100_0193)
    })
}

/// Gives each input its argument name, in order. `wanted[i]` is the name the author
/// chose for input `i` (kept as it is: checked by the caller), else its `safe_name`;
/// `location[i]` (`path`, `query`, …) is the suffix that separates an automatic name
/// from one already given: `id` and `id` become `id` and `id_body`, then `id_body_2`, …
/// Author-chosen names are reserved first, so an automatic name never takes one.
pub(crate) fn assign(wanted: &[(Option<&str>, &str, &str)]) -> Vec<String> {
    // (chosen, http name, location)
    let mut taken: BTreeSet<String> = wanted
        .iter()
        .filter_map(|(chosen, _, _)| chosen.map(str::to_string))
        .collect();
    wanted
        .iter()
        .map(|(chosen, http, location)| {
            if let Some(chosen) = chosen {
                return chosen.to_string();
            }
            let base = safe_name(http);
            let mut name = base.clone();
            if taken.contains(&name) {
                name = suffixed(&base, location);
                let mut n = 2;
                let first = name.clone();
                while taken.contains(&name) {
                    name = suffixed(&first, &n.to_string());
                    n += 1;
                }
            }
            taken.insert(name.clone());
            name
        })
        .collect()
}

/// `base_suffix`, `base` cut so the whole stays within 64 characters.
fn suffixed(base: &str, suffix: &str) -> String {
    let room = ARGUMENT_MAX - suffix.len() - 1;
    let cut = if base.len() > room {
        &base[..room]
    } else {
        base
    };
    format!("{cut}_{suffix}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_documented_examples() {
        assert_eq!(safe_name("DateSent<"), "DateSent_lt");
        assert_eq!(safe_name("DateSent>"), "DateSent_gt");
        assert_eq!(safe_name("StartTime>="), "StartTime_gte");
        assert_eq!(safe_name("date_created[before]"), "date_created_before");
        assert_eq!(safe_name("filter[name][eq]"), "filter_name_eq");
        assert_eq!(safe_name("ids[]"), "ids");
        assert_eq!(safe_name("page size"), "page_size");
        assert_eq!(safe_name("$top"), "top");
        assert_eq!(safe_name("ünïcode"), "n_code");
        assert_eq!(safe_name("<>"), "lt_gt");
        assert_eq!(safe_name("***"), "arg");
        assert_eq!(safe_name("already_safe.name-1"), "already_safe.name-1");
    }

    #[test]
    fn long_names_are_cut_with_a_hash_and_stay_distinct() {
        let a = format!("{}[a]", "x".repeat(70));
        let b = format!("{}[b]", "x".repeat(70));
        assert!(is_safe(&safe_name(&a)));
        assert_eq!(safe_name(&a).len(), 64);
        assert_ne!(safe_name(&a), safe_name(&b));
        let long_safe = "y".repeat(65);
        assert!(is_safe(&safe_name(&long_safe)));
    }

    #[test]
    fn collisions_take_the_location_then_a_number() {
        let names = assign(&[
            (None, "id", "path"),
            (None, "id", "query"),
            (None, "id", "body"),
            (None, "id[]", "body"),
            (Some("id_query"), "other", "header"),
        ]);
        assert_eq!(
            names,
            ["id", "id_query_2", "id_body", "id_body_2", "id_query"]
        );
        assert!(names.iter().all(|n| is_safe(n)));
    }

    #[test]
    fn every_result_is_safe() {
        for name in [
            "",
            " ",
            "a b",
            "[",
            "]",
            "<",
            "é",
            "a\u{0}b",
            &"é".repeat(40),
        ] {
            assert!(
                is_safe(&safe_name(name)),
                "{name:?} → {:?}",
                safe_name(name)
            );
        }
    }

    proptest::proptest! {
        /// Any names at all, in any locations: every argument name is safe, and no two
        /// are alike.
        #[test]
        fn any_names_give_distinct_safe_arguments(
            names in proptest::collection::vec(("\\PC{0,70}", 0usize..5), 0..24)
        ) {
            const LOCATIONS: [&str; 5] = ["path", "query", "header", "cookie", "body"];
            let wanted: Vec<(Option<&str>, &str, &str)> = names
                .iter()
                .map(|(n, l)| (None, n.as_str(), LOCATIONS[*l]))
                .collect();
            let out = assign(&wanted);
            proptest::prop_assert!(out.iter().all(|n| is_safe(n)), "{out:?}");
            let distinct: BTreeSet<&String> = out.iter().collect();
            proptest::prop_assert_eq!(distinct.len(), out.len());
            proptest::prop_assert_eq!(assign(&wanted), out);
        }
    }
}
