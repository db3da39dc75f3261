//! The hot path: agent-API routes, upstream clients, streaming relay with a tee, sessions, auth.

pub mod seams;
