//! `memograph html FILE... [-o OUT.html] [--view HASH]`: one self-contained HTML file that opens from
//! disk, offline, by double-click: the built page (its module, wasm, worker and styles inlined as
//! base64) and the snapshots (gzip-compressed unless they already are). The page finds them in
//! `window.memographEmbedded` (set by the bootstrap script written here) and opens them as if they had
//! been dropped; `--view` starts it at a share link's view.
//!
//! The page is Trunk's `dist/` (built by `trunk build --release`), found with `--page DIR`, the
//! `MEMOGRAPH_PAGE` variable, `page/` or `../share/memograph/page` beside the executable, or the
//! repository's `dist/` this binary was built from.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use flate2::write::GzEncoder;
use flate2::Compression;

use memograph_snapshot::names;

use crate::load::io_reason;
use crate::Failure;

pub struct HtmlArgs {
    pub files: Vec<String>,
    pub out: Option<PathBuf>,
    pub view: Option<String>,
    pub page: Option<PathBuf>,
}

/// A snapshot as the page carries it.
struct Embedded {
    name: String,
    /// The file's size.
    size: usize,
    /// Whether it was compressed here (the page is then told its size: it names the file by it).
    compressed: bool,
    bytes: Vec<u8>,
}

/// The built page's parts.
struct Page {
    /// index.html without Trunk's loader, stylesheet link and preloads.
    index: String,
    css: String,
    module: Vec<u8>,
    wasm: Vec<u8>,
    worker: Vec<u8>,
}

pub fn run(args: &HtmlArgs) -> Result<(), Failure> {
    let dir = page_dir(args.page.as_deref())?;
    let page = read_page(&dir).map_err(|reason| Failure(format!("{}: {reason}", dir.display())))?;
    let mut snapshots = Vec::new();
    let mut step_files = 0;
    let names = page_names(&args.files);
    for (file, name) in args.files.iter().zip(names) {
        let bytes = fs::read(file).map_err(|e| Failure(format!("{file}: {}", io_reason(&e))))?;
        // A file the page could not open is refused here, with the same one line. Step records are
        // told from snapshots as the page tells them: a name that is no pickle's, then the first bytes.
        if !names::pickle_named(file) && memograph_snapshot::steps::looks_like_steps(&bytes) {
            memograph_snapshot::steps::read_steps(file, &bytes)
                .map_err(|e| Failure(format!("{file}: {e}")))?;
            step_files += 1;
        } else {
            memograph_snapshot::read_bytes(&bytes).map_err(|e| Failure(format!("{file}: {e}")))?;
        }
        let compressed = !memograph_snapshot::is_gzip(&bytes);
        snapshots.push(Embedded {
            name,
            size: bytes.len(),
            compressed,
            bytes: gzipped(bytes),
        });
    }
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| default_out(&args.files[0]));
    let view = args.view.as_deref().map(view_hash);
    let html = assemble(&page, &snapshots, view.as_deref());
    fs::write(&out, &html).map_err(|e| Failure(crate::load::write_failure(&out, &e)))?;
    let input: usize = snapshots.iter().map(|s| s.size).sum();
    let carried: usize = snapshots.iter().map(|s| s.bytes.len()).sum();
    let carried_files = match (snapshots.len() - step_files, step_files) {
        (1, 0) => "snapshot",
        (_, 0) => "snapshots",
        (0, _) => "step records",
        _ => "snapshots and step records",
    };
    println!(
        "{}: {} ({} of {carried_files} as {} compressed, {} of page)",
        out.display(),
        memograph_snapshot::format::bytes(html.len() as u64),
        memograph_snapshot::format::bytes(input as u64),
        memograph_snapshot::format::bytes(carried as u64),
        memograph_snapshot::format::bytes((html.len() - base64_len(carried)) as u64),
    );
    Ok(())
}

/// The names the page knows the files by: their own, when they lie in one folder; else their paths
/// from the folder they share, that folder's name first, as the page's Open folder names them
/// (`sweep/run_a/rank0.pickle`): two runs' `rank0.pickle` stay apart, and so do their ranks.
fn page_names(files: &[String]) -> Vec<String> {
    let own = |f: &String| {
        Path::new(f)
            .file_name()
            .map_or_else(|| f.clone(), |n| n.to_string_lossy().into_owned())
    };
    let paths: Vec<PathBuf> = files
        .iter()
        .map(|f| std::path::absolute(f).unwrap_or_else(|_| PathBuf::from(f)))
        .collect();
    let parents: Vec<&Path> = paths.iter().filter_map(|p| p.parent()).collect();
    if parents.len() != paths.len() || parents.windows(2).all(|w| w[0] == w[1]) {
        return files.iter().map(own).collect();
    }
    // The folder all share, and the one above it (so that its name is kept).
    let mut common = parents[0].to_path_buf();
    while !parents.iter().all(|p| p.starts_with(&common)) {
        if !common.pop() {
            break;
        }
    }
    let base = common.parent().unwrap_or(&common);
    paths
        .iter()
        .zip(files)
        .map(|(p, f)| match p.strip_prefix(base) {
            Ok(rest) => rest
                .components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/"),
            Err(_) => own(f),
        })
        .collect()
}

