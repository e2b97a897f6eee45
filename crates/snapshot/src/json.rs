//! Snapshots saved as JSON (the same dict `_dump_snapshot` pickles, as MemoryViz also accepts it).
//!
//! The JSON is translated into the pickle opcodes CPython would write for the same dict (protocol 4,
//! containers filled in batches of 1000), and that runs through the one pickle machine: the same model,
//! the same specialisation and the same safety limits, with no second reader to keep in step. Integers
//! are exact up to 64 bits (and beyond, as the machine reads them); the translation never recurses.

use crate::error::ReadError;
use crate::pickle::opcodes::*;

/// Nesting deeper than this is refused (the machine's own limit on marks is 4096).
const MAX_DEPTH: usize = 4000;
/// Items per APPENDS/SETITEMS, as CPython's pickler writes them.
const BATCH: usize = 1000;

/// How many of the first bytes decide between JSON and a pickle: both readers decide on exactly these,
/// so they agree whatever the pieces (a JSON text with more leading whitespace reads as no pickle).
pub(crate) const DECIDING: usize = 64;

/// Whether the input's first bytes start a JSON object or array (within [`DECIDING`] bytes).
pub(crate) fn looks_like_json(head: &[u8]) -> bool {
    let head = &head[..head.len().min(DECIDING)];
    let head = head.strip_prefix(b"\xef\xbb\xbf").unwrap_or(head);
    matches!(
        head.iter().find(|b| !b.is_ascii_whitespace()),
        Some(b'{') | Some(b'[')
    )
}

/// Whether fewer than [`DECIDING`] bytes have come and they do not decide yet (only whitespace, or the
/// start of a byte-order mark).
pub(crate) fn undecided(head: &[u8]) -> bool {
    if head.len() >= DECIDING {
        return false;
    }
    let bom = b"\xef\xbb\xbf";
    let rest = head.strip_prefix(bom).unwrap_or(head);
    (head.len() < 3 && bom.starts_with(head)) || rest.iter().all(|b| b.is_ascii_whitespace())
}

#[derive(Clone, Copy, PartialEq)]
enum Expect {
    /// A value (the top level, after `:` or after `,` in an array).
    Value,
    /// A value or `]` (right after `[`).
    ValueOrEnd,
    /// A key or `}` (right after `{`).
    KeyOrEnd,
    /// A key (after `,` in an object).
    Key,
    Colon,
    /// `,` or the end of the container.
    CommaOrEnd,
}

struct Container {
    dict: bool,
    /// Items (pairs, in a dict) in the current batch.
    batch: usize,
}

/// The pickle CPython would write for the JSON value in `json`; errors name the JSON byte offset.
pub(crate) fn to_pickle(json: &[u8]) -> Result<Vec<u8>, ReadError> {
    let mut out = Vec::with_capacity(json.len());
    out.extend_from_slice(&[PROTO, 4]);
    let mut stack: Vec<Container> = Vec::new();
    let mut expect = Expect::Value;
    let mut i = json.strip_prefix(b"\xef\xbb\xbf").map_or(0, |_| 3);
    let err = |reason: &str, at: usize| ReadError::Json {
        reason: reason.to_string(),
        offset: at as u64,
    };
    loop {
        while i < json.len() && json[i].is_ascii_whitespace() {
            i += 1;
        }
        let Some(&c) = json.get(i) else {
            return Err(err("unexpected end of the JSON text", i));
        };
        match expect {
            Expect::Colon => {
                if c != b':' {
                    return Err(err("expected ':'", i));
                }
                i += 1;
                expect = Expect::Value;
                continue;
            }
            Expect::CommaOrEnd => {
                let top = stack.last().expect("inside a container");
                match (c, top.dict) {
                    (b',', dict) => {
                        i += 1;
                        expect = if dict { Expect::Key } else { Expect::Value };
                    }
                    (b']', false) | (b'}', true) => {
                        i += 1;
                        match close(&mut out, &mut stack) {
                            Some(next) => expect = next,
                            None => break,
                        }
                    }
                    _ => return Err(err("expected ',' or the end of the container", i)),
                }
                continue;
            }
            Expect::KeyOrEnd | Expect::Key => {
                if c == b'}' && expect == Expect::KeyOrEnd {
                    i += 1;
                    match close(&mut out, &mut stack) {
                        Some(next) => expect = next,
                        None => break,
                    }
                    continue;
                }
                if c != b'"' {
                    return Err(err("expected a string key", i));
                }
                i = string(json, i, &mut out)?;
                expect = Expect::Colon;
                continue;
            }
            Expect::ValueOrEnd if c == b']' => {
                i += 1;
                match close(&mut out, &mut stack) {
                    Some(next) => expect = next,
                    None => break,
                }
                continue;
            }
            Expect::Value | Expect::ValueOrEnd => {}
        }
        // A value.
        match c {
            b'{' | b'[' => {
                if stack.len() >= MAX_DEPTH {
                    return Err(err("nesting deeper than 4000 levels", i));
                }
                let dict = c == b'{';
                out.push(if dict { EMPTY_DICT } else { EMPTY_LIST });
                out.push(MARK);
                stack.push(Container { dict, batch: 0 });
                expect = if dict {
                    Expect::KeyOrEnd
                } else {
                    Expect::ValueOrEnd
                };
                i += 1;
                continue;
            }
            b'"' => i = string(json, i, &mut out)?,
            b't' | b'f' | b'n' => {
                let (word, op): (&[u8], u8) = match c {
                    b't' => (b"true", NEWTRUE),
                    b'f' => (b"false", NEWFALSE),
                    _ => (b"null", NONE),
                };
                if !json[i..].starts_with(word) {
                    return Err(err("unknown literal", i));
                }
                out.push(op);
                i += word.len();
            }
            b'-' | b'0'..=b'9' => i = number(json, i, &mut out)?,
            _ => return Err(err("expected a value", i)),
        }
        if stack.is_empty() {
            break;
        }
        expect = after_value(&mut out, &mut stack);
    }
    while i < json.len() && json[i].is_ascii_whitespace() {
        i += 1;
    }
    if i < json.len() {
        return Err(err("more data after the JSON value", i));
    }
    out.push(STOP);
    Ok(out)
}

