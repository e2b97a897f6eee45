//! What a share link carries: the view on screen, as the URL's hash (`#view=timeline&device=0&…`). The
//! address bar follows the view; opening a link (with `?url=`, or opening the same file) restores it.

/// The view state a link restores. Every field is optional: a link restores what it names.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ViewState {
    /// The file the view is of (its name and size), to restore only on that file.
    pub file: Option<(String, u64)>,
    pub device: Option<i64>,
    /// A view's key (`timeline`, `analysis`, `compare`, …).
    pub view: Option<String>,
    /// The visible range of trace entries and the byte axis's top.
    pub range: Option<(f64, f64, f64)>,
    /// The detail slider, 0–1.
    pub detail: Option<f64>,
    pub by_category: bool,
    /// The pinned allocation by MemoryViz's name (`b7f3a…_3`).
    pub pinned: Option<String>,
    /// The highlighted category's name.
    pub category: Option<String>,
    /// The entry the analysis panels describe.
    pub entry: Option<i64>,
    /// The Compare view's baseline (file name and device).
    pub baseline: Option<(String, i64)>,
}

/// `%`-escapes what a hash value cannot hold as it is.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~:/".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn unescape(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let Some(b) = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
            {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

impl ViewState {
    /// The hash, `#` included (empty when nothing is to be said).
    pub fn to_hash(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        let mut put = |k: &str, v: String| parts.push(format!("{k}={}", escape(&v)));
        if let Some((name, size)) = &self.file {
            put("file", name.clone());
            put("size", size.to_string());
        }
        if let Some(v) = &self.view {
            put("view", v.clone());
        }
        if let Some(d) = self.device {
            put("device", d.to_string());
        }
        if let Some((x0, x1, y)) = self.range {
            put("range", format!("{x0:.1}_{x1:.1}_{y:.0}"));
        }
        if let Some(d) = self.detail {
            put("detail", format!("{:.0}", d * 100.0));
        }
        if self.by_category {
            put("bycat", "1".into());
        }
        if let Some(p) = &self.pinned {
            put("pin", p.clone());
        }
        if let Some(c) = &self.category {
            put("cat", c.clone());
        }
        if let Some(e) = self.entry {
            put("entry", e.to_string());
        }
        if let Some((f, d)) = &self.baseline {
            put("base", f.clone());
            put("basedev", d.to_string());
        }
        if parts.is_empty() {
            String::new()
        } else {
            format!("#{}", parts.join("&"))
        }
    }

    /// Reads a hash (`#…` or without the `#`); what it does not say stays unset.
    pub fn from_hash(hash: &str) -> ViewState {
        let mut v = ViewState::default();
        let mut size = None;
        let mut base_dev = None;
        for pair in hash.trim_start_matches('#').split('&') {
            let Some((k, raw)) = pair.split_once('=') else {
                continue;
            };
            let val = unescape(raw);
            match k {
                "file" => v.file = Some((val, 0)),
                "size" => size = val.parse().ok(),
                "view" => v.view = Some(val),
                "device" => v.device = val.parse().ok(),
                "range" => {
                    let n: Vec<f64> = val.split('_').filter_map(|x| x.parse().ok()).collect();
                    if let [x0, x1, y] = n[..] {
                        v.range = Some((x0, x1, y));
                    }
                }
                "detail" => v.detail = val.parse::<f64>().ok().map(|d| (d / 100.0).clamp(0.0, 1.0)),
                "bycat" => v.by_category = val == "1",
                "pin" => v.pinned = Some(val),
                "cat" => v.category = Some(val),
                "entry" => v.entry = val.parse().ok(),
                "base" => v.baseline = Some((val, 0)),
                "basedev" => base_dev = val.parse().ok(),
                _ => {}
            }
        }
        if let (Some(f), Some(s)) = (v.file.as_mut(), size) {
            f.1 = s;
        }
        if let (Some(b), Some(d)) = (v.baseline.as_mut(), base_dev) {
            b.1 = d;
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_field_round_trips_through_the_hash() {
        let v = ViewState {
            file: Some(("run 1/rank0 snapshot.pickle".into(), 3_221_225)),
            device: Some(1),
            view: Some("analysis".into()),
            range: Some((120.5, 3000.0, 5.5e10)),
            detail: Some(0.35),
            by_category: true,
            pinned: Some("b7f3a2c000000_3".into()),
            category: Some("Optimizer state".into()),
            entry: Some(-1),
            baseline: Some(("a&b=c#.pickle".into(), 0)),
        };
        let hash = v.to_hash();
        assert!(
            hash.starts_with("#file=run%201/rank0%20snapshot.pickle&size=3221225&view=analysis"),
            "{hash}"
        );
        assert_eq!(ViewState::from_hash(&hash), v);
        assert_eq!(ViewState::from_hash(""), ViewState::default());
        assert_eq!(ViewState::default().to_hash(), "");
        // Unknown keys and broken values are left alone.
        let v = ViewState::from_hash("#view=state&detail=oops&zz=1&range=1_2");
        assert_eq!(
            (v.view.as_deref(), v.detail, v.range),
            (Some("state"), None, None)
        );
    }
}
