//! Which proposals become skills: validation, then dedup against the batch and the library.

use std::collections::HashSet;

use super::parse::{Proposal, Rejection};
use super::similar::{Corpus, Fingerprint, SIDE_THRESHOLD, Similarity};
use super::substance::dropped;
use super::validate::{Valid, validate};
use crate::library::Library;
use crate::retrieval::is_rule;
use crate::skill::{Provenance, Skill, Source};

/// What to do with one proposal.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// A new evolved skill.
    Add(Skill),
    /// A new version of the evolved skill `previous`; `skill.name == previous`.
    Improve {
        previous: String,
        skill: Skill,
    },
    Reject(Rejection),
}

/// Where the proposals came from, recorded in each skill's provenance.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Origin {
    pub sessions: Vec<String>,
    /// RFC 3339.
    pub created_at: String,
    pub model: Option<String>,
    /// The user's requests in those sessions, kept as the skills' retrieval text.
    pub requests: Vec<String>,
}

/// One decision per proposal, in order. The rules, applied to each proposal in turn:
///
/// 1. Fields (see `validate`): the name is trimmed and lowercased and must then be a slug
///    (`[a-z0-9][a-z0-9-]*`, no trailing or doubled hyphen, at most 64 chars, not a Windows device
///    name); anything else — `../../x`, `a/b`, `.hidden`, empty — is rejected, never renamed.
///    Description 10..=300 chars on one line; body trimmed, 20..=8000 chars (one
///    sentence is a valid rule), without `<metaclaw-context>` delimiters, and saying
///    something: not filler ("Nothing new"), nor only the words of the instructions. An
///    empty or unknown category becomes `general` (logged, not rejected). Tags are cleaned;
///    bad ones dropped.
/// 2. A name already proposed earlier in the batch is rejected.
/// 3. Target: a name equal to an existing evolved skill improves it; equal to a built-in or
///    user skill is rejected (never overwritten). Otherwise `improves: x` naming an evolved
///    skill improves `x` (written under the name `x`); naming a built-in/user skill or
///    nothing known, the proposal is a new skill under its own name. Improving a disabled
///    skill is rejected: the user turned it off. Two proposals writing one name: the second
///    is rejected. A one-sentence rule never improves a different one-sentence rule (see
///    `duplicate`): named by `improves`, it is a new skill; under the same name, rejected.
/// 4. Near-duplicates (see `similar`; a one-sentence rule only duplicates another rule,
///    see `duplicate`) among all library skills except the target and the
///    skills accepted earlier in the batch, most similar first: a duplicate of a batch skill,
///    of a disabled skill, or of a built-in/user skill is rejected naming that skill; a new
///    skill duplicating an evolved skill becomes an improvement of it.
///    4b. An improvement that drops the substance of the skill it replaces (a quarter or
///    more of its rules and steps are no longer in the new body, see `substance`) is not
///    applied: the proposal is rejected when it names that skill, and is a new skill under
///    its own name when it only came to improve it through `improves` or likeness.
/// 5. At most `max_new` additions and improvements; later ones are rejected.
///
/// Written skills are `source: evolved`, not `always`, enabled, with provenance from
/// `origin` and `improves` set to the replaced skill.
pub fn decide(
    proposals: Vec<Proposal>,
    library: &Library,
    origin: &Origin,
    max_new: usize,
) -> Vec<Decision> {
    let existing: Vec<Fingerprint> = library
        .skills
        .iter()
        .map(|s| Fingerprint::new(&s.name, &s.description, &s.body))
        .collect();
    let corpus = Corpus::new(&existing);
    let mut batch = Batch::default();
    proposals
        .into_iter()
        .map(|p| {
            let shown: String = p.name.trim().chars().take(80).collect();
            match judge(p, library, &existing, &corpus, &mut batch, max_new) {
                Ok((valid, previous)) => accept(valid, previous, origin),
                Err(reason) => Decision::Reject(Rejection::new(shown, reason)),
            }
        })
        .collect()
}

/// What the batch has claimed so far.
#[derive(Default)]
struct Batch {
    names: HashSet<String>,
    targets: HashSet<String>,
    /// Name, fingerprint, and whether it is a one-sentence rule.
    accepted: Vec<(String, Fingerprint, bool)>,
}

