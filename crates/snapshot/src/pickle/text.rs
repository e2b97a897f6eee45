//! Protocol 0's text literals: integers, memo indices, Python string literals (`STRING`) and
//! raw-unicode-escaped text (`UNICODE`).

use super::{LeInt, Value};
use crate::error::ReadError;

pub(super) fn parse_text_usize(line: &[u8], at: u64) -> Result<usize, ReadError> {
    std::str::from_utf8(line)
        .ok()
        .and_then(|s| s.trim().parse::<usize>().ok())
        .ok_or_else(|| ReadError::malformed("bad memo index text", at))
}

pub(super) fn parse_text_int(text: &[u8], at: u64) -> Result<LeInt, ReadError> {
    let s = std::str::from_utf8(text)
        .map_err(|_| ReadError::malformed("bad INT text", at))?
        .trim();
    if let Ok(i) = s.parse::<i64>() {
        return Ok(LeInt::Small(Value::Int(i)));
    }
    if let Ok(u) = s.parse::<u64>() {
        return Ok(LeInt::Small(Value::U64(u)));
    }
    if let Ok(w) = s.parse::<i128>() {
        return Ok(LeInt::Wide(w));
    }
    s.parse::<f64>()
        .ok()
        .filter(|_| {
            s.bytes()
                .all(|b| b.is_ascii_digit() || b == b'-' || b == b'+')
        })
        .map(|f| LeInt::Small(Value::Big(f)))
        .ok_or_else(|| ReadError::malformed("bad INT text", at))
}

/// Decode a protocol-0 `STRING` argument: a quoted Python 2 string literal with backslash escapes.
pub(super) fn python_string_literal(line: &[u8]) -> Option<Vec<u8>> {
    let (&q, rest) = line.split_first()?;
    if (q != b'\'' && q != b'"') || rest.last() != Some(&q) {
        return None;
    }
    let body = &rest[..rest.len() - 1];
    let mut out = Vec::with_capacity(body.len());
    let mut i = 0;
    while i < body.len() {
        let b = body[i];
        if b != b'\\' || i + 1 == body.len() {
            out.push(b);
            i += 1;
            continue;
        }
        let e = body[i + 1];
        i += 2;
        match e {
            b'n' => out.push(b'\n'),
            b't' => out.push(b'\t'),
            b'r' => out.push(b'\r'),
            b'\\' => out.push(b'\\'),
            b'\'' => out.push(b'\''),
            b'"' => out.push(b'"'),
            b'0'..=b'7' => {
                let mut v = (e - b'0') as u32;
                let mut k = 0;
                while k < 2 && i < body.len() && (b'0'..=b'7').contains(&body[i]) {
                    v = v * 8 + (body[i] - b'0') as u32;
                    i += 1;
                    k += 1;
                }
                out.push(v as u8);
            }
            b'x' if i + 2 <= body.len() => {
                let h = std::str::from_utf8(&body[i..i + 2]).ok()?;
                out.push(u8::from_str_radix(h, 16).ok()?);
                i += 2;
            }
            other => {
                out.push(b'\\');
                out.push(other);
            }
        }
    }
    Some(out)
}

/// Decode a protocol-0 `UNICODE` argument: raw-unicode-escape, where bytes stand for Latin-1 characters
/// and only `\uXXXX` and `\UXXXXXXXX` are escapes.
pub(super) fn raw_unicode_unescape(line: &[u8]) -> String {
    let text: String = line.iter().map(|&b| b as char).collect();
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            let width = match chars.peek() {
                Some('u') => 4,
                Some('U') => 8,
                _ => 0,
            };
            if width > 0 {
                let ahead: String = chars.clone().skip(1).take(width).collect();
                if ahead.len() == width {
                    if let Some(ch) = u32::from_str_radix(&ahead, 16)
                        .ok()
                        .and_then(char::from_u32)
                    {
                        out.push(ch);
                        for _ in 0..=width {
                            chars.next();
                        }
                        continue;
                    }
                }
            }
        }
        out.push(c);
    }
    out
}
