//! Categories: where an allocation's memory belongs (parameters, gradients, optimizer state,
//! activations, …), by rules over its frames. The built-in rules are data (`categories.json`); users add
//! their own regex rules in front of them. Every allocation falls in exactly one category ("Other" when
//! no rule matches).

use foldhash::HashMap;

use regex_lite::Regex;

use super::lifetimes::Lifetimes;
use super::live_set::innermost_user_frame;
use super::stacks::{frame_text, with_slashes};
use crate::model::{FrameId, Snapshot, StackId};

/// The category of allocations no rule matches.
pub const OTHER: &str = "Other";
/// The category of memory allocated before recording began, which has no stack to classify: usually the
/// model's parameters and the optimizer state of earlier steps. Its own category (and component), so a
/// run whose parameters predate `_record_memory_history` does not show them as a large "Other".
pub const BEFORE_RECORDING: &str = "Before recording";
const BUILT_IN: &str = include_str!("categories.json");

/// One colour per category, by its index in the rules' order, shared by the page and the report charts
/// so a category looks the same everywhere. The last two, for "Before recording" and "Other", are slate
/// and grey.
pub const COLORS: [&str; 11] = [
    "#17becf", "#8c564b", "#d62728", "#ff7f0e", "#1f77b4", "#e377c2", "#9467bd", "#2ca02c",
    "#bcbd22", "#5f6f8f", "#9aa0aa",
];

/// The colour (`#rrggbb`) of category `index` of `count` (the last two, "Before recording" and "Other",
/// always slate and grey).
pub fn color(index: usize, count: usize) -> &'static str {
    let rules = COLORS.len() - 2;
    if index + 1 == count {
        COLORS[rules + 1]
    } else if index + 2 == count {
        COLORS[rules]
    } else {
        COLORS[index % rules]
    }
}

/// One rule: allocations with a frame whose `file:line:function` matches `pattern` are `category`.
#[derive(Debug, Clone)]
pub struct Rule {
    pub category: String,
    /// Private, so that `needs` (read from it) cannot go stale.
    pattern: Regex,
    /// A role rule (parameters, gradients, optimizer state…): any frame of the stack decides, before any
    /// op rule. Otherwise an op rule (attention, matmul…), tried on the innermost user frame first.
    pub whole_stack: bool,
    /// Text any match must contain, when the pattern says (see [`Needs`]).
    needs: Option<Needs>,
}

impl Rule {
    /// Whether `pattern` matches `text` (`lower`: `text` in ASCII lower case). A frame's text is checked
    /// first for what any match must contain: most frames match no rule, and `regex_lite` runs each
    /// pattern as an NFA, character by character (13 µs a rule on a C++ frame, natively).
    fn matches(&self, text: &str, lower: &str) -> bool {
        self.needs.as_ref().is_none_or(|n| n.found_in(text, lower)) && self.pattern.is_match(text)
    }
}

/// What every match of a pattern contains: one of `words` (in ASCII lower case, and looked for in the
/// lower-cased text, when the pattern is case-insensitive). Read from the pattern's text: each branch
/// of its top-level alternation must begin with a plain literal (escaped punctuation and zero-width
/// assertions allowed); a pattern it cannot vouch for (any other flag group, a branch that begins with
/// a class, a group or `.`) has none, and is always run.
#[derive(Debug, Clone, PartialEq)]
struct Needs {
    words: Vec<String>,
    case_insensitive: bool,
}

impl Needs {
    fn of(pattern: &str) -> Option<Needs> {
        let (case_insensitive, body) = match pattern.strip_prefix("(?i)") {
            Some(rest) => (true, rest),
            None => (false, pattern),
        };
        if body.contains("(?") {
            return None;
        }
        let words = top_level_branches(body)?
            .into_iter()
            .map(|branch| {
                let word = leading_literal(branch);
                let word = match case_insensitive {
                    true => word.to_ascii_lowercase(),
                    false => word,
                };
                (!word.is_empty()).then_some(word)
            })
            .collect::<Option<Vec<String>>>()?;
        Some(Needs {
            words,
            case_insensitive,
        })
    }

    fn found_in(&self, text: &str, lower: &str) -> bool {
        let haystack = if self.case_insensitive { lower } else { text };
        self.words.iter().any(|w| haystack.contains(w.as_str()))
    }
}