/// The validated proposal, with its final name, and the skill it improves if any.
fn judge(
    p: Proposal,
    library: &Library,
    existing: &[Fingerprint],
    corpus: &Corpus,
    batch: &mut Batch,
    max_new: usize,
) -> Result<(Valid, Option<String>), String> {
    let mut v = validate(p)?;
    if !batch.names.insert(v.name.clone()) {
        return Err(format!("name {:?} is proposed twice in this batch", v.name));
    }
    let mut previous = target(&v, library)?;
    let fp = Fingerprint::new(&v.name, &v.description, &v.body);
    let rule = is_rule(&v.body);
    if let Some(i) = previous
        .as_deref()
        .and_then(|p| library.skills.iter().position(|s| s.name == p))
    {
        let old = &library.skills[i];
        // Rule 3b: a rule "improving" a different rule would erase what the user taught
        // before (three rules taught in three sessions ended as one skill holding the last).
        if rule
            && is_rule(&old.body)
            && !duplicate(&corpus.similarity(&fp, &existing[i]), true, true)
        {
            if v.name == old.name {
                return Err(format!(
                    "would replace the rule in {:?} with a different rule; a new rule needs a name of its own",
                    old.name
                ));
            }
            previous = None;
        }
    }

    // The closest near-duplicate decides; the target itself is what we replace, not a dup.
    let mut dups: Vec<(f32, Dup)> = Vec::new();
    for (i, s) in library.skills.iter().enumerate() {
        let sim = corpus.similarity(&fp, &existing[i]);
        let dup = duplicate(&sim, rule, is_rule(&s.body));
        if dup && previous.as_deref() != Some(s.name.as_str()) {
            dups.push((sim.mean(), Dup::Library(s, sim)));
        }
    }
    for (name, other, other_rule) in &batch.accepted {
        let sim = corpus.similarity(&fp, other);
        if duplicate(&sim, rule, *other_rule) {
            dups.push((sim.mean(), Dup::Batch(name, sim)));
        }
    }
    dups.sort_by(|a, b| b.0.total_cmp(&a.0));
    match dups.first() {
        None => {}
        Some((_, Dup::Batch(name, sim))) => {
            return Err(format!(
                "near duplicate of {name:?} proposed earlier in this batch ({})",
                show(sim)
            ));
        }
        Some((_, Dup::Library(s, sim))) => match (s.source, s.disabled, &previous) {
            (_, true, _) => {
                return Err(format!(
                    "near duplicate of the disabled skill {:?} ({})",
                    s.name,
                    show(sim)
                ));
            }
            (Source::Evolved, false, None) => previous = Some(s.name.clone()),
            // An improvement of one evolved skill may resemble another; that is not a copy.
            (Source::Evolved, false, Some(_)) => {}
            (source, false, _) => {
                return Err(format!(
                    "near duplicate of the {} skill {:?} ({})",
                    source.word(),
                    s.name,
                    show(sim)
                ));
            }
        },
    }

    // Rule 4b: an improvement keeps what the skill it replaces teaches.
    if let Some(prev) = previous.as_deref()
        && let Some(old) = library.get(prev)
        && let Some(lost) = dropped(&old.body, &v.body)
    {
        let own_name_free =
            v.name != prev && library.get(&v.name).is_none() && !batch.targets.contains(&v.name);
        if !own_name_free {
            let first: String = lost[0].chars().take(80).collect();
            return Err(format!(
                "would drop what {prev:?} teaches ({} of its rules or steps, such as {first:?}); \
                 an improvement keeps them",
                lost.len()
            ));
        }
        previous = None;
    }

    let name = previous.clone().unwrap_or_else(|| v.name.clone());
    if batch.targets.contains(&name) {
        return Err(format!(
            "another proposal in this batch already writes {name:?}"
        ));
    }
    if batch.accepted.len() >= max_new {
        return Err(format!("over the limit of {max_new} per evolution"));
    }
    batch.targets.insert(name.clone());
    batch.accepted.push((name.clone(), fp, rule));
    v.name = name;
    Ok((v, previous))
}

/// Whether two skills are the same lesson. A one-sentence rule has a handful of words, so
/// the library-wide thresholds, calibrated on procedures, call two different rules
/// duplicates once they share two or three ("file", "name", "always"): "start report file
/// names with the date" would then replace "back up a config file first". And a rule is
/// never a copy of a procedure: the user's "status updates in three bullets" is a lesson
/// the built-in status-update procedure does not state. So a rule duplicates only another
/// rule, and only when both its trigger and its wording match.
fn duplicate(sim: &Similarity, rule: bool, other_rule: bool) -> bool {
    match (rule, other_rule) {
        (false, false) => sim.is_near_duplicate(),
        (true, true) => sim.head.min(sim.body) >= SIDE_THRESHOLD,
        _ => false,
    }
}

enum Dup<'a> {
    Library(&'a Skill, Similarity),
    Batch(&'a str, Similarity),
}

/// The evolved skill this proposal replaces, if any (rule 3).
fn target(v: &Valid, library: &Library) -> Result<Option<String>, String> {
    let own = library.get(&v.name);
    let hinted = v.improves.as_deref().filter(|x| *x != v.name);
    let (skill, by_name) = match (own, hinted.and_then(|x| library.get(x))) {
        (Some(s), _) => (s, true),
        (None, Some(s)) => (s, false),
        (None, None) => return Ok(None),
    };
    match (skill.source, skill.disabled) {
        (Source::Evolved, true) => Err(format!(
            "would improve {:?}, which the user disabled",
            skill.name
        )),
        (Source::Evolved, false) => Ok(Some(skill.name.clone())),
        (source, _) if by_name => Err(format!(
            "would overwrite the {} skill {:?}",
            source.word(),
            skill.name
        )),
        // A built-in/user skill is never replaced; the proposal stands as a new skill.
        _ => Ok(None),
    }
}

fn accept(v: Valid, previous: Option<String>, origin: &Origin) -> Decision {
    let skill = Skill {
        name: v.name,
        description: v.description,
        category: v.category,
        tags: v.tags,
        always: false,
        disabled: false,
        source: Source::Evolved,
        provenance: Some(Provenance {
            sessions: origin.sessions.clone(),
            created_at: Some(origin.created_at.clone()).filter(|c| !c.is_empty()),
            model: origin.model.clone(),
            improves: previous.clone(),
            requests: origin.requests.clone(),
            ..Provenance::default()
        }),
        body: v.body,
        path: None,
        extra: Default::default(),
    };
    match previous {
        Some(previous) => Decision::Improve { previous, skill },
        None => Decision::Add(skill),
    }
}

fn show(sim: &Similarity) -> String {
    format!(
        "similarity: name+description {:.2}, body {:.2}",
        sim.head, sim.body
    )
}
