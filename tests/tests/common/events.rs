//! Reading MetaClaw's `/api/events` Server-Sent Events stream in tests.

use std::time::Duration;

use serde_json::Value;

pub struct EventStream {
    resp: reqwest::Response,
    buf: String,
}

impl EventStream {
    /// Reads events from `resp`, the answer to `GET /api/events`.
    pub fn new(resp: reqwest::Response) -> EventStream {
        EventStream {
            resp,
            buf: String::new(),
        }
    }

    /// The data of the first `event: <kind>` to arrive, within 60 s.
    pub async fn next_of(&mut self, kind: &str) -> Value {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
        let head = format!("event: {kind}");
        loop {
            while let Some(end) = self.buf.find("\n\n") {
                let frame: String = self.buf.drain(..end + 2).collect();
                if frame.lines().any(|l| l == head) {
                    let data = frame
                        .lines()
                        .find_map(|l| l.strip_prefix("data: "))
                        .unwrap();
                    return serde_json::from_str(data).unwrap();
                }
            }
            let chunk = tokio::time::timeout_at(deadline, self.resp.chunk())
                .await
                .unwrap_or_else(|_| panic!("no `{kind}` event within 60 s"))
                .unwrap()
                .unwrap_or_else(|| panic!("the event stream ended before `{kind}`"));
            self.buf.push_str(&String::from_utf8_lossy(&chunk));
        }
    }
}
