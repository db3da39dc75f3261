#![allow(clippy::unwrap_used, clippy::panic)]

use metaclaw_memory::Kind;
use metaclaw_memory::extract::{Candidate, TurnText, extract_rules};

fn user(text: &str) -> Vec<Candidate> {
    extract_rules(&[TurnText {
        user: text.into(),
        assistant: String::new(),
        session_id: "s".into(),
        turn_index: 4,
    }])
}

fn one(text: &str) -> Candidate {
    let c = user(text);
    assert_eq!(c.len(), 1, "{text:?} gave {c:#?}");
    c.into_iter().next().unwrap()
}

#[test]
fn english() {
    let c = one("Hi there. I prefer tabs over spaces.");
    assert_eq!(c.kind, Kind::Preference);
    assert_eq!(c.content, "The user prefers tabs over spaces.");
    assert_eq!(c.fact_key.as_deref(), Some("pref:tab_over_space"));
    assert_eq!(c.confidence, 0.6);
    assert_eq!(c.source_turn, Some(4));

    let c = one("ok, please always run the tests before committing!");
    assert_eq!(c.kind, Kind::ProceduralObservation);
    assert_eq!(c.content, "Always run the tests before committing.");
    assert_eq!(c.fact_key.as_deref(), Some("workflow:run_test_before"));

    assert_eq!(
        one("Never force-push to main.").content,
        "Never force-push to main."
    );
    let c = one("Remember that the staging server is at 10.0.0.5.");
    assert_eq!(
        (c.kind, c.content.as_str()),
        (
            Kind::Semantic,
            "The user noted that the staging server is at 10.0.0.5."
        )
    );
    let c = one("We use PostgreSQL 16 with sqlx.");
    assert_eq!(
        (c.kind, c.content.as_str()),
        (
            Kind::ProjectState,
            "The user's project uses PostgreSQL 16 with sqlx."
        )
    );
    assert_eq!(c.fact_key.as_deref(), Some("project:postgresql_16_sqlx"));
    assert_eq!(
        one("Our stack is Rust and Svelte").content,
        "The user's stack is Rust and Svelte."
    );
    assert_eq!(
        one("From now on, answer in French.").content,
        "From now on, answer in French."
    );
    let c = one("Call me Sam.");
    assert_eq!(
        (c.content.as_str(), c.fact_key.as_deref()),
        ("The user wants to be called Sam.", Some("pref:name"))
    );
}

#[test]
fn chinese() {
    let c = one("我更喜欢深色主题。");
    assert_eq!(
        (c.kind, c.content.as_str()),
        (Kind::Preference, "用户更喜欢深色主题。")
    );
    assert_eq!(c.fact_key, None, "an all-CJK object has no ASCII slot");
    assert_eq!(one("我喜欢简短的回答").content, "用户喜欢简短的回答。");
    let c = one("请总是先写测试。");
    assert_eq!(
        (c.kind, c.content.as_str()),
        (Kind::ProceduralObservation, "总是先写测试。")
    );
    assert_eq!(one("不要使用分号。").content, "不要使用分号。");
    assert_eq!(
        one("记住：服务器在上海。").content,
        "用户要求记住：服务器在上海。"
    );
    let c = one("我们使用PostgreSQL数据库。");
    assert_eq!(
        (c.kind, c.fact_key.as_deref()),
        (Kind::ProjectState, Some("project:postgresql"))
    );
    assert_eq!(
        one("我们用 Rust 写后端").content,
        "用户的项目使用Rust 写后端。"
    );
    assert_eq!(one("以后都用中文回答。").content, "以后都用中文回答。");
}

#[test]
fn spanish() {
    let c = one("Prefiero respuestas cortas.");
    assert_eq!(
        (c.kind, c.content.as_str()),
        (Kind::Preference, "El usuario prefiere respuestas cortas.")
    );
    assert_eq!(c.fact_key.as_deref(), Some("pref:respuesta_corta"));
    assert_eq!(
        one("Por favor, siempre usa UTC.").content,
        "Siempre usa UTC."
    );
    assert_eq!(
        one("Nunca borres la rama main.").kind,
        Kind::ProceduralObservation
    );
    assert_eq!(
        one("Recuerda que el servidor está en Madrid.").content,
        "El usuario indicó que el servidor está en Madrid."
    );
    assert_eq!(
        one("Usamos Django y Postgres.").content,
        "El proyecto del usuario usa Django y Postgres."
    );
}

