//! Parts of a device's model built in the background, on the page's thread in slices of about
//! `slices::SLICE_MS` (see `slices::Pauser`): a timeline's layout at another detail, the segment
//! timeline, the categories, the analysis report. The page answers input and draws frames meanwhile, and what is
//! on screen stays until the new part takes its place.
//!
//! A part is built once however often it is asked for while it is being built. A layout no longer
//! wanted (the slider moved on) or a part of a file that was closed is dropped at its next slice. The
//! snapshot and the block lifetimes are shared (`Rc`) with the store, so a build never holds the store
//! borrowed across a pause.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::rc::Rc;
use std::task::Poll;

use memograph_snapshot::analysis::lifetimes::Lifetimes;
use memograph_snapshot::analysis::search::{search_sliced, Query};
use memograph_snapshot::Snapshot;

use crate::view_model::{self, AnalysisKey};

use super::slices::Pauser;
use super::store;

/// What to build.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Part {
    /// The device's model: its block lifetimes and the timeline's first layout (the first device's is
    /// built at load).
    Model,
    /// The block timeline's layout at this detail (0.0–1.0).
    Layout(f64),
    Segments,
    /// What the Allocator State History needs: the segment timeline (first, when it is not built yet)
    /// and the entry versions and rounding waste.
    History,
    Categories,
    /// The analysis report for this key (the categories first, when they are not built yet).
    Report(AnalysisKey),
    /// The bands of the highlight the block timeline wants and has not read (named by its address:
    /// another highlight abandons it); see `TimelineModel::lit_for_frame`.
    Lit(usize),
}

impl Part {
    /// Parts of one kind replace each other: a new detail abandons the layout of the old one.
    fn same_kind(&self, other: &Part) -> bool {
        std::mem::discriminant(self) == std::mem::discriminant(other)
    }
}

struct Running {
    id: u64,
    device: i64,
    part: Part,
    wanted: Rc<Cell<bool>>,
    /// Called once the part is in place: one per request.
    done: Vec<Rc<dyn Fn()>>,
}

thread_local! {
    static RUNNING: RefCell<Vec<Running>> = const { RefCell::new(Vec::new()) };
}

/// Builds `part` of device `device` of open file `file` in the background, unless it is being built,
/// and calls `done` in a task after it is in place (also when another request started the build). A
/// part of the same kind being built for something else (a layout at another detail) is abandoned.
pub fn request(file: usize, device: i64, part: Part, done: Rc<dyn Fn()>) {
    let Some(id) = store::with_file(file, |f| f.id) else {
        return;
    };
    let wanted = Rc::new(Cell::new(true));
    let fresh = RUNNING.with(|r| {
        let mut r = r.borrow_mut();
        let same = r
            .iter_mut()
            .find(|j| j.id == id && j.device == device && j.part == part);
        if let Some(j) = same {
            j.done.push(done.clone());
            return false;
        }
        r.retain(|j| {
            let replaced = j.id == id && j.device == device && j.part.same_kind(&part);
            if replaced {
                j.wanted.set(false);
            }
            !replaced
        });
        r.push(Running {
            id,
            device,
            part,
            wanted: wanted.clone(),
            done: vec![done.clone()],
        });
        true
    });
    if !fresh {
        return;
    }
    leptos::task::spawn_local(async move {
        let built = unless_abandoned(&wanted, id, build(id, device, part)).await;
        let done = RUNNING.with(|r| {
            let mut r = r.borrow_mut();
            let at = r.iter().position(|j| Rc::ptr_eq(&j.wanted, &wanted));
            at.map(|at| r.remove(at).done).unwrap_or_default()
        });
        if built.flatten().is_some() {
            // What the part's arrival redraws gets a task of its own: with the build's last slice,
            // opening the analyses of a 1 GB snapshot made one task of 72-101 ms.
            super::slices::next_task().await;
            for d in done {
                d();
            }
        }
    });
}

thread_local! {
    /// The open files (by id) whose comparison digests are being made.
    static DIGESTING: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
}

/// Makes the comparison digests of open file `file` in the background, unless they are made or being
/// made, and calls `done` in a task of its own once they are in place (a 190 MB file's took one task
/// of 434 ms when they were made at once, as the Steps view asked).
pub fn digests(file: usize, done: Rc<dyn Fn()>) {
    let Some((id, snapshot, name, bytes, made)) = store::with_file(file, |f| {
        let made = f.digests.get().is_some();
        (f.id, f.snapshot.clone(), f.name.clone(), f.bytes, made)
    }) else {
        return;
    };
    let fresh = DIGESTING.with(|d| {
        let mut d = d.borrow_mut();
        let fresh = !made && !d.contains(&id);
        if fresh {
            d.push(id);
        }
        fresh
    });
    if !fresh {
        return;
    }
    leptos::task::spawn_local(async move {
        let rules = memograph_snapshot::analysis::categories::Rules::built_in();
        let mut pauser = Pauser::new();
        let made = memograph_snapshot::analysis::compare::digests_sliced(
            &snapshot,
            &rules,
            &name,
            bytes,
            &mut pauser,
        )
        .await;
        drop(snapshot);
        store::set_digests(id, made);
        DIGESTING.with(|d| d.borrow_mut().retain(|&x| x != id));
        super::slices::next_task().await;
        done();
    });
}

