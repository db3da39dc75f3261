//! The conversations the cache benchmark plays, shaped like the agents' real traffic: every
//! request resends the whole conversation, as agents do.
//!
//! - OpenClaw (OpenAI protocol): a long system prompt, four tools, each user message stamped
//!   with the time, tool rounds (an assistant `tool_calls` message and its `tool` result).
//! - Claude Code (Anthropic protocol): system blocks (a billing header, then two text blocks
//!   with `cache_control`), five tools, a `<system-reminder>` block before the first user
//!   message, `tool_use`/`tool_result` rounds, and the moving breakpoint: the newest message's
//!   last block carries `cache_control`, the message before it is resent without (a plain
//!   string when it was one text block).

use serde_json::{Value, json};

/// One step of a conversation: the user asks, then zero or more tool rounds.
struct Step {
    ask: &'static str,
    /// (tool, argument, result) rounds before the final answer.
    tools: &'static [(&'static str, &'static str, &'static str)],
    answer: &'static str,
}

/// Questions that match built-in skills, so MetaClaw injects skills as well as memories, each
/// followed by the tool rounds an agent makes before it answers.
const SCRIPT: &[Step] = &[
    Step {
        ask: "The integration test in tests/api.rs fails intermittently on CI. Help me debug it systematically and find the flaky cause.",
        tools: &[
            (
                "read",
                "tests/api.rs",
                "#[tokio::test]\nasync fn creates_user() {\n    let app = spawn_app().await;\n    let r = app.post(\"/users\").json(&user()).send().await.unwrap();\n    assert_eq!(r.status(), 201);\n}\n",
            ),
            (
                "exec",
                "cargo test --test api -- --test-threads 8",
                "test creates_user ... FAILED\nthread panicked: assertion failed: left: 409, right: 201",
            ),
            (
                "read",
                "tests/helpers.rs",
                "pub async fn spawn_app() -> App {\n    let db = PgPool::connect(\"postgres://localhost/test\").await.unwrap();\n    App::new(db)\n}\n",
            ),
            ("write", "tests/helpers.rs", "Wrote 14 lines."),
        ],
        answer: "The tests shared one database, so two runs inserting the same user collided (409). Each test now gets its own schema.",
    },
    Step {
        ask: "Write a git commit message for the fix we just made, following good commit hygiene.",
        tools: &[
            (
                "exec",
                "git diff --stat",
                " tests/helpers.rs | 14 +++++++++++---\n",
            ),
            (
                "exec",
                "git commit -am 'tests: give each API test its own schema'",
                "[main 4f2a9c1] tests: give each API test its own schema",
            ),
        ],
        answer: "Committed: tests: give each API test its own schema so runs no longer collide.",
    },
    Step {
        ask: "Now review the pull request diff for security problems, especially secrets handling and input validation.",
        tools: &[
            (
                "exec",
                "git diff main --stat",
                " src/config.rs | 12 ++++++---\n src/routes/users.rs | 40 ++++++++++++++++++++++++++---\n",
            ),
            (
                "read",
                "src/routes/users.rs",
                "pub async fn create(Json(u): Json<NewUser>) -> impl IntoResponse {\n    let q = format!(\"INSERT INTO users VALUES ('{}')\", u.name);\n    db.execute(&q).await\n}\n",
            ),
            (
                "read",
                "src/config.rs",
                "pub fn load() -> Config {\n    let key = std::env::var(\"API_KEY\").unwrap();\n    tracing::info!(%key, \"loaded\");\n    Config { key }\n}\n",
            ),
        ],
        answer: "The insert builds SQL from user input: use a bound parameter. The config logs the API key at startup; remove that line.",
    },
    Step {
        ask: "Write a SQL query that lists the ten users with the most orders last month.",
        tools: &[(
            "read",
            "migrations/0003_orders.sql",
            "CREATE TABLE orders (id bigserial primary key, user_id bigint not null, created_at timestamptz not null);",
        )],
        answer: "SELECT user_id, count(*) AS n FROM orders WHERE created_at >= date_trunc('month', now()) - interval '1 month' AND created_at < date_trunc('month', now()) GROUP BY user_id ORDER BY n DESC LIMIT 10;",
    },
    Step {
        ask: "Profile the slow /users endpoint and tell me where the time goes.",
        tools: &[
            (
                "exec",
                "cargo flamegraph --bin server -- --bench-users",
                "73% in serde_json::to_vec, 12% in sqlx fetch_all, 9% in tokio runtime",
            ),
            (
                "read",
                "src/routes/list.rs",
                "pub async fn list() -> Json<Vec<User>> {\n    Json(sqlx::query_as(\"SELECT * FROM users\").fetch_all(&db).await.unwrap())\n}\n",
            ),
        ],
        answer: "Most of the time is serializing the whole table: paginate and stream the rows.",
    },
    Step {
        ask: "Set up a CI pipeline that runs the tests and clippy on every pull request.",
        tools: &[
            ("write", ".github/workflows/ci.yml", "Wrote 24 lines."),
            (
                "exec",
                "actionlint .github/workflows/ci.yml",
                "no problems found",
            ),
        ],
        answer: "Added .github/workflows/ci.yml: cargo test and cargo clippy -- -D warnings on every pull request.",
    },
];

