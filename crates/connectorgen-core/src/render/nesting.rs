//! How deeply a template's expressions nest, measured before minijinja parses them.
//!
//! Takes: a template's source. Returns: the byte offset where an expression first nests
//! deeper than `MAX_DEPTH`, if one does.
//! Must never: parse (or build anything whose size grows with the nesting): the point is
//! to refuse before minijinja does either.
//!
//! Why: minijinja's parser guards the nesting of brackets and statements (150 levels),
//! but not a run of prefix operators (`not not … x`, `- - … 1`), and a chain of filters,
//! attribute lookups or binary operators (`x|lower|lower…`, `1+1+1…`) is parsed in a loop
//! into a tree as deep as the chain, which compiling and dropping then walk by recursion.
//! A 200 KB template of either overflowed the stack (SIGABRT, exit 134: issue 21,
//! defect 4). The measure here is an upper bound on the depth of that tree: every
//! operator token adds one level to the element it is in, and a bracketed group adds
//! its deepest element plus one to the element around it.

/// The deepest an expression may nest. A debug build with a 2 MiB stack (a test
/// thread's) compiled 1,000 levels of each construct and overflowed at 2,000; the default
/// templates nest at most a few levels.
pub(super) const MAX_DEPTH: usize = 256;

/// Words that are operators in minijinja's expression grammar.
const WORD_OPERATORS: [&str; 7] = ["not", "and", "or", "is", "in", "if", "else"];

/// Where (a byte offset into `source`) an expression first nests deeper than
/// `MAX_DEPTH`.
pub(super) fn too_deep(source: &str) -> Option<usize> {
    let bytes = source.as_bytes();
    let mut i = 0;
    while let Some(open) = find(bytes, i, b"{") {
        i = open + 1;
        match bytes.get(open + 1) {
            Some(b'#') => i = find(bytes, open + 2, b"#}").map_or(bytes.len(), |e| e + 2),
            Some(b'{') => match Scan::new().run(bytes, open + 2, b"}}") {
                Ok(end) => i = end,
                Err(at) => return Some(at),
            },
            Some(b'%') => {
                let end = match Scan::new().run(bytes, open + 2, b"%}") {
                    Ok(end) => end,
                    Err(at) => return Some(at),
                };
                i = if first_word(&bytes[open + 2..end]) == b"raw" {
                    end_of_raw(bytes, end)
                } else {
                    end
                };
            }
            _ => {}
        }
    }
    None
}

/// One bracket level: the depth of the element being read, and the deepest one so far.
#[derive(Default)]
struct Level {
    current: usize,
    deepest: usize,
}

struct Scan {
    levels: Vec<Level>,
    /// minijinja's `paren_balance`: a tag ends only where it is zero.
    balance: isize,
}

impl Scan {
    fn new() -> Self {
        Scan {
            levels: vec![Level::default()],
            balance: 0,
        }
    }

    /// The level being read; there is always one (the tag's own), which is never popped.
    fn top(&mut self) -> &mut Level {
        let last = self.levels.len() - 1;
        &mut self.levels[last]
    }

    fn depth(&self) -> usize {
        self.levels.iter().map(|l| l.current).sum::<usize>() + self.levels.len() - 1
    }

    /// Scans one tag from `start` to its `end` delimiter (outside strings and brackets,
    /// as minijinja's lexer ends it): the offset after the tag, or where and how deep
    /// it passed `MAX_DEPTH`.
    fn run(mut self, bytes: &[u8], start: usize, end: &[u8]) -> Result<usize, usize> {
        let mut i = start;
        while i < bytes.len() {
            if self.balance == 0 && bytes[i..].starts_with(end) {
                return Ok(i + end.len());
            }
            match bytes[i] {
                quote @ (b'\'' | b'"') => {
                    i += 1;
                    while i < bytes.len() && bytes[i] != quote {
                        i += if bytes[i] == b'\\' { 2 } else { 1 };
                    }
                    i += 1;
                    continue;
                }
                b'(' | b'[' | b'{' => {
                    self.balance += 1;
                    self.levels.push(Level::default());
                }
                b')' | b']' | b'}' => {
                    self.balance -= 1;
                    if self.levels.len() > 1 {
                        let inner = self.levels.pop().unwrap_or_default();
                        self.top().current += inner.current.max(inner.deepest) + 1;
                    }
                }
                b',' | b':' => {
                    let top = self.top();
                    top.deepest = top.deepest.max(top.current);
                    top.current = 0;
                }
                b'|' | b'.' | b'+' | b'-' | b'*' | b'/' | b'%' | b'~' | b'<' | b'>' | b'='
                | b'!' => self.top().current += 1,
                c if c.is_ascii_alphabetic() || c == b'_' => {
                    let word_end = bytes[i..]
                        .iter()
                        .position(|c| !(c.is_ascii_alphanumeric() || *c == b'_'))
                        .map_or(bytes.len(), |n| i + n);
                    if WORD_OPERATORS
                        .iter()
                        .any(|w| w.as_bytes() == &bytes[i..word_end])
                    {
                        self.top().current += 1;
                    }
                    if self.depth() > MAX_DEPTH {
                        return Err(i);
                    }
                    i = word_end;
                    continue;
                }
                _ => {}
            }
            if self.depth() > MAX_DEPTH {
                return Err(i);
            }
            i += 1;
        }
        Ok(bytes.len())
    }
}

