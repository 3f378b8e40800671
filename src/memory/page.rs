//! A long file shown a page at a time, as the `read` tool returns it. The
//! brake compares what a read returned with what the file's pages are now,
//! so both take them from here: a required file of any length can be read
//! whole, page by page (before, one over 100,000 characters showed only its
//! first part and kept the brake closed for good).

/// Characters on one page.
pub const PAGE_CHARS: usize = 100_000;

/// How many pages `text` takes (1 when it is empty).
pub fn count(text: &str) -> usize {
    text.chars().count().div_ceil(PAGE_CHARS).max(1)
}

/// Page `n` (1-based) of `text` (the file `rel`), as `read` returns it:
/// the whole text when it fits on one page; else the page's characters
/// and a last line that says which page this is and how to read on.
/// `None` past the last page.
pub fn page(rel: &str, text: &str, n: usize) -> Option<String> {
    let pages = count(text);
    if n == 0 || n > pages {
        return None;
    }
    if pages == 1 {
        return Some(text.to_string());
    }
    let chunk: String = text
        .chars()
        .skip((n - 1) * PAGE_CHARS)
        .take(PAGE_CHARS)
        .collect();
    let trailer = if n < pages {
        format!(
            "[… {rel}: page {n} of {pages}; read it with page = {} for what follows]",
            n + 1
        )
    } else {
        format!("[{rel}: page {n} of {pages}, the end]")
    };
    Some(format!("{chunk}\n{trailer}"))
}

/// Every page of `text`, in order.
pub fn all(rel: &str, text: &str) -> Vec<String> {
    (1..=count(text))
        .filter_map(|n| page(rel, text, n))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_file_is_one_page_as_it_is_and_a_long_one_reads_whole_in_pages() {
        assert_eq!(all("memory/a.md", "be kind"), ["be kind"]);
        assert_eq!(count(""), 1);
        let long: String = "é".repeat(PAGE_CHARS) + &"x".repeat(PAGE_CHARS) + "tail";
        let pages = all("memory/long.md", &long);
        assert_eq!(pages.len(), 3);
        assert!(pages[0].ends_with(
            "\n[… memory/long.md: page 1 of 3; read it with page = 2 for what follows]"
        ));
        assert!(pages[2].starts_with("tail\n[memory/long.md: page 3 of 3, the end]"));
        let joined: String = pages
            .iter()
            .map(|p| p.rsplit_once('\n').unwrap().0)
            .collect();
        assert_eq!(
            joined, long,
            "the pages hold the whole text, cut on characters"
        );
        assert_eq!(page("memory/long.md", &long, 4), None);
        assert_eq!(page("memory/long.md", &long, 0), None);
    }
}