/// `NAME.html` in the current directory, NAME the file's [stem](memograph_snapshot::names::stem).
fn default_out(file: &str) -> PathBuf {
    let stem = memograph_snapshot::names::stem(file);
    let stem = if stem.is_empty() { "snapshot" } else { stem };
    PathBuf::from(format!("{stem}.html"))
}

/// The hash of `--view`: a whole share link, `#…` or the part after `#`.
fn view_hash(view: &str) -> String {
    let hash = view.rsplit_once('#').map_or(view, |(_, h)| h);
    format!("#{hash}")
}

fn gzipped(bytes: Vec<u8>) -> Vec<u8> {
    if memograph_snapshot::is_gzip(&bytes) {
        return bytes;
    }
    let mut gz = GzEncoder::new(Vec::with_capacity(bytes.len() / 4), Compression::new(6));
    gz.write_all(&bytes).expect("writing to memory");
    gz.finish().expect("writing to memory")
}

fn page_dir(given: Option<&Path>) -> Result<PathBuf, Failure> {
    if let Some(dir) = given {
        return Ok(dir.to_path_buf());
    }
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Some(dir) = std::env::var_os("MEMOGRAPH_PAGE") {
        return Ok(PathBuf::from(dir));
    }
    if let Some(exe_dir) = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(Path::to_path_buf))
    {
        candidates.push(exe_dir.join("page"));
        candidates.push(exe_dir.join("../share/memograph/page"));
    }
    candidates.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../dist"));
    candidates
        .into_iter()
        .find(|d| d.join("index.html").is_file() && d.join("worker.js").is_file())
        .ok_or_else(|| {
            Failure(
                "no built page found: run `trunk build --release` in the repository, or pass \
                 --page DIR (a built dist/ folder)"
                    .into(),
            )
        })
}

fn read_page(dir: &Path) -> Result<Page, String> {
    let read =
        |name: &str| fs::read(dir.join(name)).map_err(|e| format!("{name}: {}", io_reason(&e)));
    let index = String::from_utf8(read("index.html")?).map_err(|_| "index.html is not UTF-8")?;
    let not_built = || "index.html is not a page built by Trunk (no module loader)".to_string();
    // Trunk's loader: `<script type="module">import init, * as bindings from './M.js'; … './W.wasm' …`.
    let loader_at = index.find("import init").ok_or_else(not_built)?;
    let start = index[..loader_at].rfind("<script").ok_or_else(not_built)?;
    let end = loader_at + index[loader_at..].find("</script>").ok_or_else(not_built)? + 9;
    let loader = &index[start..end];
    let quoted = |after: &str, ending: &str| {
        let at = loader.find(after)? + after.len();
        let rest = &loader[at..];
        let q = rest.find(['\'', '"'])?;
        let rest = &rest[q + 1..];
        let name = &rest[..rest.find(['\'', '"'])?];
        name.ends_with(ending)
            .then(|| name.trim_start_matches("./").to_string())
    };
    let module = quoted("from", ".js").ok_or_else(not_built)?;
    let wasm = quoted("module_or_path", ".wasm").ok_or_else(not_built)?;
    let mut html = format!("{}{}", &index[..start], &index[end..]);
    // The stylesheet, inlined where its link was.
    let mut css = String::new();
    while let Some(link) = find_tag(&html, "<link", |t| t.contains("rel=\"stylesheet\"")) {
        let tag = &html[link.clone()];
        let href = attribute(tag, "href").ok_or("a stylesheet link without href")?;
        css.push_str(&String::from_utf8_lossy(&read(
            href.trim_start_matches("./"),
        )?));
        html.replace_range(link, "");
    }
    // Preloads of files that are inlined now.
    while let Some(link) = find_tag(&html, "<link", |t| {
        t.contains("rel=\"modulepreload\"") || t.contains("rel=\"preload\"")
    }) {
        html.replace_range(link, "");
    }
    Ok(Page {
        index: html,
        css,
        module: read(&module)?,
        wasm: read(&wasm)?,
        worker: read("worker.js")?,
    })
}

