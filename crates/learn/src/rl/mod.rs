//! Reinforcement learning from live turns: samples, the judge, advantages and datums, the
//! trainer step and the serving sampler slot.

pub mod advantage;
mod grader_http;
pub mod judge;
pub mod observe;
pub mod samples;
pub mod slot;
mod stop;
pub mod teacher;
pub mod trainer;
pub mod verdict;
