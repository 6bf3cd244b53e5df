//! Stage timing: explicit, thread-local spans.
//!
//! The prover marks its stages with [`span`] guards (`let _s = profile::span("quotient");`). A span is a no-op
//! (one thread-local read) unless a recording is active on the current thread: [`record`] runs a closure with
//! a fresh [`Profile`] recorder and returns what it collected. Spans nest; a span's name in the profile is its
//! path, `parent/child`. Spans of the same path are merged (times summed, `calls` counted), in the order their
//! path was first entered. Only spans opened on the recording thread count (the prover's stages are entered on
//! the caller's thread; rayon workers inside a stage are covered by the stage's wall time).
//!
//! ```
//! use zkrv_stark::profile;
//! let (v, p) = profile::record(None, || {
//!     let _s = profile::span("outer");
//!     let _t = profile::span("inner");
//!     42
//! });
//! assert_eq!(v, 42);
//! assert_eq!(p.stages[1].name, "outer/inner");
//! ```

use std::cell::RefCell;
use std::time::{Duration, Instant};

/// One stage of a [`Profile`]: total wall time of all spans with this path.
#[derive(Clone, Debug, PartialEq)]
pub struct Stage {
    /// Span path, `parent/child` (e.g. `prove/main commit/LDE`).
    pub name: String,
    /// Nesting depth (0 for a top-level span).
    pub depth: usize,
    /// Wall time summed over the calls, seconds.
    pub secs: f64,
    /// Number of spans merged into this stage.
    pub calls: u64,
}

/// Stages recorded by [`record`], in order of first entry.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Profile {
    pub stages: Vec<Stage>,
}

impl Profile {
    /// Total seconds of the stage named `name` (its full path), if recorded.
    pub fn secs(&self, name: &str) -> Option<f64> {
        self.stages.iter().find(|s| s.name == name).map(|s| s.secs)
    }

    /// Appends (or adds to) a stage measured outside any span (e.g. by a caller that timed it itself).
    pub fn add(&mut self, name: &str, secs: f64) {
        match self.stages.iter_mut().find(|s| s.name == name) {
            Some(s) => {
                s.secs += secs;
                s.calls += 1;
            }
            None => self.stages.push(Stage {
                name: name.to_string(),
                depth: name.matches('/').count(),
                secs,
                calls: 1,
            }),
        }
    }
}

/// Called with a span's path each time a span starts (e.g. to update a progress bar).
pub type Listener = Box<dyn Fn(&str)>;

struct Recorder {
    profile: Profile,
    /// Paths of the open spans, innermost last.
    open: Vec<String>,
    listener: Option<Listener>,
}

thread_local! {
    static RECORDER: RefCell<Option<Recorder>> = const { RefCell::new(None) };
}

/// Runs `f` with a recording active on this thread and returns its value and the recorded profile. A
/// recording already active (nested `record`) is suspended during `f` and restored after. `listener`, if
/// any, is called with each span's path when it starts.
pub fn record<T>(listener: Option<Listener>, f: impl FnOnce() -> T) -> (T, Profile) {
    let prev = RECORDER.with(|r| {
        r.borrow_mut().replace(Recorder {
            profile: Profile::default(),
            open: Vec::new(),
            listener,
        })
    });
    // Restore the previous recorder even if `f` unwinds.
    struct Restore(Option<Option<Recorder>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            if let Some(prev) = self.0.take() {
                RECORDER.with(|r| *r.borrow_mut() = prev);
            }
        }
    }
    let mut restore = Restore(Some(prev));
    let v = f();
    let mine = RECORDER.with(|r| r.borrow_mut().take());
    if let Some(prev) = restore.0.take() {
        RECORDER.with(|r| *r.borrow_mut() = prev);
    }
    (v, mine.map(|m| m.profile).unwrap_or_default())
}

/// A running span; records its wall time when dropped. See [`span`].
#[must_use = "a span measures until it is dropped"]
pub struct Span {
    /// `None` when no recording was active at the start.
    start: Option<Instant>,
}

/// Starts a span named `name` (a stage label, without `/`). No-op unless [`record`] is active on this thread.
pub fn span(name: &str) -> Span {
    let active = RECORDER.with(|r| {
        let mut r = r.borrow_mut();
        let Some(rec) = r.as_mut() else {
            return false;
        };
        let path = match rec.open.last() {
            Some(p) => format!("{p}/{name}"),
            None => name.to_string(),
        };
        if let Some(l) = &rec.listener {
            l(&path);
        }
        if !rec.profile.stages.iter().any(|s| s.name == path) {
            rec.profile.stages.push(Stage {
                name: path.clone(),
                depth: rec.open.len(),
                secs: 0.0,
                calls: 0,
            });
        }
        rec.open.push(path);
        true
    });
    Span {
        start: active.then(Instant::now),
    }
}

/// Runs `f` inside a span named `name`.
pub fn time<T>(name: &str, f: impl FnOnce() -> T) -> T {
    let _s = span(name);
    f()
}

impl Drop for Span {
    fn drop(&mut self) {
        let Some(start) = self.start else { return };
        let d: Duration = start.elapsed();
        RECORDER.with(|r| {
            let mut r = r.borrow_mut();
            let Some(rec) = r.as_mut() else { return };
            let Some(path) = rec.open.pop() else { return };
            if let Some(s) = rec.profile.stages.iter_mut().find(|s| s.name == path) {
                s.secs += d.as_secs_f64();
                s.calls += 1;
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_spans_merge_by_path() {
        let ((), p) = record(None, || {
            for _ in 0..3 {
                let _a = span("a");
                let _b = span("b");
                std::thread::sleep(Duration::from_millis(2));
            }
            let _c = span("c");
        });
        let names: Vec<_> = p.stages.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["a", "a/b", "c"]);
        assert_eq!(p.stages[1].calls, 3);
        assert_eq!(p.stages[1].depth, 1);
        assert!(p.secs("a").unwrap() >= p.secs("a/b").unwrap());
        assert!(p.secs("a/b").unwrap() >= 0.006);
    }

    #[test]
    fn spans_outside_a_recording_are_ignored() {
        drop(span("x"));
        let ((), p) = record(None, || {});
        assert!(p.stages.is_empty());
    }

    #[test]
    fn listener_sees_span_starts() {
        use std::rc::Rc;
        let seen = Rc::new(RefCell::new(Vec::new()));
        let s2 = seen.clone();
        let ((), _) = record(
            Some(Box::new(move |p: &str| s2.borrow_mut().push(p.to_string()))),
            || time("a", || drop(span("b"))),
        );
        assert_eq!(*seen.borrow(), ["a", "a/b"]);
    }
}
