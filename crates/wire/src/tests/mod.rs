mod sse;
mod types;
