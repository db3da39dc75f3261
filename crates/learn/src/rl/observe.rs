//! What the judge's and the teacher's calls cost: each call's answer (or its failure) is
//! handed to the engine, which counts it with the rest of learning's calls. The calls are
//! the user's money like any other learning call.

use std::sync::Arc;

use serde_json::Value;

/// What an observer is given: the answer's JSON, or `None` when no usable answer came.
type Observe = dyn Fn(Option<&Value>) + Send + Sync;

/// Called once per HTTP call.
#[derive(Clone)]
pub struct CallObserver(Arc<Observe>);

impl CallObserver {
    pub fn new(f: impl Fn(Option<&Value>) + Send + Sync + 'static) -> Self {
        CallObserver(Arc::new(f))
    }

    pub(crate) fn call(observer: &Option<CallObserver>, answer: Option<&Value>) {
        if let Some(o) = observer {
            (o.0)(answer);
        }
    }
}

impl std::fmt::Debug for CallObserver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CallObserver")
    }
}