/// The byte range of the first `open…>` tag that `wanted` accepts.
fn find_tag(
    html: &str,
    open: &str,
    wanted: impl Fn(&str) -> bool,
) -> Option<std::ops::Range<usize>> {
    let mut from = 0;
    while let Some(at) = html[from..].find(open) {
        let start = from + at;
        let end = start + html[start..].find('>')? + 1;
        if wanted(&html[start..end]) {
            return Some(start..end);
        }
        from = end;
    }
    None
}

fn attribute<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let at = tag.find(&format!("{name}=\""))? + name.len() + 2;
    Some(&tag[at..at + tag[at..].find('"')?])
}

/// The page with everything inlined: styles in the head; the payloads as base64 in inert
/// `<script type="application/octet-stream">` elements; and a bootstrap that turns them into data:
/// URLs (the module's and the worker's), the compiled wasm and files, sets `window.memographEmbedded`,
/// then starts the module as Trunk's loader would.
fn assemble(page: &Page, snapshots: &[Embedded], view: Option<&str>) -> String {
    let mut payload = String::new();
    let mut put = |id: String, attrs: String, bytes: &[u8]| {
        payload.push_str(&format!(
            "<script type=\"application/octet-stream\" id=\"{id}\"{attrs}>"
        ));
        payload.push_str(&base64(bytes));
        payload.push_str("</script>\n");
    };
    put("memograph-module".into(), String::new(), &page.module);
    put("memograph-wasm".into(), String::new(), &page.wasm);
    put("memograph-worker".into(), String::new(), &page.worker);
    for (i, s) in snapshots.iter().enumerate() {
        put(
            format!("memograph-file-{i}"),
            format!(
                " data-name=\"{}\"{}",
                escape_attribute(&s.name),
                if s.compressed {
                    format!(" data-size=\"{}\"", s.size)
                } else {
                    String::new()
                }
            ),
            &s.bytes,
        );
    }
    let view = view.map_or("null".to_string(), |v| {
        serde_json::to_string(v).expect("a string")
    });
    let bootstrap = BOOTSTRAP
        .replace("FILE_COUNT", &snapshots.len().to_string())
        .replace("VIEW", &view);
    let head = format!("<style>\n{}\n</style>\n</head>", page.css);
    let body = format!("{payload}<script type=\"module\">{bootstrap}</script>\n</body>");
    page.index
        .replacen("</head>", &head, 1)
        .replacen("</body>", &body, 1)
}

const BOOTSTRAP: &str = r#"
// memograph html: everything this page needs is in it (see crates/cli/src/html.rs).
const take = (id) => {
  const element = document.getElementById(id);
  const text = element.textContent;
  element.remove();
  return [text, element.dataset];
};
const decode = (text) => {
  if (Uint8Array.fromBase64) return Uint8Array.fromBase64(text);
  const out = new Uint8Array(Math.floor(text.length / 4) * 3 - (text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0));
  const step = 1 << 22; // characters at a time, a multiple of 4
  let at = 0;
  for (let i = 0; i < text.length; i += step) {
    const binary = atob(text.slice(i, i + step));
    for (let k = 0; k < binary.length; k++) out[at++] = binary.charCodeAt(k);
  }
  return out;
};
// A page opened from file:// may fetch nothing, and its workers not even blob: URLs: the module and
// the worker are data: URLs, and each worker is posted the compiled wasm (src/load/page.rs).
const [moduleText] = take('memograph-module');
const module = 'data:text/javascript;base64,' + moduleText;
const wasmModule = await WebAssembly.compile(decode(take('memograph-wasm')[0]));
const workerSource = `globalThis.memographEmbedded = ${JSON.stringify({ module })};\n` +
  new TextDecoder().decode(decode(take('memograph-worker')[0]));
const worker = 'data:text/javascript;charset=utf-8,' + encodeURIComponent(workerSource);
// The page reads a file compressed here as it reads any gzip, and names it with the size it had
// (src/load/page.rs: named_size).
const files = [];
for (let i = 0; i < FILE_COUNT; i++) {
  const [text, data] = take('memograph-file-' + i);
  const file = new File([decode(text)], data.name);
  if (data.size) file.memographSize = Number(data.size);
  files.push(file);
}
const view = VIEW;
if (view && !location.hash) history.replaceState(null, '', view);
window.memographEmbedded = { worker, wasmModule, files };
const { default: init, ...bindings } = await import(module);
await init({ module_or_path: wasmModule });
window.wasmBindings = bindings;
"#;

fn escape_attribute(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
}

fn base64_len(n: usize) -> usize {
    n.div_ceil(3) * 4
}

fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = Vec::with_capacity(base64_len(bytes.len()));
    let mut chunks = bytes.chunks_exact(3);
    for c in &mut chunks {
        let n = (u32::from(c[0]) << 16) | (u32::from(c[1]) << 8) | u32::from(c[2]);
        out.extend([18, 12, 6, 0].map(|s| ALPHABET[(n >> s & 63) as usize]));
    }
    match *chunks.remainder() {
        [a] => {
            let n = u32::from(a) << 16;
            out.extend([
                ALPHABET[(n >> 18) as usize],
                ALPHABET[(n >> 12 & 63) as usize],
                b'=',
                b'=',
            ]);
        }
        [a, b] => {
            let n = (u32::from(a) << 16) | (u32::from(b) << 8);
            out.extend([
                ALPHABET[(n >> 18) as usize],
                ALPHABET[(n >> 12 & 63) as usize],
                ALPHABET[(n >> 6 & 63) as usize],
                b'=',
            ]);
        }
        _ => {}
    }
    String::from_utf8(out).expect("base64 is ASCII")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_the_standard() {
        // RFC 4648's test vectors.
        for (plain, coded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(plain.as_bytes()), coded);
            assert_eq!(base64_len(plain.len()), coded.len());
        }
    }

    #[test]
    fn a_view_is_taken_from_a_link_or_a_hash() {
        assert_eq!(
            view_hash("https://x.org/?url=a#v=timeline&d=0"),
            "#v=timeline&d=0"
        );
        assert_eq!(view_hash("#v=timeline"), "#v=timeline");
        assert_eq!(view_hash("v=timeline"), "#v=timeline");
    }

    #[test]
    fn files_of_several_folders_are_named_by_their_paths_from_the_folder_they_share() {
        let names =
            |files: &[&str]| page_names(&files.iter().map(|f| f.to_string()).collect::<Vec<_>>());
        assert_eq!(
            names(&["/r/sweep/run_a/rank0.pickle", "/r/sweep/run_b/rank0.pickle"]),
            ["sweep/run_a/rank0.pickle", "sweep/run_b/rank0.pickle"]
        );
        assert_eq!(
            names(&["/r/run/rank0.pickle", "/r/run/rank1.pickle"]),
            ["rank0.pickle", "rank1.pickle"]
        );
        assert_eq!(
            names(&["/a.pickle", "/b/c.pickle"]),
            ["a.pickle", "b/c.pickle"]
        );
        assert_eq!(names(&["x/kk.pickle"]), ["kk.pickle"]);
    }

    #[test]
    fn the_output_is_named_after_the_snapshot() {
        assert_eq!(default_out("runs/a.pickle.gz"), PathBuf::from("a.html"));
        assert_eq!(default_out("b.pkl"), PathBuf::from("b.html"));
    }

    #[test]
    fn trunks_page_is_taken_apart() {
        let dir = std::env::temp_dir().join(format!("memograph-html-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let index = "<html><head>\n<script type=\"module\">\nimport init, * as bindings from './m-1.js';\n\
                     const wasm = await init({ module_or_path: './m-1_bg.wasm' });\n</script>\n\
                     <link rel=\"stylesheet\" href=\"./main-2.css\" integrity=\"x\"/>\n\
                     <link rel=\"modulepreload\" href=\"./m-1.js\"><link rel=\"preload\" href=\"./m-1_bg.wasm\" as=\"fetch\"></head>\n\
                     <body><p>hi</p></body></html>";
        for (name, text) in [
            ("index.html", index),
            ("m-1.js", "export default 1"),
            ("m-1_bg.wasm", "\0asm"),
            ("main-2.css", "body{}"),
            ("worker.js", "w"),
        ] {
            fs::write(dir.join(name), text).unwrap();
        }
        let page = read_page(&dir).unwrap();
        assert_eq!(page.module, b"export default 1");
        assert_eq!(page.wasm, b"\0asm");
        assert_eq!(page.css, "body{}");
        assert!(!page.index.contains("import init"));
        assert!(!page.index.contains("<link"));
        let file = |name: &str, compressed| Embedded {
            name: name.into(),
            size: 3,
            compressed,
            bytes: vec![1, 2, 3],
        };
        let html = assemble(
            &page,
            &[file("a\"b.pickle", false), file("c.pickle", true)],
            Some("#v=x"),
        );
        assert!(html.contains("<style>\nbody{}\n</style>\n</head>"));
        assert!(
            html.contains("id=\"memograph-file-0\" data-name=\"a&quot;b.pickle\">AQID</script>")
        );
        // What was compressed here carries its size.
        assert!(html.contains(
            "id=\"memograph-file-1\" data-name=\"c.pickle\" data-size=\"3\">AQID</script>"
        ));
        assert!(html.contains("const view = \"#v=x\";"));
        assert!(html.contains("i < 2;"));
        assert!(html.find("<p>hi</p>") < html.find("memograph-module"));
        fs::remove_dir_all(&dir).unwrap();
    }
}
