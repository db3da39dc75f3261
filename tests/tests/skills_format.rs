//! A library written in the earlier frontmatter format (MetaClaw's fields at the top level,
//! tags as a flow list, another tool's keys beside them), started with the binary: every file
//! is rewritten in the Agent Skills format on start, its original kept in a backup, and the
//! library loads exactly as before. A file that cannot be read is left as it is.

#![allow(clippy::unwrap_used, clippy::panic)] // test helpers outside #[test] fns

mod common;

use std::path::Path;

use common::daemon::{Home, free_port, stdout};

const LEARNED: &str = "---\nname: deploy-billing\ndescription: Use when deploying the billing service.\ncategory: automation\ntags: [deploy, billing]\nsource: evolved\nprovenance:\n  sessions: [s-1, s-2]\n  created_at: '2026-01-02T03:04:05Z'\n  model: evolver-1\n  requests: ['deploy billing, then check --- carefully']\n---\n\n# Deploy billing\n\n1. Run the migrations first.\n2. Check the invoices page.\n";
const USER: &str = "---\nname: team-standup\ndescription: Use when writing the daily stand-up note for the team.\ncategory: communication\ntags: standup, daily\nalways: true\n---\n\nThree bullets: done, next, blocked.\n";
const CLAWHUB: &str = "---\nname: todoist-tasks\ndescription: Manage tasks via the Todoist API.\nversion: 1.2.0\nmetadata: {\"openclaw\": {\"requires\": {\"bins\": [\"curl\"]}}}\nsource: imported\nprovenance:\n  origin: /tmp/todoist.zip\n---\n\nList the tasks due today.\n";
const BROKEN: &str = "---\nname: broken\ndescription: [unclosed\n---\nbody\n";

fn put(home: &Home, name: &str, text: &str) {
    let dir = home.path().join("skills").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("SKILL.md"), text).unwrap();
}

fn read(home: &Home, name: &str) -> String {
    std::fs::read_to_string(home.path().join("skills").join(name).join("SKILL.md")).unwrap()
}

/// What the library serves, as the CLI reads it from the files: the list, each old skill
/// in full, and a ranking.
fn loaded(home: &Home) -> Vec<String> {
    let mut out = vec![stdout(&home.run(&["skills", "list", "--json"]))];
    for name in ["deploy-billing", "team-standup", "todoist-tasks"] {
        out.push(stdout(&home.run(&["skills", "show", name])));
    }
    out.push(stdout(&home.run(&["skills", "search", "deploy billing"])));
    out
}

/// The top-level keys of a file's frontmatter.
fn top_keys(text: &str) -> Vec<String> {
    let yaml = text.split("\n---\n").next().unwrap();
    yaml.lines()
        .skip(1)
        .filter(|l| !l.starts_with(' '))
        .filter_map(|l| l.split_once(':').map(|(k, _)| k.to_owned()))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_old_library_is_rewritten_on_start_and_loads_the_same() {
    let port = free_port();
    let home = Home::new(&format!(
        "llm:\n  api: openai\n  api_base: http://127.0.0.1:9/v1\n  model_id: m\nproxy:\n  port: {port}\n"
    ));
    for (name, text) in [
        ("deploy-billing", LEARNED),
        ("team-standup", USER),
        ("todoist-tasks", CLAWHUB),
        ("broken", BROKEN),
    ] {
        put(&home, name, text);
    }
    let before = loaded(&home);
    assert!(before[0].contains("\"deploy-billing\""), "{}", before[0]);

    home.start_daemon().await;
    let o = home.run(&["stop"]);
    assert!(o.status.success(), "{o:?}");

    for (name, old) in [
        ("deploy-billing", LEARNED),
        ("team-standup", USER),
        ("todoist-tasks", CLAWHUB),
    ] {
        let text = read(&home, name);
        assert_eq!(
            top_keys(&text),
            ["name", "description", "metadata"],
            "{text}"
        );
        let backups: Vec<_> = std::fs::read_dir(home.path().join("skills/.backup"))
            .unwrap()
            .map(|e| e.unwrap().path().join(name).join("SKILL.md"))
            .collect();
        assert_eq!(backups.len(), 1, "{backups:?}");
        assert_eq!(std::fs::read_to_string(&backups[0]).unwrap(), old);
    }
    let clawhub = read(&home, "todoist-tasks");
    assert!(
        clawhub.contains("  version: 1.2.0\n")
            && clawhub.contains(r#"  openclaw: '{"requires":{"bins":["curl"]}}'"#),
        "{clawhub}"
    );
    assert_eq!(read(&home, "broken"), BROKEN, "left as it was");
    let log = std::fs::read_dir(home.path().join("logs"))
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap_or_default())
        .collect::<String>();
    assert!(log.contains("skill file left as it is"), "{log}");

    assert_eq!(loaded(&home), before);
    assert!(Path::new(&home.path().join("skills/api-design/SKILL.md")).is_file());
}
