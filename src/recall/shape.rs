//! What shape of answer a question asks for. A question that gathers a
//! list ("what activities does Melanie partake in?", "where has Melanie
//! camped?") is answered by many things one person said across many
//! memories, few of which share a word with it; a question about one
//! event ("what did Melanie realize after the race?") by one place that
//! does. Pure: words in, a shape out.

/// The shape of answer a question asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// One thing: an event, a fact, a time.
    One,
    /// A list gathered from many places: what someone does, has done,
    /// likes, owns.
    List,
}

/// Whether `question` asks for a list: a habit or a tally in the present
/// or present perfect ("what does X like", "where has X camped", "what
/// books have they read"), or a plural after its question word ("what
/// activities …", "which cities …"). A past-simple question ("what did X
/// …") asks about one event.
pub fn of(question: &str) -> Shape {
    let words: Vec<String> = question
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let head = &words[..words.len().min(4)];
    if head
        .iter()
        .take(3)
        .any(|w| w == "did" || w == "was" || w == "were")
    {
        return Shape::One;
    }
    let tally = head
        .iter()
        .any(|w| matches!(w.as_str(), "has" | "have" | "does" | "do"));
    let plural = matches!(words.first().map(String::as_str), Some("what" | "which"))
        && words.get(1).is_some_and(|w| plural_noun(w));
    if tally || plural {
        Shape::List
    } else {
        Shape::One
    }
}

/// A plural noun, as a question's second word: ends in `s` and is not a
/// verb or pronoun that does.
fn plural_noun(word: &str) -> bool {
    word.len() > 3
        && word.ends_with('s')
        && !word.ends_with("ss")
        && !word.ends_with('\'')
        && !matches!(
            word,
            "does" | "was" | "has" | "is" | "this" | "his" | "hers" | "its"
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_and_single_events_are_told_apart() {
        for q in [
            "What activities does Melanie partake in?",
            "Where has Melanie camped?",
            "What books has Melanie read?",
            "What do Melanie's kids like?",
            "Which cities has Jon visited?",
        ] {
            assert_eq!(of(q), Shape::List, "{q}");
        }
        for q in [
            "What did Caroline realize after her charity race?",
            "When did Melanie paint a sunrise?",
            "What is Caroline's identity?",
            "Was the race in May?",
            "",
        ] {
            assert_eq!(of(q), Shape::One, "{q}");
        }
    }
}