/// The longest conversation there is, in user turns.
pub const MAX_TURNS: usize = SCRIPT.len();

fn paragraph(topic: &str, n: usize) -> String {
    (0..n)
        .map(|i| {
            format!(
                "{i}. {topic}: follow the workspace conventions, keep changes small and reviewed, \
                 explain what you did and why, never invent file contents, and ask before any \
                 destructive command. Prefer the project's own scripts over ad-hoc commands."
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn openclaw_system() -> String {
    format!(
        "You are a personal assistant running inside OpenClaw.\n## Tooling\n{}\n## Workspace\n\
         Your working directory is /home/user/project.\n## Workspace Files\n{}\n\
         Runtime: agent=main | host=devbox | os=Linux 6.8 | model=metaclaw/fake-model | channel=cli",
        paragraph("Tools", 40),
        paragraph("AGENTS.md", 72)
    )
}

/// OpenClaw's tools, described briefly (its system prompt describes them at length).
const OPENCLAW_TOOLS: &[&str] = &[
    "read",
    "write",
    "edit",
    "exec",
    "process",
    "web_search",
    "web_fetch",
    "browser",
    "canvas",
    "nodes",
    "cron",
    "message",
    "gateway",
    "sessions_list",
    "sessions_send",
    "image",
    "memory_search",
    "memory_get",
];

fn openclaw_tools() -> Value {
    let tools: Vec<Value> = OPENCLAW_TOOLS
        .iter()
        .map(|name| {
            json!({"type": "function", "function": {"name": name,
                "description": format!("{name}: {}", paragraph("usage", 2)),
                "parameters": {"type": "object", "properties": {
                    "path": {"type": "string", "description": "A workspace path."},
                    "command": {"type": "string", "description": "A shell command."}}}}})
        })
        .collect();
    Value::Array(tools)
}

/// OpenClaw's requests for the first `turns` user turns: one per model call.
pub fn openclaw(turns: usize) -> Vec<Value> {
    let mut messages = vec![json!({"role": "system", "content": openclaw_system()})];
    let mut requests = Vec::new();
    let request = |messages: &Vec<Value>| {
        json!({"model": "fake-model", "stream": true, "tools": openclaw_tools(),
            "messages": messages})
    };
    for (t, step) in SCRIPT.iter().take(turns).enumerate() {
        messages.push(json!({"role": "user",
            "content": format!("[Thu 2026-12-03 17:{:02} UTC] {}", 30 + t, step.ask)}));
        requests.push(request(&messages));
        for (r, (tool, arg, result)) in step.tools.iter().enumerate() {
            let id = format!("call_{t}_{r}");
            let arguments = json!({"path": arg, "command": arg}).to_string();
            messages.push(json!({"role": "assistant", "content": null, "tool_calls": [
                {"id": id, "type": "function", "function": {"name": tool, "arguments": arguments}}]}));
            messages.push(json!({"role": "tool", "tool_call_id": id, "content": result}));
            requests.push(request(&messages));
        }
        messages.push(json!({"role": "assistant", "content": step.answer}));
    }
    requests
}

fn claude_code_system() -> Value {
    json!([
        {"type": "text", "text": "x-anthropic-billing-header: cc_version=2.1.332; cc_entrypoint=cli"},
        {"type": "text", "text": "You are Claude Code, Anthropic's official CLI for Claude.",
            "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": format!("{}\n# Environment\nWorking directory: /home/user/project\n\
            Platform: linux\n{}", paragraph("Tone and style", 24), paragraph("Doing tasks", 24)),
            "cache_control": {"type": "ephemeral"}},
    ])
}

/// Claude Code's tools, each with the long usage notes it sends.
const CLAUDE_CODE_TOOLS: &[&str] = &[
    "Task",
    "Bash",
    "Glob",
    "Grep",
    "ExitPlanMode",
    "Read",
    "Edit",
    "Write",
    "NotebookEdit",
    "WebFetch",
    "TodoWrite",
    "WebSearch",
    "BashOutput",
    "KillShell",
    "SlashCommand",
    "Skill",
];

fn claude_code_tools() -> Value {
    let tools: Vec<Value> = CLAUDE_CODE_TOOLS
        .iter()
        .map(|name| {
            json!({"name": name, "description": format!("{name}.\n{}", paragraph("Usage notes", 10)),
                "input_schema": {"type": "object", "properties": {
                    "command": {"type": "string", "description": "The command to execute"},
                    "file_path": {"type": "string", "description": "The absolute path to the file"}},
                    "additionalProperties": false,
                    "$schema": "http://json-schema.org/draft-07/schema#"}})
        })
        .collect();
    Value::Array(tools)
}

const REMINDER: &str = "<system-reminder>\nAs you answer the user's questions, you can use the \
    following context:\n# claudeMd\nCodebase and user instructions are shown below.\n\
    Contents of /home/user/project/CLAUDE.md:\nRun cargo test before every commit.\n\
    </system-reminder>";

/// Claude Code's tool names for the script's generic ones.
fn claude_tool(tool: &str) -> (&'static str, &'static str) {
    match tool {
        "read" => ("Read", "file_path"),
        "write" => ("Write", "file_path"),
        _ => ("Bash", "command"),
    }
}

/// Claude Code's requests for the first `turns` user turns: one per model call.
pub fn claude_code(turns: usize) -> Vec<Value> {
    let mut messages: Vec<Value> = Vec::new();
    let mut requests = Vec::new();
    for (t, step) in SCRIPT.iter().take(turns).enumerate() {
        let ask = if t == 0 {
            json!([{"type": "text", "text": REMINDER}, {"type": "text", "text": step.ask}])
        } else {
            json!([{"type": "text", "text": step.ask}])
        };
        messages.push(json!({"role": "user", "content": ask}));
        requests.push(claude_request(&messages));
        for (r, (tool, arg, result)) in step.tools.iter().enumerate() {
            let id = format!("toolu_{t}_{r}");
            let (name, field) = claude_tool(tool);
            messages.push(json!({"role": "assistant", "content": [
                {"type": "text", "text": "Let me look."},
                {"type": "tool_use", "id": id, "name": name, "input": {field: arg}}]}));
            messages.push(json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": id, "content": result}]}));
            requests.push(claude_request(&messages));
        }
        messages
            .push(json!({"role": "assistant", "content": [{"type": "text", "text": step.answer}]}));
    }
    requests
}

/// The request for `messages` as Claude Code sends it: the breakpoint on the newest
/// message's last block; a one-text-block message before it resent as a plain string.
fn claude_request(messages: &[Value]) -> Value {
    let last = messages.len().saturating_sub(1);
    let sent: Vec<Value> = messages
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let mut m = m.clone();
            let blocks = m["content"].as_array().cloned().unwrap_or_default();
            if i == last {
                if let Some(b) = m["content"].as_array_mut().and_then(|b| b.last_mut()) {
                    b["cache_control"] = json!({"type": "ephemeral"});
                }
            } else if m["role"] == "user" && blocks.len() == 1 && blocks[0]["type"] == "text" {
                m["content"] = blocks[0]["text"].clone();
            }
            m
        })
        .collect();
    json!({"model": "claude-sonnet-4-5", "max_tokens": 32000, "stream": true,
        "system": claude_code_system(), "tools": claude_code_tools(), "messages": sent,
        "metadata": {"user_id": "user_abc_account__session_bench"}})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_request_resends_the_previous_one_and_tool_rounds_add_calls() {
        let oc = openclaw(3);
        assert_eq!(oc.len(), 3 + 4 + 2 + 3);
        for pair in oc.windows(2) {
            let (a, b) = (
                pair[0]["messages"].as_array(),
                pair[1]["messages"].as_array(),
            );
            let (a, b) = (a.map(Vec::len), b.map(Vec::len));
            assert!(a < b);
        }
        let cc = claude_code(2);
        assert_eq!(cc.len(), 2 + 4 + 2);
        // The breakpoint moves: only the newest message carries one.
        let marked = |r: &Value| r.to_string().matches("cache_control").count();
        assert!(cc.iter().all(|r| marked(r) == 3));
        assert_eq!(cc[2]["messages"][2]["content"][0]["type"], "tool_result");
    }
}