/// One more item in the innermost container: a full batch is flushed as CPython does.
fn after_value(out: &mut Vec<u8>, stack: &mut [Container]) -> Expect {
    let top = stack.last_mut().expect("inside a container");
    top.batch += 1;
    if top.batch == BATCH {
        out.push(if top.dict { SETITEMS } else { APPENDS });
        out.push(MARK);
        top.batch = 0;
    }
    Expect::CommaOrEnd
}

/// Ends the innermost container; what comes next, or `None` when it was the top-level value.
fn close(out: &mut Vec<u8>, stack: &mut Vec<Container>) -> Option<Expect> {
    let top = stack.pop().expect("inside a container");
    out.push(if top.dict { SETITEMS } else { APPENDS });
    (!stack.is_empty()).then(|| after_value(out, stack))
}

/// The string starting at the quote `json[at]`, as SHORT_BINUNICODE/BINUNICODE; returns the offset
/// after its closing quote.
fn string(json: &[u8], at: usize, out: &mut Vec<u8>) -> Result<usize, ReadError> {
    let err = |reason: &str, i: usize| ReadError::Json {
        reason: reason.to_string(),
        offset: i as u64,
    };
    let mut text: Vec<u8> = Vec::new();
    let mut i = at + 1;
    loop {
        // The plain run up to the next quote or backslash is copied as it is.
        let run = json[i..]
            .iter()
            .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
            .ok_or_else(|| err("unterminated string", at))?;
        text.extend_from_slice(&json[i..i + run]);
        i += run;
        match json[i] {
            b'"' => {
                i += 1;
                break;
            }
            b'\\' => {
                let Some(&e) = json.get(i + 1) else {
                    return Err(err("unterminated string", at));
                };
                i += 2;
                match e {
                    b'"' => text.push(b'"'),
                    b'\\' => text.push(b'\\'),
                    b'/' => text.push(b'/'),
                    b'b' => text.push(8),
                    b'f' => text.push(12),
                    b'n' => text.push(b'\n'),
                    b'r' => text.push(b'\r'),
                    b't' => text.push(b'\t'),
                    b'u' => {
                        let (c, next) = unicode_escape(json, i - 2)?;
                        let mut buf = [0u8; 4];
                        text.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                        i = next;
                    }
                    _ => return Err(err("bad escape in a string", i - 2)),
                }
            }
            _ => return Err(err("control character in a string", i)),
        }
    }
    if std::str::from_utf8(&text).is_err() {
        return Err(err("a string that is not UTF-8", at));
    }
    match u8::try_from(text.len()) {
        Ok(n) => out.extend_from_slice(&[SHORT_BINUNICODE, n]),
        Err(_) => {
            let n = u32::try_from(text.len()).map_err(|_| err("a string over 4 GiB", at))?;
            out.push(BINUNICODE);
            out.extend_from_slice(&n.to_le_bytes());
        }
    }
    out.extend_from_slice(&text);
    Ok(i)
}

/// `\uXXXX` at `json[at]` (a surrogate pair takes two): the character and the offset after it.
fn unicode_escape(json: &[u8], at: usize) -> Result<(char, usize), ReadError> {
    let err = || ReadError::Json {
        reason: "bad \\u escape in a string".to_string(),
        offset: at as u64,
    };
    let hex = |k: usize| -> Result<u32, ReadError> {
        let digits = json.get(k..k + 4).ok_or_else(err)?;
        let text = std::str::from_utf8(digits).map_err(|_| err())?;
        u32::from_str_radix(text, 16).map_err(|_| err())
    };
    let hi = hex(at + 2)?;
    if (0xD800..0xDC00).contains(&hi) {
        if json.get(at + 6..at + 8) != Some(b"\\u") {
            return Err(err());
        }
        let lo = hex(at + 8)?;
        if !(0xDC00..0xE000).contains(&lo) {
            return Err(err());
        }
        let c = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
        return Ok((char::from_u32(c).ok_or_else(err)?, at + 12));
    }
    Ok((char::from_u32(hi).ok_or_else(err)?, at + 6))
}

