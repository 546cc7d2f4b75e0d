//! Runtime Boss memories (issue 18 item 16): titled notes the account's boss keeps across
//! conversations, one per (category, title). Search is by keywords over category, title and
//! body, the same on both backends (lowered LIKE, wildcards matched literally).

use crate::db::{ToValue, Value};
use crate::{Result, StoreError, Tx, args};
use serde::Serialize;
use serde_json::json;

/// One memory.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Memory {
    pub id: i64,
    pub category: String,
    pub title: String,
    pub body: String,
    pub created_at: i64,
    pub updated_at: i64,
}

/// What `memory_upsert` did.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum MemoryWrite {
    Created,
    Replaced,
}

/// At most this many keywords take part in one search; the rest are ignored.
pub const MAX_SEARCH_WORDS: usize = 8;

const COLUMNS: &str = "id, category, title, body, created_at, updated_at";

fn row(r: &crate::db::Row) -> Result<Memory> {
    Ok(Memory {
        id: r.get(0)?,
        category: r.get(1)?,
        title: r.get(2)?,
        body: r.get(3)?,
        created_at: r.get(4)?,
        updated_at: r.get(5)?,
    })
}

fn like_word(word: &str) -> String {
    let mut out = String::with_capacity(word.len() + 2);
    out.push('%');
    for c in word.to_lowercase().chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('%');
    out
}

/// The keywords of a query: whitespace-separated, lowered, deduplicated, at most
/// [`MAX_SEARCH_WORDS`].
pub fn search_words(query: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    for w in query.split_whitespace().map(str::to_lowercase) {
        if !words.contains(&w) {
            words.push(w);
        }
        if words.len() == MAX_SEARCH_WORDS {
            break;
        }
    }
    words
}

fn check_names(category: &str, title: &str) -> Result<()> {
    if category.trim().is_empty() {
        return Err(StoreError::Invalid("memory category is empty".into()));
    }
    if title.trim().is_empty() {
        return Err(StoreError::Invalid("memory title is empty".into()));
    }
    Ok(())
}

impl Tx<'_> {
    /// Write a memory: a new (category, title) is created, an existing one gets this body.
    pub fn memory_upsert(
        &mut self,
        category: &str,
        title: &str,
        body: &str,
    ) -> Result<(Memory, MemoryWrite)> {
        check_names(category, title)?;
        let outcome = match self.memory_by_title(category, title)? {
            Some(m) => {
                self.exec(
                    "UPDATE memories SET body = ?2, updated_at = ?3 WHERE id = ?1",
                    args![m.id, body, self.now],
                )?;
                MemoryWrite::Replaced
            }
            None => {
                self.insert(
                    "INSERT INTO memories (category, title, body, created_at, updated_at)
                     VALUES (?1, ?2, ?3, ?4, ?4)",
                    args![category, title, body, self.now],
                )?;
                MemoryWrite::Created
            }
        };
        let memory = self
            .memory_by_title(category, title)?
            .ok_or_else(|| StoreError::Corrupt("memory vanished after its write".into()))?;
        self.event(
            "memory_written",
            None,
            None,
            json!({"memory_id": memory.id, "category": category, "title": title}),
        )?;
        Ok((memory, outcome))
    }

    pub fn memory_by_title(&self, category: &str, title: &str) -> Result<Option<Memory>> {
        self.query_opt(
            &format!("SELECT {COLUMNS} FROM memories WHERE category = ?1 AND title = ?2"),
            args![category, title],
            row,
        )
    }

    pub fn memory(&self, id: i64) -> Result<Option<Memory>> {
        self.query_opt(
            &format!("SELECT {COLUMNS} FROM memories WHERE id = ?1"),
            args![id],
            row,
        )
    }

    /// Replace the first occurrence of `old` in a memory's body with `new`. `None`: no such
    /// memory. An `old` the body does not hold is refused, so an edit never silently does
    /// nothing.
    pub fn memory_edit(
        &mut self,
        category: &str,
        title: &str,
        old: &str,
        new: &str,
    ) -> Result<Option<Memory>> {
        let Some(m) = self.memory_by_title(category, title)? else {
            return Ok(None);
        };
        if old.is_empty() || !m.body.contains(old) {
            return Err(StoreError::Invalid(format!(
                "memory '{category}/{title}' does not contain the text to replace"
            )));
        }
        let body = m.body.replacen(old, new, 1);
        self.exec(
            "UPDATE memories SET body = ?2, updated_at = ?3 WHERE id = ?1",
            args![m.id, body, self.now],
        )?;
        self.event(
            "memory_written",
            None,
            None,
            json!({"memory_id": m.id, "category": category, "title": title}),
        )?;
        self.memory(m.id)
    }

    /// Memories matching any keyword of `words` in category, title or body, the ones
    /// matching most keywords first, then the most recently updated.
    pub fn memory_search(&self, words: &str, limit: u32) -> Result<Vec<Memory>> {
        let words = search_words(words);
        if words.is_empty() {
            return Ok(Vec::new());
        }
        let mut params: Vec<Value> = Vec::with_capacity(words.len());
        let mut clauses = Vec::with_capacity(words.len());
        for (i, w) in words.iter().enumerate() {
            let p = i + 1;
            clauses.push(format!(
                "(lower(category) LIKE ?{p} ESCAPE '\\' OR lower(title) LIKE ?{p} ESCAPE '\\' \
                 OR lower(body) LIKE ?{p} ESCAPE '\\')"
            ));
            params.push(like_word(w).to_value());
        }
        let sql = format!(
            "SELECT {COLUMNS} FROM memories WHERE {} ORDER BY updated_at DESC, id DESC",
            clauses.join(" OR ")
        );
        let mut found = self.query_all(&sql, &params, row)?;
        let hits = |m: &Memory| {
            let text = format!("{}\n{}\n{}", m.category, m.title, m.body).to_lowercase();
            words.iter().filter(|w| text.contains(w.as_str())).count()
        };
        // Stable: equal hit counts keep the recency order.
        found.sort_by_key(|m| std::cmp::Reverse(hits(m)));
        found.truncate(limit as usize);
        Ok(found)
    }

    /// Memories, most recently updated first.
    pub fn memory_list(&self, limit: u32) -> Result<Vec<Memory>> {
        self.query_all(
            &format!("SELECT {COLUMNS} FROM memories ORDER BY updated_at DESC, id DESC LIMIT ?1"),
            args![limit],
            row,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_words_are_lowered_deduplicated_and_capped() {
        assert_eq!(
            search_words("  Deploy deploy  NOTES "),
            vec!["deploy", "notes"]
        );
        let many = (0..20)
            .map(|i| format!("w{i}"))
            .collect::<Vec<_>>()
            .join(" ");
        assert_eq!(search_words(&many).len(), MAX_SEARCH_WORDS);
    }

    #[test]
    fn like_word_matches_wildcards_literally() {
        assert_eq!(like_word("5%_A"), "%5\\%\\_a%");
    }
}
