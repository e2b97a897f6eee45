//! Finding allocations: by address (`b7f4…_3` as MemoryViz names them, a hex prefix, `0x…`), by size
//! (`>100MB`, `<=4KiB`, `1.0 GiB`), by category, and by text in any frame of their stack, their
//! `compile_context` or `user_metadata`.

use std::collections::HashMap;

use super::lifetimes::{Allocation, Lifetimes};
use super::stacks::{frame_text, with_slashes};
use crate::batch::Pause;
use crate::format::parse_size;
use crate::model::{Snapshot, StackId};

/// A parsed query.
#[derive(Debug, Clone, PartialEq)]
pub enum Query {
    /// `b7f3a…_3`, `0x7f3a…` or a hex prefix of an address (at least 4 hex digits with a letter, or
    /// `0x`): allocations whose name or address starts with it.
    Address { hex: String, version: Option<u32> },
    /// A size comparison; `=` matches what shows as the same size (`1.0 GiB`), or exact bytes.
    Size {
        op: Op,
        bytes: u64,
        shown: Option<String>,
    },
    /// Case-insensitive text in a frame (`file:line:function`), the category, compile_context or
    /// user_metadata.
    Text(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Less,
    LessEq,
    Greater,
    GreaterEq,
    Equal,
}

/// Reads a query; `None` for an empty one.
pub fn parse(query: &str) -> Option<Query> {
    let q = query.trim();
    if q.is_empty() {
        return None;
    }
    for (prefix, op) in [
        (">=", Op::GreaterEq),
        ("<=", Op::LessEq),
        (">", Op::Greater),
        ("<", Op::Less),
        ("=", Op::Equal),
    ] {
        if let Some(rest) = q.strip_prefix(prefix) {
            let rest = rest.trim();
            let bytes = parse_size(rest)
                .map(|b| b.0)
                .or_else(|| rest.parse::<u64>().ok());
            if let Some(bytes) = bytes {
                return Some(Query::Size {
                    op,
                    bytes,
                    shown: None,
                });
            }
        }
    }
    if let Some((bytes, true)) = parse_size(q) {
        return Some(Query::Size {
            op: Op::Equal,
            bytes,
            shown: Some(crate::format::bytes(bytes)),
        });
    }
    let lower = q.to_ascii_lowercase();
    let hex_only = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_hexdigit());
    if let Some(hex) = lower.strip_prefix("0x").filter(|h| hex_only(h)) {
        return Some(Query::Address {
            hex: hex.trim_start_matches('0').to_string(),
            version: None,
        });
    }
    if let Some(name) = lower.strip_prefix('b') {
        let (hex, version) = match name.split_once('_') {
            Some((h, v)) => (h, v.parse().ok()),
            None => (name, None),
        };
        if hex_only(hex) && hex.len() >= 4 && (version.is_some() || name.split_once('_').is_none())
        {
            return Some(Query::Address {
                hex: hex.to_string(),
                version,
            });
        }
    }
    if hex_only(&lower) && lower.len() >= 6 && lower.chars().any(|c| c.is_ascii_alphabetic()) {
        return Some(Query::Address {
            hex: lower,
            version: None,
        });
    }
    Some(Query::Text(lower))
}

/// `table[id]` when known (0 unknown, 1 no, 2 yes), else `f()`, kept there.
fn memo(table: &mut [u8], id: u32, f: impl FnOnce() -> bool) -> bool {
    match table.get(id as usize).copied() {
        Some(known @ 1..=2) => known == 2,
        _ => {
            let hit = f();
            if let Some(k) = table.get_mut(id as usize) {
                *k = 1 + u8::from(hit);
            }
            hit
        }
    }
}

/// A hex prefix of an address as digits: `starts(addr)` is whether `{addr:x}` starts with it, without
/// formatting the address.
struct HexPrefix {
    /// `None`: no address shows as it (not hex, or longer than 16 digits).
    value: Option<u64>,
    digits: u32,
}

