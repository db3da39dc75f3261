mod assemble;
mod fixtures;
mod request;
mod response;
mod sse;
mod stream;
mod types;
