//! What file names tell of the runs: a sweep's knobs (`ctx512`, `bf16`, `rank3`…), and the folder
//! the runs share, named once rather than on every row.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use regex_lite::Regex;

/// The knobs of a sweep that a file name tells, by common spellings: `ctx`/`seq` (context length),
/// `bs`/`lbs`/`gbs`/`mbs` (batch sizes), `dtype` (`bf16`, `fp16`, `fp32`, `fp8`), `phase` (`forward`,
/// `training`, `fullstep`, `inference`…), `rank`, `iter`, `step`, `tp`/`pp`/`dp`, and `model` (a size
/// such as `2.7B` or `350M`).
pub fn config_from_name(name: &str) -> BTreeMap<String, String> {
    static PATTERNS: OnceLock<Vec<(&'static str, Regex)>> = OnceLock::new();
    let patterns = PATTERNS.get_or_init(|| {
        const TOKEN_END: &str = r"(?:[^a-z0-9]|$)";
        [
            ("ctx", r"(?:ctx|context|ctxlen)[_-]?(\d+)"),
            ("seq", r"(?:seq|seqlen|seq_len)[_-]?(\d+)"),
            ("bs", r"(?:bs|batch|batchsize|batch_size)[_-]?(\d+)"),
            ("lbs", r"lbs[_-]?(\d+)"),
            ("gbs", r"gbs[_-]?(\d+)"),
            ("mbs", r"mbs[_-]?(\d+)"),
            ("dtype", r"(bf16|fp16|fp32|fp8|float16|float32|bfloat16|half|amp)"),
            (
                "phase",
                r"(forward|fwd|backward|bwd|training|train|fullstep|full_step|inference|infer|eval|optimizer)",
            ),
            ("rank", r"rank[_-]?(\d+)"),
            ("iter", r"(?:iter|iteration|it)[_-]?(\d+)"),
            ("step", r"step[_-]?(\d+)"),
            // memograph-capture's snapshots: rank{R}_{reason}_{step}.pickle.
            ("step", r"rank\d+_(?:exit|oom|peak|signal)_(\d+)"),
            ("tp", r"tp[_-]?(\d+)"),
            ("pp", r"pp[_-]?(\d+)"),
            ("dp", r"dp[_-]?(\d+)"),
            ("model", r"(\d+(?:\.\d+)?[bm])"),
        ]
        .into_iter()
        .map(|(key, p)| {
            let full = format!(r"(?:^|[^a-z0-9]){p}{TOKEN_END}");
            (key, Regex::new(&full).expect("a valid built-in pattern"))
        })
        .collect()
    });
    let stem = crate::names::stem(name).to_ascii_lowercase();
    let mut config = BTreeMap::new();
    for (key, re) in patterns {
        if config.contains_key(*key) {
            continue;
        }
        if let Some(m) = re.captures(&stem).and_then(|c| c.get(1)) {
            let value = m.as_str();
            let value = match *key {
                "model" => value.to_ascii_uppercase(),
                "phase" => match value {
                    "fwd" => "forward".into(),
                    "bwd" => "backward".into(),
                    "train" => "training".into(),
                    "full_step" => "fullstep".into(),
                    "infer" => "inference".into(),
                    v => v.to_string(),
                },
                "dtype" => match value {
                    "float16" | "half" => "fp16".into(),
                    "float32" => "fp32".into(),
                    "bfloat16" => "bf16".into(),
                    v => v.to_string(),
                },
                _ => value.trim_start_matches('0').to_string(),
            };
            let value = if value.is_empty() { "0".into() } else { value };
            config.insert(key.to_string(), value);
        }
    }
    config
}

/// The folder every name in `names` lies in (`runs/ctx128/` of `runs/ctx128/rank0.pickle` and
/// `runs/ctx128/rank1.pickle`), to be shown once rather than on every run: the longest prefix ending in
/// `/` (or `\`, as Windows paths are typed) that all of them share, when there are two or more; else
/// empty.
pub fn common_folder<'a>(names: impl IntoIterator<Item = &'a str>) -> &'a str {
    let mut names = names.into_iter();
    let Some(first) = names.next() else {
        return "";
    };
    let mut rest = names.peekable();
    if rest.peek().is_none() {
        return "";
    }
    let mut len = first.rfind(['/', '\\']).map_or(0, |k| k + 1);
    for name in rest {
        let shared = first
            .bytes()
            .zip(name.bytes())
            .take(len)
            .take_while(|(a, b)| a == b)
            .count();
        // By bytes: `shared` may end inside a character; a `/` or `\` (ASCII) never does.
        len = first.as_bytes()[..shared]
            .iter()
            .rposition(|&b| b == b'/' || b == b'\\')
            .map_or(0, |k| k + 1);
    }
    &first[..len]
}