impl HexPrefix {
    fn of(hex: &str) -> HexPrefix {
        let hex = hex.to_ascii_lowercase();
        let value = (hex.len() <= 16 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
            .then(|| u64::from_str_radix(&hex, 16).ok())
            .flatten()
            .or((hex.is_empty()).then_some(0));
        HexPrefix {
            value,
            digits: hex.len() as u32,
        }
    }

    fn starts(&self, addr: u64) -> bool {
        let Some(value) = self.value else {
            return false;
        };
        if self.digits == 0 {
            return true;
        }
        let shown = (64 - addr.leading_zeros()).div_ceil(4).max(1);
        self.digits <= shown && addr >> (4 * (shown - self.digits)) == value
    }
}

/// The allocations of `lifetimes` that `query` finds (indices, ascending, each once). `categories`: each
/// allocation's category index and the names (text queries match them too).
pub fn search(
    snapshot: &Snapshot,
    lifetimes: &Lifetimes,
    categories: Option<(&[u16], &[String])>,
    query: &Query,
) -> Vec<u32> {
    crate::batch::run_ready(search_sliced(
        snapshot,
        lifetimes,
        categories,
        query,
        &mut crate::batch::NoPause,
    ))
}

/// [`search`], awaiting `pause` between batches of allocations.
pub async fn search_sliced(
    snapshot: &Snapshot,
    lifetimes: &Lifetimes,
    categories: Option<(&[u16], &[String])>,
    query: &Query,
    pause: &mut impl Pause,
) -> Vec<u32> {
    let mut matcher = Matcher::new(snapshot, lifetimes, categories, query);
    let mut found = Vec::new();
    crate::batch::ranges_paused(
        lifetimes.allocations.len(),
        |range| matcher.extend(range, &mut found),
        pause,
    )
    .await;
    found
}

/// What a query needs to judge allocations one by one; text queries remember what they have judged
/// (millions of allocations share a few thousand stacks).
struct Matcher<'a> {
    snapshot: &'a Snapshot,
    lifetimes: &'a Lifetimes,
    categories: Option<(&'a [u16], &'a [String])>,
    query: &'a Query,
    prefix: Option<HexPrefix>,
    /// Text queries: which category names equal the text.
    category_hit: Vec<bool>,
    /// Dense memo tables by id, 0 unknown, 1 no, 2 yes.
    by_stack: Vec<u8>,
    by_frame: Vec<u8>,
    by_str: HashMap<u32, bool>,
}

