//! Small rules of English that generated prose needs.
//!
//! Takes: a phrase or a description. Returns: the phrase with its indefinite article
//! ("an API key", "a connector token", "an AssemblyAI token"); whether a text says what a
//! call will not do, and which of its sentences says it. The article rule reads the
//! spelling, so it can be wrong for words whose sound the spelling hides ("an hour"
//! reads as "a hour"); it is right for the names and acronyms connector prose meets.

/// "a" or "an", then the phrase.
pub(crate) fn with_article(phrase: &str) -> String {
    format!("{} {phrase}", article(phrase))
}

fn article(phrase: &str) -> &'static str {
    let word = phrase.split_whitespace().next().unwrap_or_default();
    let Some(first) = word.chars().next() else {
        return "a";
    };
    let letters: Vec<char> = word.chars().filter(|c| c.is_alphabetic()).collect();
    let acronym = letters.len() > 1 && letters.iter().all(|c| c.is_uppercase());
    if acronym {
        // Letter names: "an API", "an HTTP", "an SDK", "a URL".
        return if "AEFHILMNORSX".contains(first) {
            "an"
        } else {
            "a"
        };
    }
    let lower = word.to_lowercase();
    let vowel_sound = match lower.chars().next() {
        Some('a' | 'e' | 'i' | 'o') => true,
        Some('u') => !["uni", "use", "usu", "uti", "ure", "ura", "uro"]
            .iter()
            .any(|p| lower.starts_with(p)),
        _ => false,
    };
    if vowel_sound { "an" } else { "a" }
}

/// Words that bound what a call does ("Read-only", "cannot", "does not", "never", "only",
/// "changes nothing", "costs nothing", …).
const LIMIT_WORDS: [&str; 16] = [
    "read-only",
    "read only",
    "cannot",
    "can't",
    "can not",
    "does not",
    "doesn't",
    "do not",
    "never",
    "only",
    "will not",
    "won't",
    // "Changes nothing." and "It costs nothing." bound the call as plainly as "cannot".
    "changes nothing",
    "change nothing",
    "costs nothing",
    "cost nothing",
];

/// Whether the text bounds what the call does ("Read-only", "cannot", "does not", …),
/// matching whole words only: "only" must not match "commonly".
pub(crate) fn states_limit(description: &str) -> bool {
    let lower = description.to_lowercase();
    // One pass over the text, trying the words only where a word starts, rather than a
    // substring search per word (16 searchers built for each of 10,000 descriptions were
    // 60 M instructions of a build). The same answer: every limit word starts and ends
    // with a letter and none overlaps itself, so its whole-word occurrences are exactly
    // those at a word start with no letter or digit after.
    let mut before: Option<char> = None;
    for (i, c) in lower.char_indices() {
        let at_word_start = !before.is_some_and(char::is_alphanumeric);
        before = Some(c);
        if !at_word_start || !matches!(c, 'c' | 'd' | 'n' | 'o' | 'r' | 'w') {
            continue;
        }
        let rest = &lower[i..];
        if LIMIT_WORDS.iter().any(|w| {
            rest.starts_with(w)
                && !rest[w.len()..]
                    .chars()
                    .next()
                    .is_some_and(char::is_alphanumeric)
        }) {
            return true;
        }
    }
    false
}

/// The text split into sentences (each with its closing punctuation and no surrounding
/// space): at `.`, `!` or `?` followed by whitespace.
pub(crate) fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let bytes = text.as_bytes();
    for (i, c) in text.char_indices() {
        if matches!(c, '.' | '!' | '?') && bytes.get(i + 1).is_some_and(u8::is_ascii_whitespace) {
            let sentence = text[start..=i].trim();
            if !sentence.is_empty() {
                out.push(sentence);
            }
            start = i + 1;
        }
    }
    let rest = text[start..].trim();
    if !rest.is_empty() {
        out.push(rest);
    }
    out
}

