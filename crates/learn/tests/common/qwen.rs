//! The Qwen-style chat template with the trained test tokenizer the end-to-end tests serve
//! (`metaclaw_e2e::toy_model`), loaded as a [`ChatTokenizer`].

use metaclaw_learn::tokenizer::ChatTokenizer;

pub fn setup() -> (tempfile::TempDir, ChatTokenizer) {
    let home = tempfile::tempdir().unwrap();
    let toy = metaclaw_e2e::toy_model::build().unwrap();
    toy.install(home.path(), "Toy/qwen-style").unwrap();
    let tok = ChatTokenizer::from_dir(&home.path().join("models/Toy/qwen-style")).unwrap();
    (home, tok)
}
