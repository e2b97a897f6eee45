//! The index structures the stacking uses: counts per band with prefix sums (a Fenwick tree), the
//! drift tree (how far each open band has drifted since it was last drawn, and those past a
//! threshold), and range maxima.

use crate::batch::Pause;

/// Counts per band with prefix sums (a Fenwick tree).
pub(super) struct Fenwick {
    pub(super) tree: Vec<i64>,
}

impl Fenwick {
    pub(super) fn add(&mut self, i: usize, v: i64) {
        let mut i = i + 1;
        while i < self.tree.len() {
            self.tree[i] += v;
            i += i & i.wrapping_neg();
        }
    }

    /// Sum over `[0, i)`.
    pub(super) fn prefix(&self, i: usize) -> u64 {
        let (mut i, mut s) = (i, 0i64);
        while i > 0 {
            s += self.tree[i];
            i &= i - 1;
        }
        s.max(0) as u64
    }

    pub(super) fn point(&self, i: usize) -> u64 {
        self.prefix(i + 1) - self.prefix(i)
    }
}

/// Each band's drift (bytes its bottom fell since it last reported) with range adds and "every band at
/// or over a threshold": a segment tree of maxima with lazy adds. Bands not open hold [`INACTIVE`].
pub(super) struct DriftTree {
    pub(super) n: usize,
    pub(super) max: Vec<i64>,
    pub(super) lazy: Vec<i64>,
}

const INACTIVE: i64 = i64::MIN / 2;

impl DriftTree {
    /// Written a slice at a time, awaiting `pause` between (at 3 M bands it is 130 MB to write).
    pub(super) async fn new<P: Pause>(n: usize, pause: &mut P) -> DriftTree {
        let size = 2 * n.next_power_of_two().max(1);
        DriftTree {
            n,
            max: crate::batch::filled(INACTIVE, size, pause).await,
            lazy: crate::batch::filled(0, size, pause).await,
        }
    }

    pub(super) fn apply(&mut self, node: usize, v: i64) {
        // Inactive leaves stay inactive whatever is added (drift never exceeds the live bytes).
        if self.max[node] > INACTIVE {
            self.max[node] = self.max[node].saturating_add(v);
        }
        self.lazy[node] = self.lazy[node].saturating_add(v);
    }

    pub(super) fn push(&mut self, node: usize) {
        let v = std::mem::take(&mut self.lazy[node]);
        if v != 0 {
            self.apply(2 * node, v);
            self.apply(2 * node + 1, v);
        }
    }

    pub(super) fn pull(&mut self, node: usize) {
        self.max[node] = self.max[2 * node].max(self.max[2 * node + 1]);
    }

    /// Sets band `i`'s leaf (drift 0 or inactive), pushing pending adds down its path.
    pub(super) fn set(&mut self, i: usize, v: i64) {
        let (mut node, mut lo, mut hi) = (1, 0, self.max.len() / 2);
        while hi - lo > 1 {
            self.push(node);
            let mid = (lo + hi) / 2;
            if i < mid {
                (node, hi) = (2 * node, mid);
            } else {
                (node, lo) = (2 * node + 1, mid);
            }
        }
        self.max[node] = v;
        self.lazy[node] = 0;
        // The path back up is the leaf's ancestors: halving its index.
        while node > 1 {
            node /= 2;
            self.pull(node);
        }
    }

    pub(super) fn activate(&mut self, i: usize) {
        self.set(i, 0);
    }

    pub(super) fn deactivate(&mut self, i: usize) {
        self.set(i, INACTIVE);
    }

    pub(super) fn is_active(&self, i: usize) -> bool {
        // A leaf's own value is exact up to the lazies above it, which never make it inactive.
        i < self.n && self.max[self.max.len() / 2 + i] > INACTIVE
    }

    /// Adds `v` to the drift of every band from `lo` on: one walk down to leaf `lo`, adding to each right
    /// child it passes by, and back up (no recursion: this runs once per free, and wasm pays for calls).
    /// Leaves past the bands are inactive and stay so.
    pub(super) fn add_from(&mut self, lo: usize, v: i64) {
        if lo >= self.n {
            return;
        }
        let (mut node, mut nlo, mut nhi) = (1, 0, self.max.len() / 2);
        while nhi - nlo > 1 {
            self.push(node);
            let mid = (nlo + nhi) / 2;
            if lo < mid {
                self.apply(2 * node + 1, v);
                (node, nhi) = (2 * node, mid);
            } else {
                (node, nlo) = (2 * node + 1, mid);
            }
        }
        self.apply(node, v);
        while node > 1 {
            node /= 2;
            self.pull(node);
        }
    }

    /// Calls `f(band, drift)` for every band from `lo` on whose drift is at least `threshold`, in band
    /// order, and resets their drift to 0.
    pub(super) fn take_at_least(
        &mut self,
        lo: usize,
        threshold: i64,
        f: &mut dyn FnMut(usize, u64),
    ) {
        let leaves = self.max.len() / 2;
        self.take_in(1, 0, leaves, lo, threshold, f);
    }

    pub(super) fn take_in(
        &mut self,
        node: usize,
        nlo: usize,
        nhi: usize,
        lo: usize,
        threshold: i64,
        f: &mut dyn FnMut(usize, u64),
    ) {
        if nhi <= lo || self.max[node] < threshold {
            return;
        }
        if nhi - nlo == 1 {
            f(nlo, self.max[node] as u64);
            self.max[node] = 0;
            return;
        }
        self.push(node);
        let mid = (nlo + nhi) / 2;
        self.take_in(2 * node, nlo, mid, lo, threshold, f);
        self.take_in(2 * node + 1, mid, nhi, lo, threshold, f);
        self.pull(node);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_drift_tree_does_what_a_plain_list_of_drifts_does() {
        // Random activations, frees (adds from a band on, then taking what reached the threshold) and
        // deactivations on trees of awkward sizes, against a list of `Option<drift>` per band.
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move |m: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % m
        };
        for n in [1usize, 2, 3, 5, 8, 13, 64, 100] {
            let mut tree = crate::batch::run_ready(DriftTree::new(n, &mut crate::batch::NoPause));
            let mut plain: Vec<Option<i64>> = vec![None; n];
            for _ in 0..2000 {
                let band = next(n as u64) as usize;
                match next(4) {
                    0 => {
                        tree.activate(band);
                        plain[band] = Some(0);
                    }
                    1 => {
                        tree.deactivate(band);
                        plain[band] = None;
                    }
                    _ => {
                        let (v, threshold) = (next(50) as i64 + 1, next(120) as i64 + 1);
                        tree.add_from(band, v);
                        for d in plain[band..].iter_mut().flatten() {
                            *d += v;
                        }
                        let mut took = Vec::new();
                        tree.take_at_least(band, threshold, &mut |b, d| took.push((b, d)));
                        let mut wanted = Vec::new();
                        for (b, d) in plain.iter_mut().enumerate().skip(band) {
                            if let Some(x) = d.filter(|&x| x >= threshold) {
                                wanted.push((b, x as u64));
                                *d = Some(0);
                            }
                        }
                        assert_eq!(took, wanted, "n {n}");
                    }
                }
                for (b, d) in plain.iter().enumerate() {
                    assert_eq!(tree.is_active(b), d.is_some(), "n {n}, band {b}");
                }
            }
        }
    }
}
