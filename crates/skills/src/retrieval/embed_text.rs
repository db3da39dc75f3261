//! What the semantic side embeds for a skill, and the cache key of that text.

use sha2::{Digest, Sha256};

use crate::Skill;

/// Embedding APIs reject inputs over their token limit (8,191 for OpenAI's models) and fail
/// the whole batch; skills are far shorter, so this only guards against a runaway file.
const MAX_CHARS: usize = 16_000;

/// The fields lexical retrieval reads (name, description, the requests it was learned
/// from, tags, body), as one text. What says when the skill applies comes first: a local
/// model reads only the first few hundred tokens.
pub fn embedding_text(skill: &Skill) -> String {
    let mut head = format!("{}\n{}", skill.name, skill.description);
    for request in skill.requests() {
        head.push('\n');
        head.push_str(request);
    }
    let text = format!("{head}\ntags: {}\n\n{}", skill.tags.join(", "), skill.body);
    match text.char_indices().nth(MAX_CHARS) {
        Some((cut, _)) => text[..cut].to_owned(),
        None => text,
    }
}

/// SHA-256 of `text`, lowercase hex: the key vectors are cached under, so an unchanged
/// skill is never embedded twice and an edited one always is.
pub fn content_hash(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_are_stable_hex_and_follow_the_text() {
        assert_eq!(
            content_hash("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_ne!(content_hash("abc"), content_hash("abd"));
    }

    #[test]
    fn the_text_carries_every_retrieval_field_and_is_bounded() {
        let mut s = crate::parse_skill(
            "---\nname: a-skill\ndescription: Use when testing.\ncategory: coding\ntags: [x, y]\n---\n# A\n\nBody words.\n",
            None,
        )
        .unwrap()
        .0;
        let text = embedding_text(&s);
        for part in ["a-skill", "Use when testing.", "x, y", "Body words."] {
            assert!(text.contains(part), "{text}");
        }
        s.body = "é".repeat(MAX_CHARS * 2);
        assert_eq!(embedding_text(&s).chars().count(), MAX_CHARS);
    }
}