/// `pattern` split at its top-level `|` (not in a group, a class or escaped); `None` when its brackets
/// do not balance.
fn top_level_branches(pattern: &str) -> Option<Vec<&str>> {
    let bytes = pattern.as_bytes();
    let (mut branches, mut start, mut depth, mut i) = (Vec::new(), 0, 0usize, 0);
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 1,
            b'[' => i = class_end(bytes, i)?,
            b'(' => depth += 1,
            b')' => depth = depth.checked_sub(1)?,
            b'|' if depth == 0 => {
                branches.push(&pattern[start..i]);
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    (depth == 0).then(|| {
        branches.push(&pattern[start..]);
        branches
    })
}

/// The index of the `]` that closes the class opened at `open` (nested classes, escapes, and a `]` first
/// in a class taken as a literal).
fn class_end(bytes: &[u8], open: usize) -> Option<usize> {
    let (mut depth, mut i) = (0usize, open);
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 1,
            b'[' => {
                depth += 1;
                // A `]` first in the class (after an optional `^`) is a literal.
                if bytes.get(i + 1) == Some(&b'^') {
                    i += 1;
                }
                if bytes.get(i + 1) == Some(&b']') {
                    i += 1;
                }
            }
            b']' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// The literal text a branch begins with, up to its first construct that is not one. A character a
/// repetition follows is dropped (`x+*` may leave it out too).
fn leading_literal(branch: &str) -> String {
    let mut word = String::new();
    let mut chars = branch.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                // Zero-width: nothing to read.
                Some('b' | 'B' | 'A' | 'z' | '<' | '>') => {}
                Some(e) if e.is_ascii_punctuation() => word.push(e),
                _ => break,
            },
            '^' => {}
            '?' | '*' | '{' | '+' | '.' | '[' | '(' | ')' | '$' | '|' => break,
            c => word.push(c),
        }
        // A repetition of what was just read.
        if matches!(chars.peek(), Some('?' | '*' | '{' | '+')) {
            word.pop();
            break;
        }
    }
    word
}

/// Ordered rules: the first that matches wins.
#[derive(Debug, Clone)]
pub struct Rules(pub Vec<Rule>);

#[derive(serde::Deserialize)]
struct RuleText {
    category: String,
    pattern: String,
    #[serde(default)]
    scope: Option<String>,
}

impl Rules {
    /// Parses rules from JSON: `[{"category": "...", "pattern": "regex"}, ...]`.
    pub fn from_json(text: &str) -> Result<Rules, String> {
        let raw: Vec<RuleText> =
            serde_json::from_str(text).map_err(|e| format!("category rules: {e}"))?;
        raw.into_iter()
            .map(|r| {
                let pattern = Regex::new(&r.pattern)
                    .map_err(|e| format!("category rule '{}': bad pattern: {e}", r.category))?;
                let whole_stack = match r.scope.as_deref() {
                    None | Some("frame") => false,
                    Some("stack") => true,
                    Some(other) => {
                        return Err(format!(
                            "category rule '{}': scope must be frame or stack, not '{other}'",
                            r.category
                        ))
                    }
                };
                Ok(Rule {
                    category: r.category,
                    needs: Needs::of(pattern.as_str()),
                    pattern,
                    whole_stack,
                })
            })
            .collect::<Result<_, String>>()
            .map(Rules)
    }

    /// Their regexes are compiled once per thread (a few milliseconds each time on a page, where every
    /// categorisation, report and digest asks for them); each call hands out a copy sharing them.
    pub fn built_in() -> Rules {
        thread_local! {
            static BUILT_IN_RULES: Rules =
                Rules::from_json(BUILT_IN).expect("the built-in rules are valid");
        }
        BUILT_IN_RULES.with(Rules::clone)
    }

    /// `user` rules first, then the built-in ones.
    pub fn with_user(user: Rules) -> Rules {
        let mut all = user.0;
        all.extend(Rules::built_in().0);
        Rules(all)
    }

