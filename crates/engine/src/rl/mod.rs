//! Learning from weights in modes `rl` and `madmax` (docs/learning-from-weights.md): the
//! trained model serves main turns through the backend's sampler, every turn becomes a
//! sample, a judge scores it, and the trainer steps and swaps the serving weights without
//! blocking chat.

mod connect;
mod loops;
pub mod rollout;
mod serve;
mod service;
pub mod settings;
mod view;

use std::sync::Arc;

pub use loops::{StepReport, train_now};
pub use serve::TrainedModel;
pub use service::{Generation, Learning, Link};
pub use settings::{RlSettings, resolve, wants_rl};
pub use view::{LearningView, Served, off as view_off};

use crate::schedule::Gate;
use crate::supervise::Supervisor;

impl Learning {
    /// Connects in the background and starts the judge and the trainer. `generation` is the
    /// skill library's generation now; `gate` holds steps for training windows (`madmax`).
    pub fn spawn(&self, generation: Generation, gate: Gate, tasks: &Supervisor) {
        let _ = self.inner.generation.set(generation);
        let connect = connect::connect_until_ready(self.clone(), tasks.shutdown_token());
        tasks.spawn("rl connect", connect);
        loops::spawn_judge(self.clone(), tasks);
        loops::spawn_trainer(self.clone(), gate, tasks);
    }

    /// The proxy's view of the trained model.
    pub fn model(&self) -> Arc<TrainedModel> {
        Arc::new(TrainedModel(self.clone()))
    }
}
