//! A snapshot handed from a reader to a receiver while it is still being read: the page's worker
//! parses, the page receives. The trace rows go as they are read ([`Sender::rows`]), the rest at the end
//! ([`Sender::finish`]); the receiver appends the rows to its table and replays them for the block
//! lifetimes as they come ([`Receiver::rows`]), so that when the last message arrives the work left is
//! small ([`Receiver::finish_sliced`]). Whatever the input, the snapshot received is the one the reader
//! read; the lifetimes are the ones [`Lifetimes::of`] gives on it, or `None` where the rows streamed are
//! not simply its main device's trace (several devices' traces, rows out of file order), and the
//! receiver works them out again.

use crate::analysis::lifetimes::{Kind, Lifetimes, Replay};
use crate::batch::Pause;
use crate::codec::{self, DecodeError, Rows};
use crate::model::DeviceTrace;
use crate::{PushReader, ReadError, Snapshot};

/// The reader's side: which rows have gone.
#[derive(Debug, Default)]
pub struct Sender {
    sent: usize,
}

impl Sender {
    pub fn new() -> Sender {
        Sender::default()
    }

    /// The rows `reader` has read since the last call, encoded ([`codec::encode_rows`]), when there
    /// are at least `min` of them.
    pub fn rows(&mut self, reader: &PushReader, min: usize) -> Option<Vec<u8>> {
        let entries = reader.entries()?;
        if entries.len() < self.sent.saturating_add(min.max(1)) {
            return None;
        }
        let range = self.sent..entries.len();
        self.sent = entries.len();
        Some(codec::encode_rows(entries, range.clone(), range.start))
    }

    /// Finishes `reader`: the last rows, to send in this order, then the snapshot (the rows apart when
    /// the ones sent make up its traces, else in it).
    pub fn finish(self, reader: PushReader) -> Result<(Vec<Vec<u8>>, Vec<u8>), ReadError> {
        let (snapshot, consecutive) = reader.finish_streamed()?;
        if !consecutive {
            return Ok((Vec::new(), codec::encode_with(&snapshot, Rows::Inline)));
        }
        // Rows read after the last call lie in the traces now: each trace is the next run of rows.
        let mut last = Vec::new();
        let mut offset = 0usize;
        for t in &snapshot.device_traces {
            let end = offset + t.len();
            let from = self.sent.max(offset);
            if end > from {
                last.push(codec::encode_rows(t, from - offset..t.len(), from));
            }
            offset = end;
        }
        Ok((last, codec::encode_with(&snapshot, Rows::Streamed)))
    }
}

/// The receiver's side: the rows so far, and their replay as one device's block lifetimes.
pub struct Receiver {
    rows: DeviceTrace,
    replay: Replay,
}

impl Default for Receiver {
    fn default() -> Self {
        Receiver::new()
    }
}

impl Receiver {
    pub fn new() -> Receiver {
        Receiver {
            rows: DeviceTrace::default(),
            replay: Replay::new(Kind::Blocks, 0, 0),
        }
    }

    /// Rows received so far.
    pub fn received(&self) -> usize {
        self.rows.len()
    }

    /// Room for `rows` in all and an eighth more, when there is less (only a hint: tables of millions
    /// that grow by doubling copy themselves whole in one call, and an estimate that creeps up by a
    /// little should not copy them at every step).
    pub fn expect(&mut self, rows: usize) {
        if rows <= self.rows.action.capacity() {
            return;
        }
        let more = rows
            .saturating_add(rows / 8)
            .saturating_sub(self.rows.len());
        self.rows.reserve(more);
        self.replay.reserve(more / 2, more / 2);
    }

    /// Appends rows [`Sender::rows`] encoded, and replays them.
    pub fn rows(&mut self, bytes: &[u8]) -> Result<(), DecodeError> {
        let start = self.rows.len();
        codec::decode_rows_into(bytes, &mut self.rows)?;
        self.replay.feed(&self.rows, start..self.rows.len());
        Ok(())
    }

    /// The snapshot from [`Sender::finish`]'s encoding (`input`, `total` bytes), with its main
    /// device's block lifetimes when the rows replayed are that device's trace.
    pub async fn finish_sliced<R: std::io::Read, P: Pause>(
        self,
        input: R,
        total: usize,
        pause: &mut P,
    ) -> Result<(Snapshot, Option<Lifetimes>), DecodeError> {
        let Receiver { rows, replay } = self;
        let received = rows.len();
        let (snapshot, where_rows) =
            codec::decode_sliced_with(input, total, Some(rows), pause).await?;
        let device = snapshot.default_device().unwrap_or(0);
        let alone = snapshot
            .device_traces
            .iter()
            .enumerate()
            .all(|(d, t)| t.is_empty() || d as i64 == device);
        let whole = snapshot.trace(device).len() == received && replay.fed() == received;
        if where_rows != Rows::Streamed || !alone || !whole {
            return Ok((snapshot, None));
        }
        let lifetimes = replay.finish_sliced(&snapshot, device, pause).await;
        Ok((snapshot, Some(lifetimes)))
    }
}