    /// The category names in order of priority, then "Before recording" and "Other".
    pub fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for r in &self.0 {
            if !names.contains(&r.category) && r.category != BEFORE_RECORDING {
                names.push(r.category.clone());
            }
        }
        names.push(BEFORE_RECORDING.to_string());
        names.push(OTHER.to_string());
        names
    }

    /// Runs every rule's pattern over frame `f` once (kept in `matches`); whether it was new.
    fn match_frame(
        &self,
        snapshot: &Snapshot,
        f: FrameId,
        matches: &mut HashMap<FrameId, Vec<bool>>,
    ) -> bool {
        if matches.contains_key(&f) {
            return false;
        }
        // Windows paths as the rules write paths (`torch/optim/`, `nn/modules/module\.py`).
        let text = frame_text(snapshot, snapshot.frame(f));
        let text = with_slashes(&text);
        let lower = text.to_ascii_lowercase();
        matches.insert(f, self.0.iter().map(|r| r.matches(&text, &lower)).collect());
        true
    }

    /// The category of a stack: the first role rule that matches any frame; else the first op rule that
    /// matches the innermost user frame, then any frame innermost first; else "Other".
    pub fn classify(&self, snapshot: &Snapshot, stack: StackId) -> usize {
        self.classify_cached(snapshot, stack, &mut HashMap::default())
    }

    /// [`Self::classify`] with each frame's rule matches kept in `matches` (stacks share frames, and
    /// regex matching is the cost).
    fn classify_cached(
        &self,
        snapshot: &Snapshot,
        stack: StackId,
        matches: &mut HashMap<FrameId, Vec<bool>>,
    ) -> usize {
        let names = self.names();
        let index = |r: &Rule| {
            names
                .iter()
                .position(|n| *n == r.category)
                .expect("a named category")
        };
        let frames = snapshot.stack(stack);
        for &f in frames {
            self.match_frame(snapshot, f, matches);
        }
        let hit = |f: FrameId, j: usize| matches[&f][j];
        if let Some((_, r)) = self
            .0
            .iter()
            .enumerate()
            .filter(|(_, r)| r.whole_stack)
            .find(|(j, _)| frames.iter().any(|&f| hit(f, *j)))
        {
            return index(r);
        }
        let user = innermost_user_frame(snapshot, stack);
        for f in user.iter().chain(frames) {
            if let Some((_, r)) = self
                .0
                .iter()
                .enumerate()
                .filter(|(_, r)| !r.whole_stack)
                .find(|(j, _)| hit(*f, *j))
            {
                return index(r);
            }
        }
        names.len() - 1
    }
}

/// Bytes and counts per category for a set of allocations.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CategoryTotal {
    pub category: String,
    pub bytes: u64,
    pub count: u64,
}

/// The category of every allocation of `lifetimes` (an index into `rules.names()`). Allocations that
/// began before the trace and have no stack are [`BEFORE_RECORDING`].
pub fn categorize(snapshot: &Snapshot, lifetimes: &Lifetimes, rules: &Rules) -> Vec<u16> {
    crate::batch::run_ready(categorize_sliced(
        snapshot,
        lifetimes,
        rules,
        &mut crate::batch::NoPause,
    ))
}

/// [`categorize`], awaiting `pause` every [`crate::batch::BATCH`] allocations.
pub async fn categorize_sliced<P: crate::batch::Pause>(
    snapshot: &Snapshot,
    lifetimes: &Lifetimes,
    rules: &Rules,
    pause: &mut P,
) -> Vec<u16> {
    let names = rules.names();
    let before = names.len() - 2;
    let mut cache = HashMap::default();
    let mut matches = HashMap::default();
    let mut of = Vec::with_capacity(lifetimes.allocations.len());
    // The caller compiled the rules' patterns: a slice may end here.
    pause.pause().await;
    // A stack not seen before runs the rules' patterns over its frames (a millisecond or more each on
    // a page, and the first thousand allocations of a real file can have 60 stacks): the slice may end
    // after each new stack, else after a batch of allocations.
    let mut seen = 0;
    for a in &lifetimes.allocations {
        let (category, new) = if a.is_initial() && snapshot.stack(a.stack).is_empty() {
            (before as u16, false)
        } else if let Some(&known) = cache.get(&a.stack) {
            (known, false)
        } else {
            // Within a new stack, the slice may also end after each new frame (a deep stack of new
            // frames is many patterns' runs).
            for &f in snapshot.stack(a.stack) {
                if rules.match_frame(snapshot, f, &mut matches) {
                    pause.pause().await;
                }
            }
            let c = rules.classify_cached(snapshot, a.stack, &mut matches) as u16;
            cache.insert(a.stack, c);
            (c, true)
        };
        of.push(category);
        seen += 1;
        if new || seen >= crate::batch::BATCH {
            seen = 0;
            pause.pause().await;
        }
    }
    of
}

/// Totals per category of the allocations live at `event`, in the rules' order (empty ones included).
pub fn category_totals(
    lifetimes: &Lifetimes,
    categories: &[u16],
    names: &[String],
    event: i64,
) -> Vec<CategoryTotal> {
    category_totals_of(lifetimes, categories, names, &lifetimes.live_set_at(event))
}