/// "1 error", "2 errors": `n` with the noun that agrees with it.
pub fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// At most `max` characters: whole sentences if they fit, else whole words, with "…".
pub fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let budget = max.saturating_sub(1);
    let cut: String = text.chars().take(budget).collect();
    if let Some(end) = cut.rfind(". ").filter(|&i| i >= budget / 2) {
        return cut[..=end].to_string();
    }
    let words = match cut.rfind(char::is_whitespace) {
        Some(i) if i > 0 => &cut[..i],
        _ => cut.as_str(),
    };
    format!("{}…", words.trim_end_matches([',', ';', ':', ' ']))
}

#[cfg(test)]
mod tests {
    use super::{sentences, states_limit, with_article};

    #[test]
    fn limits_are_whole_words() {
        assert!(states_limit("Read-only. This cannot move funds."));
        assert!(states_limit("Returns tasks. Does not create them."));
        assert!(states_limit("Only lists."));
        assert!(!states_limit("Commonly used to list things."));
        assert!(!states_limit("Reads your balance."));
        assert!(states_limit("Returns the quote. Changes nothing."));
        assert!(states_limit("Lists voices; it costs nothing."));
        assert!(!states_limit("Costs nothingness."));
    }

    /// The one-pass reading gives the answer of a search per word, whole words only.
    #[test]
    fn limits_read_in_one_pass_as_by_a_search_per_word() {
        fn by_search(description: &str) -> bool {
            let lower = description.to_lowercase();
            super::LIMIT_WORDS.iter().any(|w| {
                lower.match_indices(w).any(|(i, _)| {
                    let before = lower[..i].chars().next_back();
                    let after = lower[i + w.len()..].chars().next();
                    !before.is_some_and(char::is_alphanumeric)
                        && !after.is_some_and(char::is_alphanumeric)
                })
            })
        }
        for w in super::LIMIT_WORDS {
            // The reasoning above, checked: letters at both ends, no self-overlap.
            assert!(w.starts_with(|c: char| c.is_ascii_lowercase()), "{w}");
            assert!(w.ends_with(|c: char| c.is_ascii_alphanumeric()), "{w}");
            assert!(
                (1..w.len())
                    .all(|k| !w.is_char_boundary(k) || !w[k..].starts_with(&w[..w.len() - k])),
                "{w}"
            );
            for text in [
                w.to_string(),
                format!("{w}."),
                format!("x{w}"),
                format!("{w}x"),
                format!("1{w}"),
                format!("{w}2"),
                format!("é{w}"),
                format!("{w}é"),
                format!("— {w} —"),
                format!("«{w}»"),
                format!("It {}; fine.", w.to_uppercase()),
                format!("{w}{w} {w}"),
                format!("İ{w} ß{w}"),
            ] {
                assert_eq!(states_limit(&text), by_search(&text), "{text:?}");
            }
        }
        for text in [
            "",
            " ",
            "Commonly only.",
            "unread-only",
            "Reads; cannot.",
            "ΩNEVER",
            "nevermore, never",
        ] {
            assert_eq!(states_limit(text), by_search(text), "{text:?}");
        }
    }

    #[test]
    fn sentences_split_at_stops() {
        assert_eq!(
            sentences("One two. Three? Four!  Five 1.5 six"),
            ["One two.", "Three?", "Four!", "Five 1.5 six"]
        );
        assert_eq!(sentences(""), Vec::<&str>::new());
    }

    #[test]
    fn articles_follow_the_sound() {
        for (phrase, expected) in [
            ("connector token", "a connector token"),
            ("API key", "an API key"),
            ("AssemblyAI token", "an AssemblyAI token"),
            ("HTTP token", "an HTTP token"),
            ("URL", "a URL"),
            ("umbrella", "an umbrella"),
            ("user token", "a user token"),
            ("VidGen connector token", "a VidGen connector token"),
            ("", "a "),
        ] {
            assert_eq!(with_article(phrase), expected);
        }
    }
}
