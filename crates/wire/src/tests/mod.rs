mod assemble;
mod fixtures;
mod props;
mod request;
mod response;
mod sse;
mod stream;
mod types;