/// [`category_totals`] of the allocations `live` (the live set at an entry, which the caller has).
pub fn category_totals_of(
    lifetimes: &Lifetimes,
    categories: &[u16],
    names: &[String],
    live: &[u32],
) -> Vec<CategoryTotal> {
    let mut totals: Vec<CategoryTotal> = names
        .iter()
        .map(|n| CategoryTotal {
            category: n.clone(),
            bytes: 0,
            count: 0,
        })
        .collect();
    for &i in live {
        let t = &mut totals[categories[i as usize] as usize];
        t.bytes += lifetimes.allocations[i as usize].size;
        t.count += 1;
    }
    totals
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::xorshift;

    fn words(pattern: &str) -> Option<Vec<&'static str>> {
        Needs::of(pattern).map(|n| {
            n.words
                .into_iter()
                .map(|w| &*Box::leak(w.into_boxed_str()))
                .collect()
        })
    }

    #[test]
    fn a_windows_path_falls_in_the_category_of_the_same_path_elsewhere() {
        use crate::model::Frame;
        let mut s = crate::read_bytes(&crate::synth::pickle(4).bytes).unwrap();
        let rules = Rules::built_in();
        let names = rules.names();
        for (filename, name, category) in [
            (
                "/venv/lib/python3.11/site-packages/torch/optim/adam.py",
                "_init_group",
                "Optimizer state",
            ),
            (
                "C:\\venv\\Lib\\site-packages\\torch\\optim\\adam.py",
                "_init_group",
                "Optimizer state",
            ),
            (
                "C:\\venv\\Lib\\site-packages\\torch\\nn\\modules\\module.py",
                "_apply",
                "Parameter",
            ),
        ] {
            let i = &mut s.interner;
            let frame = Frame {
                filename: i.intern_str(filename),
                line: 10,
                name: i.intern_str(name),
                fx: None,
            };
            let f = i.intern_frame(frame);
            let stack = i.intern_stack(&[f]);
            assert_eq!(names[rules.classify(&s, stack)], category, "{filename}");
        }
    }

    #[test]
    fn what_a_match_needs_is_read_from_the_pattern_or_not_at_all() {
        assert_eq!(
            words("(?i)nccl|deep_?ep|c10d"),
            Some(vec!["nccl", "deep", "c10d"])
        );
        assert_eq!(
            words(r"\blinear\b|\bbmm\b|gemm"),
            Some(vec!["linear", "bmm", "gemm"])
        );
        assert_eq!(words(r"optimi[sz]ers?\.py:\d+"), Some(vec!["optimi"]));
        assert_eq!(
            words(r"autograd/__init__\.py:\d+:backward"),
            Some(vec!["autograd/__init__.py:"])
        );
        assert_eq!(words(":forward$|ab+c"), Some(vec![":forward", "a"]));
        assert_eq!(words("a[|]b|c"), Some(vec!["a", "c"]));
        assert_eq!(words(r"a\|b"), Some(vec!["a|b"]));
        assert_eq!(words("xy{2}|z"), Some(vec!["x", "z"]));
        assert_eq!(words("(?i)ProcessGroup"), Some(vec!["processgroup"]));
        // Nothing it can vouch for: every branch must begin with a literal; no other flags.
        for pattern in [
            "", "a|", "(a|b)c", "[ab]c|d", ".x", "x|(?i)y", "(?x)a b", "(?i:a)", "?a", r"\d1",
        ] {
            assert_eq!(words(pattern), None, "{pattern}");
        }
        // Every built-in rule has one.
        assert!(Rules::built_in().0.iter().all(|r| r.needs.is_some()));
    }

    #[test]
    fn a_text_without_what_a_pattern_needs_never_matches_it() {
        const PIECES: [&str; 26] = [
            "a", "b", "A", "B", "ab", r"\.", ".", r"\b", r"\B", "[ab]", "[^a]", "[]a]", "(a|b)",
            "(?:ab)", "?", "*", "+", "{2}", "{1,}", "|", "^", "$", r"\d", r"\|", "_", ":",
        ];
        const TEXT: &[u8] = b"aAbB._:|1 ";
        let mut next = xorshift(2024);
        let (mut vouched, mut checked) = (0, 0);
        for _ in 0..20_000 {
            let mut pattern = String::from(if next().is_multiple_of(3) { "(?i)" } else { "" });
            for _ in 0..1 + next() % 7 {
                pattern.push_str(PIECES[(next() % PIECES.len() as u64) as usize]);
            }
            let (Ok(re), Some(needs)) = (Regex::new(&pattern), Needs::of(&pattern)) else {
                continue;
            };
            vouched += 1;
            for _ in 0..40 {
                let text: String = (0..next() % 12)
                    .map(|_| TEXT[(next() % TEXT.len() as u64) as usize] as char)
                    .collect();
                if re.is_match(&text) {
                    checked += 1;
                    assert!(
                        needs.found_in(&text, &text.to_ascii_lowercase()),
                        "{pattern:?} matches {text:?} without any of {:?}",
                        needs.words
                    );
                }
            }
        }
        assert!(
            vouched > 2_000 && checked > 5_000,
            "{vouched} patterns, {checked} matches"
        );
    }
}