/// `name` as shown among runs that share `folder` (see [`common_folder`]).
pub fn within<'a>(name: &'a str, folder: &str) -> &'a str {
    name.strip_prefix(folder).unwrap_or(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_folder_runs_share_is_shown_once() {
        assert_eq!(
            common_folder(["runs/ctx128/rank0.pickle", "runs/ctx128/rank1.pickle"]),
            "runs/ctx128/"
        );
        // Up to the last `/` both have: a shared start of a file name is not a folder.
        assert_eq!(
            common_folder(["runs/ctx128/a.pickle", "runs/ctx256/a.pickle"]),
            "runs/"
        );
        assert_eq!(common_folder(["rank0.pickle", "rank1.pickle"]), "");
        assert_eq!(common_folder(["a/x.pickle", "b/x.pickle"]), "");
        assert_eq!(common_folder(["a/x.pickle", "x.pickle"]), "");
        // Paths typed at a Windows prompt part at `\`.
        assert_eq!(
            common_folder([r"runs\ctx128\rank0.pickle", r"runs\ctx128\rank1.pickle"]),
            r"runs\ctx128\"
        );
        assert_eq!(
            common_folder([r"C:\runs\ctx128\a.pickle", r"C:\runs\ctx256\a.pickle"]),
            r"C:\runs\"
        );
        // One run, or none: nothing to factor out.
        assert_eq!(common_folder(["runs/a.pickle"]), "");
        assert_eq!(common_folder([]), "");
        // Multi-byte names are cut at a `/`, never inside a character.
        assert_eq!(
            common_folder(["läufe/é/a.pickle", "läufe/é/b.pickle", "läufe/è/c.pickle"]),
            "läufe/"
        );
        assert_eq!(
            within("runs/ctx128/rank0.pickle", "runs/ctx128/"),
            "rank0.pickle"
        );
        assert_eq!(within("other/rank0.pickle", "runs/"), "other/rank0.pickle");
    }

    #[test]
    fn config_comes_from_common_spellings() {
        let c = config_from_name("memory_ctx512_bs8_bf16_forward.pickle");
        assert_eq!(c["ctx"], "512");
        assert_eq!(c["bs"], "8");
        assert_eq!(c["dtype"], "bf16");
        assert_eq!(c["phase"], "forward");
        let c = config_from_name("runs/rank3_memory_snapshot_iter2.pickle.gz");
        assert_eq!((c["rank"].as_str(), c["iter"].as_str()), ("3", "2"));
        let c = config_from_name("gpt2-2.7B_lbs6_fp32_iteration_05_training.pkl");
        assert_eq!(c["model"], "2.7B");
        assert_eq!(c["lbs"], "6");
        assert_eq!(c["iter"], "5");
        assert_eq!(c["phase"], "training");
        assert!(!c.contains_key("bs"), "lbs is not bs: {c:?}");
        let c = config_from_name("memory_trace_rank0_tp2_pp4_dp1.json");
        assert_eq!(
            (c["tp"].as_str(), c["pp"].as_str(), c["dp"].as_str()),
            ("2", "4", "1")
        );
        assert!(config_from_name("snapshot.pickle").is_empty());
        let c = config_from_name("memograph_snapshots/rank2_peak_37.pickle");
        assert_eq!((c["rank"].as_str(), c["step"].as_str()), ("2", "37"));
        assert!(config_from_name("cs_memory_snapshot.pickle").is_empty());
    }
}