/// The first word of a tag (after whitespace control and spaces).
fn first_word(tag: &[u8]) -> &[u8] {
    let start = tag
        .iter()
        .position(|c| !matches!(c, b'-' | b'+') && !c.is_ascii_whitespace())
        .unwrap_or(tag.len());
    let rest = &tag[start..];
    let len = rest
        .iter()
        .position(|c| !c.is_ascii_alphanumeric() && *c != b'_')
        .unwrap_or(rest.len());
    &rest[..len]
}

/// The offset after the `{% endraw %}` that ends a raw block begun before `from`.
fn end_of_raw(bytes: &[u8], from: usize) -> usize {
    let mut i = from;
    while let Some(open) = find(bytes, i, b"{%") {
        let tag_end = find(bytes, open + 2, b"%}").unwrap_or(bytes.len());
        if first_word(&bytes[open + 2..tag_end]) == b"endraw" {
            return (tag_end + 2).min(bytes.len());
        }
        i = open + 2;
    }
    bytes.len()
}

fn find(bytes: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    bytes
        .get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| from + p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_templates_nest_shallowly() {
        for t in crate::templates::TEMPLATES {
            assert_eq!(too_deep(t.source), None, "{}", t.name);
        }
    }

    #[test]
    fn every_unguarded_chain_is_refused_where_it_passes_the_limit() {
        let n = 50_000;
        for template in [
            format!("{{{{ {}true }}}}", "not ".repeat(n)),
            format!("{{{{ {}1 }}}}", "-".repeat(n)),
            format!("{{{{ 'x'{} }}}}", "|lower".repeat(n)),
            format!("{{{{ 1{} }}}}", "+1".repeat(n)),
            format!("{{{{ a{} }}}}", ".b".repeat(n)),
            format!("{{% set x = {}1{} %}}", "(not ".repeat(n), ")".repeat(n)),
            format!(
                "text {{# {} #}} {{{{ {}x }}}}",
                "|".repeat(10),
                "not ".repeat(300)
            ),
        ] {
            let at = too_deep(&template).expect("refused");
            assert!(at < 2_000, "found early, at {at}");
        }
    }

    #[test]
    fn what_is_not_an_expression_does_not_count() {
        let n = 10_000;
        for template in [
            // Text, comments, strings and raw blocks hold no operators.
            "|".repeat(n),
            format!("{{# {} #}}", "not ".repeat(n)),
            format!("{{{{ '{}' ~ \"{}\" }}}}", "|".repeat(n), "\\\"-".repeat(n)),
            format!("{{% raw %}}{{{{ {}x }}}}{{% endraw %}}", "not ".repeat(n)),
            // A long flat list, and many short tags.
            format!("{{% set l = [{}] %}}", "x|lower, ".repeat(n)),
            "{{ a|b|c }}".repeat(n),
            // Words that contain an operator's name.
            format!("{{{{ {} }}}}", "nothing ".repeat(n)),
        ] {
            assert_eq!(too_deep(&template), None, "{}", &template[..40]);
        }
        let just = format!("{{{{ {}x }}}}", "not ".repeat(MAX_DEPTH));
        assert_eq!(too_deep(&just), None);
        let over = format!("{{{{ {}x }}}}", "not ".repeat(MAX_DEPTH + 1));
        assert!(too_deep(&over).is_some());
    }
}