/// Whether `part` of device `device` of open file `file` is in place.
pub fn is_built(file: usize, device: i64, part: Part) -> bool {
    store::with_file(file, |f| f.id).is_some_and(|id| is_built_of(id, device, part))
}

/// [`is_built`] of the open file `id`.
fn is_built_of(id: u64, device: i64, part: Part) -> bool {
    store::with_built_model(id, device, |m, _| match part {
        Part::Model => true,
        Part::Layout(detail) => m.blocks.is_at(detail),
        Part::Segments => m.timeline_parts(true, false).0.is_some(),
        Part::History => m.built_history(),
        Part::Categories => m.built_categories().is_some(),
        Part::Report(key) => m.built_report(key).is_some(),
        Part::Lit(_) => m.blocks.lit_wanted().is_none(),
    })
    .unwrap_or(false)
}

/// Whether `part` of device `device` of open file `file` is being built.
pub fn is_building(file: usize, device: i64, part: Part) -> bool {
    store::with_file(file, |f| running(f.id, device, part)).unwrap_or(false)
}

fn running(id: u64, device: i64, part: Part) -> bool {
    RUNNING.with(|r| {
        r.borrow()
            .iter()
            .any(|j| j.id == id && j.device == device && j.part == part)
    })
}

/// Builds `part` and puts it in place; `None` when the file or its model is gone.
async fn build(id: u64, device: i64, part: Part) -> Option<()> {
    let pause = &mut Pauser::new();
    pause.start().await;
    let (snapshot, lifetimes) = model_of(id, device, part != Part::Model, pause).await?;
    match part {
        Part::Model => Some(()),
        Part::Layout(detail) => {
            use memograph_snapshot::analysis::timeline::timeline_layout_sliced;
            let layout = timeline_layout_sliced(&lifetimes, detail, pause).await;
            let summary = view_model::SummaryOutline::new_sliced(&layout.summary, pause).await;
            let set = |m: &mut view_model::DeviceModel, _: &_| {
                m.blocks.set_layout(layout, summary, detail)
            };
            store::with_built_model(id, device, set)
        }
        Part::Segments => {
            let segments = view_model::segment_timeline(&snapshot, device, pause).await;
            store::with_built_model(id, device, |m, _| m.set_segments(segments))
        }
        Part::History => {
            // The segment timeline first: the one being built, else built here.
            while running(id, device, Part::Segments) {
                super::slices::next_task().await;
            }
            let segmented =
                |m: &mut view_model::DeviceModel, _: &_| m.timeline_parts(true, false).0.is_some();
            if !store::with_built_model(id, device, segmented)? {
                let made = view_model::segment_timeline(&snapshot, device, pause).await;
                store::with_built_model(id, device, |m, _| m.set_segments(made))?;
            }
            let history = view_model::history(&snapshot, &lifetimes, pause).await;
            store::with_built_model(id, device, |m, _| m.set_history(history))
        }
        Part::Categories => {
            let categories = view_model::categorise(&snapshot, &lifetimes, pause).await;
            store::with_built_model(id, device, |m, _| m.set_categories(categories))
        }
        Part::Report(key) => {
            let categories = categories_of(id, device, pause).await?;
            let report = view_model::report(&snapshot, &lifetimes, &categories, key, pause).await;
            store::with_built_model(id, device, |m, _| m.set_report(key, report))
        }
        Part::Lit(_) => {
            let Some((lit, layout)) =
                store::with_built_model(id, device, |m, _| m.blocks.lit_wanted())?
            else {
                return Some(());
            };
            let bands = view_model::lit::LitBands::of_sliced(&layout, &lit, pause).await;
            store::with_built_model(id, device, |m, _| m.blocks.keep_lit(&lit, &layout, bands))
        }
    }
}

/// The snapshot and block lifetimes of device `device`'s model of the open file `id`: the model
/// built, else (when `wait`) the one being built once it is, else built here and put in place.
async fn model_of(
    id: u64,
    device: i64,
    wait: bool,
    pause: &mut Pauser,
) -> Option<(Rc<Snapshot>, Rc<Lifetimes>)> {
    while wait && running(id, device, Part::Model) {
        super::slices::next_task().await;
    }
    if let Some(built) = store::shared(id, device) {
        return Some(built);
    }
    let snapshot = store::snapshot_of(id, device)?;
    let lifetimes = Lifetimes::of_sliced(&snapshot, device, pause).await;
    let model = view_model::DeviceModel::of_lifetimes_sliced(&snapshot, device, lifetimes, pause);
    store::add_model(id, device, model.await)?;
    store::shared(id, device)
}

