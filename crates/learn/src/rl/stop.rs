//! A stop signal checked between backend calls without waiting on it.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

/// Wraps any future (the training window closing, the user coming back) so it can be
/// asked "has it fired?" at safe points.
pub(crate) struct StopSignal<F> {
    fut: Pin<Box<F>>,
    fired: bool,
}

impl<F: Future> StopSignal<F> {
    pub(crate) fn new(fut: F) -> Self {
        Self {
            fut: Box::pin(fut),
            fired: false,
        }
    }

    /// Whether the signal has fired; polls the future once (never after it completed).
    pub(crate) fn fired(&mut self) -> bool {
        if !self.fired {
            let mut cx = Context::from_waker(Waker::noop());
            self.fired = matches!(self.fut.as_mut().poll(&mut cx), Poll::Ready(_));
        }
        self.fired
    }
}
