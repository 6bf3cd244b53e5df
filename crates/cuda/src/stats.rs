//! Host <-> device transfer accounting.
//!
//! Every copy the backend makes between host and device memory is recorded here, by stage (e.g. "commit",
//! "merkle-open") and by table (the name the caller gave the trace). Tests assert on it: a trace built resident
//! on the device must show zero host->device bytes.

use std::collections::BTreeMap;

/// Where a table's trace came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceOrigin {
    /// Copied from a host matrix (counted in `h2d`).
    Uploaded,
    /// Already resident on the device (built there); no upload.
    Resident,
}

/// Bytes moved for one (stage, table) pair.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TransferBytes {
    /// Host -> device bytes.
    pub h2d: u64,
    /// Device -> host bytes.
    pub d2h: u64,
}

/// Transfer statistics: bytes per stage and per table, and the origin of each table's trace.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TransferStats {
    /// (stage, table) -> bytes. Table "" is traffic not tied to one table (twiddles, roots, descriptors).
    pub bytes: BTreeMap<(String, String), TransferBytes>,
    /// (stage, table) -> bytes that the previous design copied and this one no longer does (e.g. stage
    /// "host-copy": a resident main trace never downloaded because its aux trace was built on the device;
    /// stage "aux-upload": an aux trace built resident instead of uploaded for the aux commitment).
    pub avoided: BTreeMap<(String, String), TransferBytes>,
    /// table -> how its trace reached the device.
    pub origin: BTreeMap<String, TraceOrigin>,
}

impl TransferStats {
    /// Records `bytes` host -> device.
    pub fn add_h2d(&mut self, stage: &str, table: &str, bytes: u64) {
        self.entry(stage, table).h2d += bytes;
    }

    /// Records `bytes` device -> host.
    pub fn add_d2h(&mut self, stage: &str, table: &str, bytes: u64) {
        self.entry(stage, table).d2h += bytes;
    }

    /// Records `bytes` host -> device that are no longer copied (see [`TransferStats::avoided`]).
    pub fn add_avoided_h2d(&mut self, stage: &str, table: &str, bytes: u64) {
        self.avoided
            .entry((stage.to_string(), table.to_string()))
            .or_default()
            .h2d += bytes;
    }

    /// Records `bytes` device -> host that are no longer copied (see [`TransferStats::avoided`]).
    pub fn add_avoided_d2h(&mut self, stage: &str, table: &str, bytes: u64) {
        self.avoided
            .entry((stage.to_string(), table.to_string()))
            .or_default()
            .d2h += bytes;
    }

    /// Total bytes no longer copied, both directions summed separately.
    pub fn total_avoided(&self) -> TransferBytes {
        let mut t = TransferBytes::default();
        for b in self.avoided.values() {
            t.h2d += b.h2d;
            t.d2h += b.d2h;
        }
        t
    }

    /// Records how `table`'s trace reached the device.
    pub fn set_origin(&mut self, table: &str, origin: TraceOrigin) {
        self.origin.insert(table.to_string(), origin);
    }

    fn entry(&mut self, stage: &str, table: &str) -> &mut TransferBytes {
        self.bytes
            .entry((stage.to_string(), table.to_string()))
            .or_default()
    }

    /// Total host -> device bytes.
    pub fn total_h2d(&self) -> u64 {
        self.bytes.values().map(|b| b.h2d).sum()
    }

    /// Total device -> host bytes.
    pub fn total_d2h(&self) -> u64 {
        self.bytes.values().map(|b| b.d2h).sum()
    }

    /// Bytes of one table summed over stages.
    pub fn table(&self, table: &str) -> TransferBytes {
        let mut t = TransferBytes::default();
        for ((_, tb), b) in &self.bytes {
            if tb == table {
                t.h2d += b.h2d;
                t.d2h += b.d2h;
            }
        }
        t
    }

    /// Bytes of one stage summed over tables.
    pub fn stage(&self, stage: &str) -> TransferBytes {
        let mut t = TransferBytes::default();
        for ((st, _), b) in &self.bytes {
            if st == stage {
                t.h2d += b.h2d;
                t.d2h += b.d2h;
            }
        }
        t
    }

    /// Adds all of `other` into `self`.
    pub fn merge(&mut self, other: &TransferStats) {
        for ((s, t), b) in &other.bytes {
            let e = self.entry(s, t);
            e.h2d += b.h2d;
            e.d2h += b.d2h;
        }
        for (t, o) in &other.origin {
            self.origin.insert(t.clone(), *o);
        }
        for ((s, t), b) in &other.avoided {
            let e = self.avoided.entry((s.clone(), t.clone())).or_default();
            e.h2d += b.h2d;
            e.d2h += b.d2h;
        }
    }
}

impl std::fmt::Display for TransferStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "{:<16} {:<16} {:>14} {:>14}",
            "stage", "table", "h2d bytes", "d2h bytes"
        )?;
        for ((s, t), b) in &self.bytes {
            writeln!(f, "{s:<16} {t:<16} {:>14} {:>14}", b.h2d, b.d2h)?;
        }
        for (t, o) in &self.origin {
            writeln!(f, "table {t}: {o:?}")?;
        }
        for ((s, t), b) in &self.avoided {
            writeln!(f, "avoided {s:<16} {t:<16} {:>14} {:>14}", b.h2d, b.d2h)?;
        }
        let a = self.total_avoided();
        if a.h2d + a.d2h > 0 {
            writeln!(f, "avoided total: h2d {} d2h {}", a.h2d, a.d2h)?;
        }
        Ok(())
    }
}