/// A find running: who asked (the search box, a link's pinned allocation) and whether it is still
/// wanted.
type Finding = (&'static str, Rc<Cell<bool>>);

thread_local! {
    static FINDING: RefCell<Vec<Finding>> = const { RefCell::new(Vec::new()) };
}

/// Runs `query` over device `device` of open file `file` in the background, in slices (once its
/// categories are built: text queries match them too), makes what it shows of the allocations found
/// and their bytes with `prepare` in a task after the last slice, and hands that to `then` in a task of
/// its own (a frame that marks a million allocations is a task's worth). A later find for the same
/// `asker` abandons this one: `then` is called for the last query only.
pub fn find<T: 'static>(
    file: usize,
    device: i64,
    asker: &'static str,
    query: Query,
    prepare: impl FnOnce(Vec<u32>, u64) -> T + 'static,
    then: impl FnOnce(T) + 'static,
) {
    let Some(id) = store::with_file(file, |f| f.id) else {
        return;
    };
    stop_finding(asker);
    let wanted = Rc::new(Cell::new(true));
    FINDING.with(|f| f.borrow_mut().push((asker, wanted.clone())));
    leptos::task::spawn_local(async move {
        let work = async {
            let pause = &mut Pauser::new();
            let (snapshot, lifetimes) = model_of(id, device, true, pause).await?;
            let categories = categories_of(id, device, pause).await?;
            let of = Some((categories.of.as_slice(), categories.names.as_slice()));
            let found = search_sliced(&snapshot, &lifetimes, of, &query, pause).await;
            let bytes = bytes_of(&lifetimes, &found, pause).await;
            Some((found, bytes))
        };
        let still_wanted = || wanted.get() && store::index_of(id).is_some();
        let found = unless_abandoned(&wanted, id, work).await.flatten();
        if found.is_some() {
            // `prepare` takes every allocation found: a task of its own, not the search's last
            // slice (a search of a 2 GB snapshot finds two million; both made a task of 110 ms).
            super::slices::next_task().await;
        }
        let made = found
            .filter(|_| still_wanted())
            .map(|(found, bytes)| prepare(found, bytes));
        if made.is_some() {
            // The bands of what was found, when `prepare` asked for them (too many to read in a frame).
            let lit = Part::Lit(0);
            if !is_built_of(id, device, lit) {
                unless_abandoned(&wanted, id, build(id, device, lit)).await;
            }
            // What the result sets off (a frame with it highlighted) runs in a task of its own, not
            // in the search's last slice; a later find meanwhile still replaces it.
            super::slices::next_task().await;
        }
        FINDING.with(|f| f.borrow_mut().retain(|(_, w)| !Rc::ptr_eq(w, &wanted)));
        if let Some(made) = made.filter(|_| still_wanted()) {
            then(made);
        }
    });
}

/// The bytes of allocations `found`, summed a batch at a time: a search of a 2 GB snapshot finds two
/// million, scattered over a table of six (summed in `prepare`'s task, they made it 40 ms).
async fn bytes_of(lifetimes: &Lifetimes, found: &[u32], pause: &mut Pauser) -> u64 {
    let all = &lifetimes.allocations;
    let mut bytes = 0u64;
    let sum = |range: std::ops::Range<usize>| {
        for &a in &found[range] {
            bytes = bytes.saturating_add(all.get(a as usize).map_or(0, |a| a.size));
        }
    };
    memograph_snapshot::batch::ranges_paused(found.len(), sum, pause).await;
    bytes
}

/// Abandons the find `asker` is running, if any (its `then` is never called).
pub fn stop_finding(asker: &'static str) {
    FINDING.with(|f| {
        f.borrow_mut().retain(|(who, old)| {
            let replaced = *who == asker;
            if replaced {
                old.set(false);
            }
            !replaced
        })
    });
}

/// The device's categories: those built, else those being built once they are (never built twice),
/// else built here and put in place.
async fn categories_of(
    id: u64,
    device: i64,
    pause: &mut Pauser,
) -> Option<Rc<view_model::Categories>> {
    while running(id, device, Part::Categories) {
        super::slices::next_task().await;
    }
    if let Some(built) = store::with_built_model(id, device, |m, _| m.shared_categories())? {
        return Some(built);
    }
    let (snapshot, lifetimes) = store::shared(id, device)?;
    let made = Rc::new(view_model::categorise(&snapshot, &lifetimes, pause).await);
    store::with_built_model(id, device, |m, _| m.set_categories(made.clone()))?;
    Some(made)
}

/// `work`'s output, or `None` once it is no longer `wanted` or its file is closed (checked each time
/// it wakes; `work` is dropped then, with what it had built).
async fn unless_abandoned<T>(
    wanted: &Cell<bool>,
    id: u64,
    work: impl Future<Output = T>,
) -> Option<T> {
    let mut work = std::pin::pin!(work);
    std::future::poll_fn(|cx| {
        if !wanted.get() || store::index_of(id).is_none() {
            return Poll::Ready(None);
        }
        work.as_mut().poll(cx).map(Some)
    })
    .await
}
