//! How stacks are shown: allocator and interpreter plumbing dropped, runs of identical frames elided,
//! the full stack always available.

use std::borrow::Cow;

use crate::model::{Frame, Snapshot, StackId};

/// Function-name fragments of frames that are allocator or interpreter plumbing.
const PLUMBING_FUNCTIONS: &[&str] = &[
    "unwind::unwind",
    "CapturedTraceback::gather",
    "gather_with_cpp",
    "_start",
    "__libc_",
    "PyEval_",
    "PyObject_",
    "PyFunction_",
    "PyVectorcall_",
    "cfunction_call",
    "method_vectorcall",
    "CUDACachingAllocator",
    "PyRun_",
    "pyrun_",
    "pymain_",
    "Py_RunMain",
    "Py_BytesMain",
    "run_eval_code_obj",
    "run_mod",
];

/// File-name fragments of frames that are plumbing.
const PLUMBING_FILES: &[&str] = &[
    "core/boxing",
    "ceval.c",
    "pythonrun.c",
    "Modules/main.c",
    "Objects/call.c",
    "Objects/methodobject.c",
    "Objects/descrobject.c",
    "Objects/typeobject.c",
    "pybind11",
    "torch/csrc/utils/python_arg_parser",
];

/// Basename prefixes of generated dispatcher and allocator C++ files (`RegisterCUDA.cpp`, …).
const PLUMBING_BASENAMES: &[&str] = &["Register", "Redispatch", "CUDACachingAllocator"];

/// `path` with Windows' `\` separators as `/`, for matching: frames recorded on Windows
/// (`D:\…\.venv\Lib\site-packages\torch\functional.py`) are then told apart as framework or
/// user code, and fall in categories, as the same files recorded elsewhere do.
pub fn with_slashes(path: &str) -> Cow<'_, str> {
    if path.contains('\\') {
        Cow::Owned(path.replace('\\', "/"))
    } else {
        Cow::Borrowed(path)
    }
}

/// True for frames a reader of the stack never needs (allocator, dispatcher and interpreter internals).
pub fn is_plumbing(filename: &str, name: &str) -> bool {
    let filename = &*with_slashes(filename);
    let basename = filename.rsplit('/').next().unwrap_or(filename);
    let generated_cpp = [".cpp", ".h", ".cu"]
        .iter()
        .any(|ext| basename.ends_with(ext))
        && PLUMBING_BASENAMES.iter().any(|p| basename.starts_with(p));
    generated_cpp
        || PLUMBING_FUNCTIONS.iter().any(|p| name.contains(p))
        || PLUMBING_FILES.iter().any(|p| filename.contains(p))
}

/// `filename:line:name`, the way PyTorch's viewer prints a frame.
pub fn frame_text(snapshot: &Snapshot, frame: &Frame) -> String {
    format!(
        "{}:{}:{}",
        snapshot.str(frame.filename),
        frame.line,
        snapshot.str(frame.name)
    )
}

/// Why an allocation has no frames, and which `_record_memory_history` arguments would capture them:
/// `initial`, it began before the trace (recording was not on yet); else it was recorded without a
/// stack.
pub fn why_no_frames(initial: bool) -> &'static str {
    if initial {
        "No stack: this memory was allocated before recording began (before \
         torch.cuda.memory._record_memory_history() was called), so nothing recorded where it came \
         from. Usually the model's parameters, or optimizer state from earlier steps. To see its \
         stack, start recording before the model and optimizer are created."
    } else {
        "No stack: history was recorded without one (context=None or context=\"state\", or stacks \
         that leave these frames out). Record with \
         torch.cuda.memory._record_memory_history(context=\"all\", stacks=\"all\") to capture where \
         each allocation is made (\"python\" stacks are cheaper and usually enough)."
    }
}

/// The lines to show for `stack`, innermost first: plumbing dropped unless `full`, runs of three or more
/// identical lines shown once followed by `<repeats N times>`.
pub fn display_lines(snapshot: &Snapshot, stack: StackId, full: bool) -> Vec<String> {
    let frames = snapshot.stack(stack);
    if frames.is_empty() {
        return vec!["<block was allocated before _record_memory_history was enabled>".to_string()];
    }
    let lines: Vec<String> = frames
        .iter()
        .map(|&f| snapshot.frame(f))
        .filter(|f| full || !is_plumbing(snapshot.str(f.filename), snapshot.str(f.name)))
        .map(|f| frame_text(snapshot, f))
        .collect();
    elide_repeats(lines)
}

/// Collapses runs of 3+ identical lines into the line and `<repeats N times>` (N = the extra copies).
pub fn elide_repeats(lines: Vec<String>) -> Vec<String> {
    let mut out = Vec::with_capacity(lines.len());
    let mut i = 0;
    while i < lines.len() {
        let mut j = i + 1;
        while j < lines.len() && lines[j] == lines[i] {
            j += 1;
        }
        match j - i {
            1 => out.push(lines[i].clone()),
            2 => {
                out.push(lines[i].clone());
                out.push(lines[i].clone());
            }
            run => {
                out.push(lines[i].clone());
                out.push(format!("<repeats {} times>", run - 1));
            }
        }
        i = j;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_of_three_or_more_are_elided() {
        let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(elide_repeats(v(&["a", "a", "b"])), v(&["a", "a", "b"]));
        assert_eq!(
            elide_repeats(v(&["a", "a", "a", "a", "b"])),
            v(&["a", "<repeats 3 times>", "b"])
        );
    }

    #[test]
    fn plumbing_frames_are_recognised() {
        assert!(is_plumbing("??", "torch::unwind::unwind()"));
        assert!(is_plumbing(
            "/usr/local/src/conda/python-3.11/Python/ceval.c",
            "_PyEval_EvalFrameDefault"
        ));
        assert!(is_plumbing(
            "RegisterCUDA.cpp",
            "at::(anonymous namespace)::wrapper_CUDA_empty_strided"
        ));
        assert!(is_plumbing(
            "CUDACachingAllocator.cpp",
            "c10::cuda::CUDACachingAllocator::Native::malloc"
        ));
        assert!(is_plumbing("??", "pymain_run_python"));
        assert!(!is_plumbing("train.py", "forward"));
        assert!(!is_plumbing("/src/RegisterModel.py", "forward"));
        assert!(!is_plumbing("??", "at::native::empty_strided_cuda"));
    }
}
