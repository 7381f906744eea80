//! Small rules of English that generated prose needs.
//!
//! Takes: a phrase. Returns: the phrase with its indefinite article ("an API key",
//! "a connector token", "an AssemblyAI token"). The rule reads the spelling, so it can
//! be wrong for words whose sound the spelling hides ("an hour" reads as "a hour"); it
//! is right for the names and acronyms connector prose meets.

/// "a" or "an", then the phrase.
pub fn with_article(phrase: &str) -> String {
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

#[cfg(test)]
mod tests {
    use super::with_article;

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