#[test]
fn french() {
    let c = one("Je préfère les tabulations.");
    assert_eq!(
        (c.kind, c.content.as_str()),
        (Kind::Preference, "L'utilisateur préfère les tabulations.")
    );
    assert_eq!(c.fact_key.as_deref(), Some("pref:tabulation"));
    assert_eq!(
        one("Toujours écrire les commits en anglais.").content,
        "Toujours écrire les commits en anglais."
    );
    assert_eq!(
        one("Jamais de force-push.").kind,
        Kind::ProceduralObservation
    );
    assert_eq!(
        one("Souviens-toi que je suis à Lyon.").content,
        "L'utilisateur a précisé que je suis à Lyon."
    );
    assert_eq!(
        one("Nous utilisons Kubernetes.").content,
        "Le projet de l'utilisateur utilise Kubernetes."
    );
}

#[test]
fn german() {
    let c = one("Ich bevorzuge kurze Antworten.");
    assert_eq!(
        (c.kind, c.content.as_str()),
        (Kind::Preference, "Der Nutzer bevorzugt kurze Antworten.")
    );
    assert_eq!(c.fact_key.as_deref(), Some("pref:kurze_antworten"));
    assert_eq!(
        one("Bitte immer Tests schreiben.").content,
        "Immer Tests schreiben."
    );
    assert_eq!(
        one("Niemals direkt auf main pushen.").kind,
        Kind::ProceduralObservation
    );
    assert_eq!(
        one("Merk dir, dass der Server in Berlin steht.").content,
        "Der Nutzer hat festgehalten: der Server in Berlin steht."
    );
    assert_eq!(
        one("Wir verwenden Terraform.").content,
        "Das Projekt des Nutzers verwendet Terraform."
    );
}

#[test]
fn assistant_text_is_never_read() {
    let c = extract_rules(&[TurnText {
        user: "Fix the build please.".into(),
        assistant: "I prefer to always run cargo fmt. Always use UTC. We use caching.".into(),
        session_id: "s".into(),
        turn_index: 1,
    }]);
    assert!(c.is_empty(), "{c:#?}");
}

#[test]
fn questions_and_chit_chat_yield_nothing() {
    for t in [
        "Do you always use tabs?",
        "Should we use Postgres?",
        "Always?",
        "¿Siempre usas UTC?",
        "你总是这样吗？",
        "我们用什么数据库吗",
        "Thanks, that works!",
        "Never mind.",
        "Nevertheless the build fails.",
        "I always forget the flags.",
        "Immer wenn ich baue, schlägt es fehl.",
        "Call me back when you are done with the migration.",
        "hello",
    ] {
        assert!(user(t).is_empty(), "{t:?} gave {:#?}", user(t));
    }
}

#[test]
fn injected_blocks_code_and_quotes_yield_nothing() {
    let t = "Fix it.\n<metaclaw-context>\n## Relevant Long-Term Memory\n- I prefer tabs.\nAlways use UTC.\n</metaclaw-context>\n```\n// always check errors\n```\n> We use Redis.\n";
    assert!(user(t).is_empty(), "{:#?}", user(t));
}

#[test]
fn at_most_three_per_turn_and_never_the_whole_turn() {
    let t = "I prefer tabs. Always run tests. Never push to main. We use Rust. Remember that prod is eu-west-1.";
    let c = user(t);
    assert_eq!(c.len(), 3);
    assert!(c.iter().all(|c| c.content.len() < t.len()));
    let long = format!("I prefer {}.", "very ".repeat(100));
    assert!(
        user(&long).is_empty(),
        "an over-long object is not a crisp fact"
    );
    // The same fact twice in one turn is one candidate.
    assert_eq!(user("I prefer tabs. I prefer tabs!").len(), 1);
}