impl<'a> Matcher<'a> {
    fn new(
        snapshot: &'a Snapshot,
        lifetimes: &'a Lifetimes,
        categories: Option<(&'a [u16], &'a [String])>,
        query: &'a Query,
    ) -> Matcher<'a> {
        let text = match query {
            Query::Text(text) => Some(text),
            _ => None,
        };
        Matcher {
            snapshot,
            lifetimes,
            categories,
            query,
            prefix: match query {
                Query::Address { hex, .. } => Some(HexPrefix::of(hex)),
                _ => None,
            },
            category_hit: text
                .zip(categories)
                .map(|(text, (_, names))| {
                    names
                        .iter()
                        .map(|n| n.to_ascii_lowercase() == *text)
                        .collect()
                })
                .unwrap_or_default(),
            by_stack: text
                .map(|_| vec![0u8; snapshot.interner.stack_count()])
                .unwrap_or_default(),
            by_frame: text
                .map(|_| vec![0u8; snapshot.interner.frame_count()])
                .unwrap_or_default(),
            by_str: HashMap::new(),
        }
    }

    /// Appends the allocations in `range` that the query finds to `found`.
    fn extend(&mut self, range: std::ops::Range<usize>, found: &mut Vec<u32>) {
        let allocations = &self.lifetimes.allocations[range.clone()];
        for (i, a) in range.zip(allocations) {
            if self.finds(i, a) {
                found.push(i as u32);
            }
        }
    }

    fn finds(&mut self, i: usize, a: &Allocation) -> bool {
        match self.query {
            Query::Address { version, .. } => {
                self.prefix.as_ref().is_some_and(|p| p.starts(a.addr))
                    && version.is_none_or(|v| v == a.version)
            }
            Query::Size { op, bytes, shown } => match op {
                Op::Less => a.size < *bytes,
                Op::LessEq => a.size <= *bytes,
                Op::Greater => a.size > *bytes,
                Op::GreaterEq => a.size >= *bytes,
                Op::Equal => match shown {
                    // What shows as the same size lies within a twentieth of it: format only those.
                    Some(s) => {
                        a.size.abs_diff(*bytes) <= *bytes / 20 + 1
                            && crate::format::bytes(a.size) == *s
                    }
                    None => a.size == *bytes,
                },
            },
            Query::Text(text) => {
                if let Some((of, _)) = self.categories {
                    let category = of.get(i).map(|&c| c as usize);
                    if category.is_some_and(|c| self.category_hit.get(c).copied().unwrap_or(false))
                    {
                        return true;
                    }
                }
                self.stack_hit(text, a.stack) || self.entry_hit(text, a.alloc_event())
            }
        }
    }

    /// Whether a frame of the stack holds `text`, either separator matching either in paths
    /// (`cs336_basics/model.py` finds a frame recorded on Windows).
    fn stack_hit(&mut self, text: &str, id: StackId) -> bool {
        let snapshot = self.snapshot;
        let by_frame = &mut self.by_frame;
        let text = with_slashes(text);
        memo(&mut self.by_stack, id.0, || {
            snapshot.stack(id).iter().any(|&f| {
                memo(by_frame, f.0, || {
                    let frame = frame_text(snapshot, snapshot.frame(f)).to_ascii_lowercase();
                    with_slashes(&frame).contains(&*text)
                })
            })
        })
    }

    /// Whether the entry's compile_context or user_metadata holds `text`.
    fn entry_hit(&mut self, text: &str, entry: Option<u32>) -> bool {
        let trace = self.snapshot.trace(self.lifetimes.device);
        let Some(e) = entry.map(|e| e as usize).filter(|&e| e < trace.len()) else {
            return false;
        };
        let snapshot = self.snapshot;
        [trace.compile_context[e], trace.user_metadata[e]]
            .into_iter()
            .filter(|&id| id != crate::model::NONE_ID)
            .any(|id| {
                *self.by_str.entry(id).or_insert_with(|| {
                    snapshot
                        .str(crate::model::StrId(id))
                        .to_ascii_lowercase()
                        .contains(text)
                })
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hex_prefix_matches_as_the_formatted_address_would() {
        let addrs = [
            0u64,
            1,
            0xf,
            0x10,
            0x7f3a_2c00_0000,
            0x7f3a_2c00_0001,
            u64::MAX,
            1 << 63,
        ];
        for prefix in [
            "",
            "0",
            "7",
            "7f",
            "7f3a2c",
            "7f3a2c000000",
            "7f3a2c0000001",
            "f",
            "ff",
            "1",
            "10",
            "8",
            "800000000000000",
            "ffffffffffffffff",
            "1ffffffffffffffff",
            "zz",
            "7F3A",
        ] {
            let p = HexPrefix::of(prefix);
            for a in addrs {
                let want = format!("{a:x}").starts_with(&prefix.to_ascii_lowercase())
                    && prefix.bytes().all(|b| b.is_ascii_hexdigit());
                assert_eq!(p.starts(a), want, "{prefix} {a:x}");
            }
        }
    }

    #[test]
    fn queries_are_read_as_addresses_sizes_or_text() {
        assert_eq!(
            parse(">100MB"),
            Some(Query::Size {
                op: Op::Greater,
                bytes: 100 << 20,
                shown: None
            })
        );
        assert_eq!(
            parse("<= 4KiB"),
            Some(Query::Size {
                op: Op::LessEq,
                bytes: 4096,
                shown: None
            })
        );
        assert_eq!(
            parse("1.0 GiB"),
            Some(Query::Size {
                op: Op::Equal,
                bytes: 1 << 30,
                shown: Some("1.0 GiB".into())
            })
        );
        assert_eq!(
            parse("b7f3a2c000000_3"),
            Some(Query::Address {
                hex: "7f3a2c000000".into(),
                version: Some(3)
            })
        );
        assert_eq!(
            parse("0x7F3A2"),
            Some(Query::Address {
                hex: "7f3a2".into(),
                version: None
            })
        );
        assert_eq!(
            parse("7f3a2c"),
            Some(Query::Address {
                hex: "7f3a2c".into(),
                version: None
            })
        );
        assert_eq!(
            parse("models.py:174"),
            Some(Query::Text("models.py:174".into()))
        );
        assert_eq!(parse("backward"), Some(Query::Text("backward".into())));
        assert_eq!(parse("  "), None);
    }
}
