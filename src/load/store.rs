//! The open files and their per-device models. Heavy and not reactive: it lives here, outside the
//! reactive graph; components see a generation counter that changes when it does.

use std::cell::RefCell;
use std::collections::HashMap;

use memograph_snapshot::Snapshot;

use crate::view_model::DeviceModel;

pub struct OpenFile {
    pub name: String,
    pub bytes: u64,
    pub snapshot: Snapshot,
    pub devices: Vec<i64>,
    pub models: HashMap<i64, DeviceModel>,
}

thread_local! {
    static FILES: RefCell<Vec<OpenFile>> = const { RefCell::new(Vec::new()) };
}

pub fn add(file: OpenFile) -> usize {
    FILES.with(|f| {
        let mut f = f.borrow_mut();
        f.push(file);
        f.len() - 1
    })
}

/// Closes file `index`: its snapshot and models are freed, and the memory goes back to the allocator for
/// the next file (wasm memory never shrinks, but it is reused). Later files move down by one.
pub fn close(index: usize) {
    let closed = FILES.with(|f| {
        let mut f = f.borrow_mut();
        (index < f.len()).then(|| f.remove(index))
    });
    // Dropped outside the borrow: dropping a big snapshot takes a moment and touches nothing else.
    drop(closed);
}

pub fn count() -> usize {
    FILES.with(|f| f.borrow().len())
}

/// Name, size and devices of each open file.
pub fn list() -> Vec<(String, u64, Vec<i64>)> {
    FILES.with(|f| {
        f.borrow()
            .iter()
            .map(|o| (o.name.clone(), o.bytes, o.devices.clone()))
            .collect()
    })
}

pub fn with_file<R>(file: usize, f: impl FnOnce(&OpenFile) -> R) -> Option<R> {
    FILES.with(|files| files.borrow().get(file).map(f))
}

/// Runs `f` on a device's model, building it on first use (each of its parts is built when first
/// asked for: see `view_model`).
pub fn with_model<R>(
    file: usize,
    device: i64,
    f: impl FnOnce(&mut DeviceModel, &Snapshot) -> R,
) -> Option<R> {
    FILES.with(|files| {
        let mut files = files.borrow_mut();
        let open = files.get_mut(file)?;
        if !open.devices.contains(&device) {
            return None;
        }
        let snapshot = &open.snapshot;
        let model = open
            .models
            .entry(device)
            .or_insert_with(|| DeviceModel::new(snapshot, device));
        Some(f(model, &open.snapshot))
    })
}