/// The number at `json[at]`: an integer exactly (BININT or LONG1), anything else as a float.
fn number(json: &[u8], at: usize, out: &mut Vec<u8>) -> Result<usize, ReadError> {
    let end = at
        + json[at..]
            .iter()
            .position(|b| !matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
            .unwrap_or(json.len() - at);
    let text = std::str::from_utf8(&json[at..end]).expect("ASCII");
    let bad = || ReadError::Json {
        reason: format!("bad number '{text}'"),
        offset: at as u64,
    };
    let digits = text.strip_prefix('-').unwrap_or(text);
    let integer = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
    if integer {
        if digits.len() > 1 && digits.starts_with('0') {
            return Err(bad());
        }
        let v: i128 = text.parse().map_err(|_| bad())?;
        if let Ok(small) = i32::try_from(v) {
            out.push(BININT);
            out.extend_from_slice(&small.to_le_bytes());
        } else {
            // Two's complement, little-endian, as few bytes as hold the sign (as CPython's LONG1).
            let bytes = v.to_le_bytes();
            let mut n = 16;
            while n > 1 {
                let top = bytes[n - 1];
                let below = bytes[n - 2];
                if (top == 0 && below & 0x80 == 0) || (top == 0xff && below & 0x80 != 0) {
                    n -= 1;
                } else {
                    break;
                }
            }
            out.extend_from_slice(&[LONG1, n as u8]);
            out.extend_from_slice(&bytes[..n]);
        }
        return Ok(end);
    }
    let v: f64 = text.parse().map_err(|_| bad())?;
    out.push(BINFLOAT);
    out.extend_from_slice(&v.to_be_bytes());
    Ok(end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_reads_as_the_same_pickle_would() {
        let json = br#" {"segments": [], "device_traces": [[{"action": "alloc", "addr": 18446744073709547520,
            "size": 512, "stream": 0, "frames": [{"filename": "t\u00e9st.py", "line": 3, "name": "f"}]}]],
            "allocator_settings": {"x": -1.5e3, "y": null, "z": [true, false]}} "#;
        let pickle = to_pickle(json).unwrap();
        let s = crate::read_bytes(&pickle).unwrap();
        let t = s.trace(0);
        assert_eq!(t.addr[0], u64::MAX - 4095);
        assert_eq!(t.size[0], 512);
        let frame = s.interner.frame(s.interner.stack(t.stack[0])[0]);
        assert_eq!(s.str(frame.filename), "tést.py");
    }

    #[test]
    fn big_containers_go_in_batches_and_integers_stay_exact() {
        let values: Vec<i128> = (0..2500)
            .map(|k| k as i128 * 1_000_003 - (1 << 40) + if k == 7 { 1 << 70 } else { 0 })
            .collect();
        let items: Vec<String> = values.iter().map(|v| v.to_string()).collect();
        let json = format!(
            r#"{{"segments": [], "allocator_settings": {{"v": [{}]}}}}"#,
            items.join(",")
        );
        let s = crate::read_bytes(&to_pickle(json.as_bytes()).unwrap()).unwrap();
        let Some(crate::PyValue::Dict(pairs)) = &s.allocator_settings else {
            panic!("{:?}", s.allocator_settings)
        };
        let crate::PyValue::List(got) = &pairs[0].1 else {
            panic!("{:?}", pairs[0].1)
        };
        let got: Vec<i128> = got
            .iter()
            .map(|v| match v {
                crate::PyValue::Int(i) => *i,
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(got, values);
    }

    #[test]
    fn broken_json_names_what_and_where() {
        for (text, what, at) in [
            (&b"{\"a\": }"[..], "expected a value", 6),
            (b"[1, 2", "unexpected end", 5),
            (b"{\"a\" 1}", "expected ':'", 5),
            (b"[01]", "bad number", 1),
            (b"[\"\\x\"]", "bad escape", 2),
            (b"[1] [2]", "more data after", 4),
            (b"[\"\\ud800\"]", "bad \\u escape", 2),
        ] {
            match to_pickle(text) {
                Err(ReadError::Json { reason, offset }) => {
                    assert!(reason.contains(what), "{reason}");
                    assert_eq!(offset, at, "{reason}");
                }
                other => panic!("{other:?}"),
            }
        }
        let deep = "[".repeat(5000);
        assert!(to_pickle(deep.as_bytes()).is_err());
    }
}
