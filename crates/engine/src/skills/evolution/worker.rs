//! The evolution queue and the one worker that drains it, so evolutions never overlap and
//! each one reads the library as the previous one left it.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use metaclaw_skills::evolve::{
    self, EvolverInput, Origin, TurnDigest, build_prompt, parse_proposals,
};
use metaclaw_store::{NewSkillEvent, RejectedSkill, Store};
use serde_json::json;
use tokio::sync::{mpsc, oneshot, watch};

use super::job::{Job, Outcome, Trigger};
use crate::clock::unix_ms;
use crate::events::{EngineEvent, Events};
use crate::learned_turns;
use crate::learned_turns::digests as read_digests;
use crate::llm::calls::Purpose;
use crate::llm::pacing::{Decision, Deferred, JobHealth, MAX_ATTEMPTS, Pacing};
use crate::llm::queued::Queued;
use crate::llm::{self, Completion, Endpoint, Failure};
use crate::recorder::RecorderHandle;
use crate::schedule::{Gate, Permit, StopSignal};
use crate::skills::CurrentSkills;
use crate::supervise::Supervisor;

/// Evolutions waiting; beyond this a trigger is dropped (logged): the next one will cover
/// the same turns, since each reads everything not yet evolved on.
const QUEUE: usize = 64;
/// Related skills shown to the evolver.
const RELATED: usize = 5;
/// Room for up to a few skills of 40 lines each.
const MAX_TOKENS: u32 = 4000;
/// How long to wait for the library to load what was just written.
const RELOAD_WAIT: Duration = Duration::from_secs(10);
/// Who holds the training window while evolving (status, logs).
const OWNER: &str = "skills.evolution";
/// An evolution stopped by its window closing: not logged, run again in the next window.
const INTERRUPTED: &str = "interrupted";

#[derive(Debug, Clone)]
pub struct EvolutionSettings {
    /// `skills.auto_evolve`: the turn-count and session-end triggers.
    pub auto: bool,
    /// `skills.evolution_every_n_turns`; 0 leaves only session end.
    pub every_n_turns: u32,
    pub max_new: usize,
    /// `skills.review`: write learned skills, or file them as proposals.
    pub review: evolve::Review,
}

/// The handle: cheap to clone, never blocks.
#[derive(Clone)]
pub struct Evolution {
    tx: mpsc::Sender<Job>,
    settings: EvolutionSettings,
    /// Back-off after failed or unusable answers, shared with the worker.
    pacing: Arc<Pacing>,
    /// Automatic triggers that came while backing off, run by the worker once it allows.
    deferred: Arc<Deferred<Trigger>>,
    /// Automatic evolutions in the queue, by trigger and session.
    queued: Arc<Queued<(Trigger, String)>>,
}

/// What the worker needs.
#[derive(Clone)]
pub struct Worker {
    pub endpoint: Endpoint,
    pub http: reqwest::Client,
    pub current: CurrentSkills,
    pub swapped: watch::Receiver<u64>,
    pub dir: PathBuf,
    pub db: PathBuf,
    pub recorder: RecorderHandle,
    pub settings: EvolutionSettings,
}

impl Evolution {
    /// Starts the worker task; it ends when every handle is dropped.
    pub fn start(worker: Worker) -> Evolution {
        Self::start_gated(worker, Gate::ungated())
    }

    /// Like [`Evolution::start`], with the automatic triggers (every N turns, session end)
    /// held for a training window when `gate` is gated. Evolutions asked for explicitly
    /// (admin API, the RL trainer, itself gated) run at once.
    pub fn start_gated(worker: Worker, gate: Gate) -> Evolution {
        Self::start_reporting(worker, gate, Events::new())
    }

    /// Like [`Evolution::start_gated`], announcing written skills on `events`.
    pub fn start_reporting(worker: Worker, gate: Gate, events: Events) -> Evolution {
        Self::start_supervised(worker, gate, events, &Supervisor::detached())
    }

    /// [`Evolution::start_reporting`] with its worker under `tasks`: a worker that panics
    /// starts again on the same queue (the evolution it was running is lost).
    pub fn start_supervised(
        worker: Worker,
        gate: Gate,
        events: Events,
        tasks: &Supervisor,
    ) -> Evolution {
        let (tx, rx) = mpsc::channel(QUEUE);
        let settings = worker.settings.clone();
        let pacing = Arc::new(Pacing::new(OWNER_HEALTH));
        let deferred = Arc::new(Deferred::default());
        let queued = Arc::new(Queued::default());
        let paced = Paced {
            pacing: Arc::clone(&pacing),
            deferred: Arc::clone(&deferred),
            queued: Arc::clone(&queued),
        };
        let rx = Arc::new(tokio::sync::Mutex::new(rx));
        tasks.spawn_restarting("skill evolution worker", move || {
            let (worker, rx, gate) = (worker.clone(), Arc::clone(&rx), gate.clone());
            run(worker, rx, gate, events.clone(), paced.clone())
        });
        Evolution {
            tx,
            settings,
            pacing,
            deferred,
            queued,
        }
    }

    /// Failing evolutions and the back-off, for status.
    pub fn health(&self) -> JobHealth {
        self.pacing.health()
    }

    /// An automatic trigger is queued only when the model is not backing off; otherwise it
    /// is held until the back-off allows (once per session), and its turns wait.
    fn may_call(&self, session_id: &str, trigger: Trigger) -> bool {
        let now = matches!(self.pacing.decide(session_id, false), Decision::Call { .. });
        if !now {
            self.deferred.push(session_id, trigger);
        }
        now
    }

    /// A session's main turn was answered, its `answered`-th: every
    /// `skills.evolution_every_n_turns` of them trigger an evolution.
    pub fn main_turn(&self, session_id: &str, answered: u32) {
        let every = self.settings.every_n_turns;
        if !self.settings.auto || every == 0 || !answered.is_multiple_of(every) {
            return;
        }
        if self.may_call(session_id, Trigger::EveryNTurns) {
            self.enqueue_automatic(Trigger::EveryNTurns, session_id);
        }
    }

    /// The session ended after `answered` main turns; those since the last every-N trigger
    /// are evolved on now.
    pub fn session_ended(&self, session_id: &str, answered: u32) {
        let every = self.settings.every_n_turns;
        let left = if every == 0 {
            answered
        } else {
            answered % every
        };
        if self.settings.auto && left > 0 && self.may_call(session_id, Trigger::SessionEnd) {
            self.enqueue_automatic(Trigger::SessionEnd, session_id);
        }
    }

    /// Evolves on a session's turns not yet evolved on, now, and reports what happened.
    pub async fn evolve_session(&self, session_id: &str) -> Option<Outcome> {
        self.ask(Trigger::Manual, vec![session_id.to_string()], None)
            .await
    }

    /// The RL trainer's trigger: a batch whose success rate was too low, with its judged
    /// samples (scores included), evolved on directly.
    pub async fn evolve_samples(
        &self,
        sessions: Vec<String>,
        samples: Vec<TurnDigest>,
    ) -> Option<Outcome> {
        self.ask(Trigger::LowSuccess, sessions, Some(samples)).await
    }

    async fn ask(
        &self,
        trigger: Trigger,
        sessions: Vec<String>,
        samples: Option<Vec<TurnDigest>>,
    ) -> Option<Outcome> {
        let (tx, rx) = oneshot::channel();
        self.enqueue(trigger, sessions, samples, Some(tx));
        rx.await.ok()
    }

    fn enqueue_automatic(&self, trigger: Trigger, session_id: &str) {
        let job = Job {
            trigger,
            sessions: vec![session_id.to_string()],
            samples: None,
            reply: None,
        };
        self.queued.send(
            &self.tx,
            (trigger, session_id.to_string()),
            job,
            "skill evolution",
        );
    }

    fn enqueue(
        &self,
        trigger: Trigger,
        sessions: Vec<String>,
        samples: Option<Vec<TurnDigest>>,
        reply: Option<oneshot::Sender<Outcome>>,
    ) {
        let job = Job {
            trigger,
            sessions,
            samples,
            reply,
        };
        if self.tx.try_send(job).is_err() {
            tracing::warn!(
                trigger = trigger.as_str(),
                "skill evolution queue full; this trigger is skipped"
            );
        }
    }
}

/// The back-off and the triggers it holds, as the worker uses them.
#[derive(Clone)]
struct Paced {
    pacing: Arc<Pacing>,
    deferred: Arc<Deferred<Trigger>>,
    queued: Arc<Queued<(Trigger, String)>>,
}

impl Paced {
    /// Whether `job` may call now; an automatic one that may not is held for later.
    fn admit(&self, job: &Job) -> bool {
        let automatic = matches!(job.trigger, Trigger::EveryNTurns | Trigger::SessionEnd);
        let key = job.sessions.join(",");
        if !automatic || matches!(self.pacing.decide(&key, false), Decision::Call { .. }) {
            return true;
        }
        self.deferred.push(&key, job.trigger);
        false
    }
}

async fn run(
    mut worker: Worker,
    jobs: Arc<tokio::sync::Mutex<mpsc::Receiver<Job>>>,
    gate: Gate,
    events: Events,
    paced: Paced,
) {
    // Held for the worker's life; a panic drops it, so the restarted worker takes it over.
    let mut jobs = jobs.lock().await;
    let pacing = &paced.pacing;
    // Automatic evolutions waiting for a window, one per session: each reads every turn of
    // its session not yet evolved on, so a second trigger adds nothing.
    let mut held: Vec<Job> = Vec::new();
    loop {
        let job = tokio::select! {
            // The permit first: once granted it must be used, not dropped for a new job.
            biased;
            permit = gate.permit(OWNER), if !held.is_empty() => {
                run_held(&mut worker, &mut held, permit, &events, &paced).await;
                continue;
            }
            job = jobs.recv() => match job {
                Some(job) => {
                    if let (None, [session]) = (&job.reply, job.sessions.as_slice()) {
                        paced.queued.started(&(job.trigger, session.clone()));
                    }
                    job
                }
                None => break,
            },
            (session, trigger) = paced.deferred.next(pacing) => Job {
                trigger,
                sessions: vec![session],
                samples: None,
                reply: None,
            },
        };
        let automatic = matches!(job.trigger, Trigger::EveryNTurns | Trigger::SessionEnd);
        if gate.is_gated() && automatic {
            if !held.iter().any(|h| h.sessions == job.sessions) {
                tracing::info!(
                    held = held.len() + 1,
                    "skill evolution held until a training window opens"
                );
                held.push(job);
            }
            continue;
        }
        if !paced.admit(&job) {
            continue;
        }
        let outcome = evolve(&mut worker, &job, &StopSignal::never(), pacing).await;
        report(&worker, job, outcome, &events).await;
    }
}

/// Held evolutions, oldest first, until done or the window closes; one stopped halfway
/// stays held (its turns are not marked evolved on), so the next window runs it again.
async fn run_held(
    worker: &mut Worker,
    held: &mut Vec<Job>,
    permit: Permit,
    events: &Events,
    paced: &Paced,
) {
    let stop = permit.signal();
    while !permit.is_stopped() && !held.is_empty() {
        if !paced.admit(&held[0]) {
            held.remove(0);
            continue;
        }
        let outcome = evolve(worker, &held[0], &stop, &paced.pacing).await;
        if outcome.outcome == INTERRUPTED {
            tracing::info!(
                held = held.len(),
                "training window closed; skill evolution continues in the next one"
            );
            break;
        }
        let job = held.remove(0);
        report(worker, job, outcome, events).await;
    }
}

async fn report(worker: &Worker, job: Job, outcome: Outcome, events: &Events) {
    // A skip is logged when it has a reason (a stretch given up on), not for no turns.
    if outcome.outcome != "skipped" || outcome.error.is_some() {
        log_event(worker, &outcome).await;
    }
    let names: Vec<String> = outcome
        .added
        .iter()
        .chain(&outcome.improved)
        .cloned()
        .collect();
    if !names.is_empty() {
        events.emit(EngineEvent::SkillsLearned { names });
    }
    if !outcome.proposed.is_empty() {
        events.emit(EngineEvent::SkillProposed {
            names: outcome.proposed.clone(),
        });
    }
    match outcome.outcome.as_str() {
        "failed" => tracing::warn!(
            trigger = outcome.trigger.as_str(),
            error = outcome.error.as_deref().unwrap_or_default(),
            "skill evolution failed"
        ),
        _ => tracing::info!(
            trigger = outcome.trigger.as_str(),
            added = ?outcome.added,
            improved = ?outcome.improved,
            rejected = outcome.rejected.len(),
            "skill evolution: {}",
            outcome.outcome
        ),
    }
    if let Some(reply) = job.reply {
        let _ = reply.send(outcome);
    }
}

/// One evolution. A completed one moves the session's high-water mark. After a failed call
/// the same stretch (never grown) is offered again once the back-off allows; after
/// [`MAX_ATTEMPTS`] failures it is given up on: skipped with the reason logged, mark moved.
/// An answer still unusable after its one repair is given up on at once.
async fn evolve(worker: &mut Worker, job: &Job, stop: &StopSignal, pacing: &Pacing) -> Outcome {
    let mut out = Outcome {
        trigger: job.trigger,
        sessions: job.sessions.clone(),
        outcome: "skipped".into(),
        added: vec![],
        improved: vec![],
        proposed: vec![],
        rejected: vec![],
        error: None,
        generation: worker.current.get().generation,
        older_turns_skipped: 0,
    };
    let key = job.sessions.join(",");
    let explicit = !matches!(job.trigger, Trigger::EveryNTurns | Trigger::SessionEnd);
    let limit = match pacing.decide(&key, explicit) {
        Decision::Call { through } => through,
        // Queued before the back-off began: the turns wait for a later trigger.
        Decision::Wait | Decision::Fallback => return out,
    };
    let (turns, through, unread) = match &job.samples {
        Some(samples) => (samples.clone(), Vec::new(), 0),
        None => match unevolved_turns(worker, &job.sessions, limit).await {
            Ok(found) => found,
            Err(e) => return failed(out, e),
        },
    };
    if turns.is_empty() {
        return out;
    }
    let (older, turns) = learned_turns::newest_window(turns, digest_bytes);
    out.older_turns_skipped = older.len() + unread;
    let snapshot = worker.current.get();
    let library = snapshot.library.clone();
    let asked: String = turns
        .iter()
        .map(|t| t.user.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let related: Vec<_> = snapshot
        .retriever
        .rank(&asked)
        .into_iter()
        .filter_map(|h| library.get(&h.name))
        .take(RELATED)
        .collect();
    let input = EvolverInput {
        turns: &turns,
        related,
        existing_names: library.skills.iter().map(|s| s.name.as_str()).collect(),
        max_new: worker.settings.max_new,
    };
    let (system, user) = build_prompt(&input);
    let request = Completion {
        system,
        user,
        max_tokens: MAX_TOKENS,
        json_schema: Some(("skills".into(), evolve::response_schema())),
    };
    // The model call is the long part, and nothing is written before it ends: the one
    // place a closing window stops an evolution.
    let asked = llm::complete_parsed(
        Purpose::Evolution,
        &worker.http,
        &worker.endpoint,
        &request,
        parse_proposals,
    );
    let answer = tokio::select! {
        answer = asked => answer,
        () = stop.stopped() => {
            out.outcome = INTERRUPTED.into();
            return out;
        }
    };
    let parsed = match answer {
        Ok(p) => p,
        Err(Failure::Call(e)) => {
            let last = through.iter().map(|(_, i)| *i).max();
            if !pacing.failed(&key, last, &e) {
                return failed(out, e);
            }
            let reason = format!(
                "given up on these turns after {MAX_ATTEMPTS} failed attempts; the last: {e}"
            );
            pacing.gave_up(&reason);
            mark_evolved(worker, through).await;
            out.error = Some(reason);
            return out;
        }
        Err(Failure::Unusable(e)) => {
            let e = format!("the evolver's answer was not usable: {e}");
            pacing.unusable(&key, &e);
            let reason = format!("given up on these turns: {e}");
            pacing.gave_up(&reason);
            mark_evolved(worker, through).await;
            out.error = Some(reason);
            return out;
        }
    };
    pacing.succeeded(&key);
    let origin = Origin {
        sessions: job.sessions.clone(),
        created_at: rfc3339_now(),
        model: Some(worker.endpoint.model.clone()),
        requests: evolve::requests_of(turns.iter().map(|t| t.user.as_str())),
    };
    let decisions = evolve::decide(parsed.proposals, &library, &origin, worker.settings.max_new);
    let (dir, review) = (worker.dir.clone(), worker.settings.review);
    let applied =
        match tokio::task::spawn_blocking(move || evolve::apply(&dir, &decisions, review)).await {
            Ok(a) => a,
            Err(e) => return failed(out, format!("writing skills failed: {e}")),
        };
    out.rejected = parsed
        .rejected
        .into_iter()
        .chain(applied.rejected)
        .map(|r| RejectedSkill {
            name: r.name,
            reason: r.reason,
        })
        .collect();
    out.added = applied.added;
    out.improved = applied.improved;
    out.proposed = applied.proposed;
    if !(out.added.is_empty() && out.improved.is_empty()) {
        out.generation = wait_for_reload(&mut worker.swapped, out.generation).await;
        out.outcome = "added".into();
    } else if !out.proposed.is_empty() {
        out.outcome = "proposed".into();
    } else {
        out.outcome = "nothing".into();
    }
    mark_evolved(worker, through).await;
    out
}

fn failed(mut out: Outcome, error: String) -> Outcome {
    out.outcome = "failed".into();
    out.error = Some(error);
    out
}

/// The newest main turns of `sessions` after the last one evolved on, oldest first, the new
/// high-water marks to store once the evolution is done, and how many older turns were
/// passed over.
async fn unevolved_turns(
    worker: &Worker,
    sessions: &[String],
    limit: Option<u64>,
) -> Result<(Vec<TurnDigest>, Vec<(String, u64)>, usize), String> {
    let recorder = worker.recorder.clone();
    let db = worker.db.clone();
    let sessions = sessions.to_vec();
    let read = tokio::task::spawn_blocking(move || {
        // The triggering turn may still be in the recorder's queue.
        recorder.flush().map_err(|e| e.to_string())?;
        let store = Store::open_read_only(&db).map_err(|e| e.to_string())?;
        let mut digests = Vec::new();
        let mut through = Vec::new();
        let mut skipped = 0;
        for session in sessions {
            // Only the newest window is ever sent; older turns are counted, not read.
            let backlog =
                learned_turns::backlog(&store, JOB, &session, limit, learned_turns::WINDOW_TURNS)
                    .map_err(|e| e.to_string())?;
            if let Some(last) = backlog.through() {
                through.push((session.clone(), last));
            }
            skipped += backlog.older;
            digests.extend(read_digests(&backlog.newest).into_iter().map(|(_, d)| d));
        }
        Ok((digests, through, skipped))
    })
    .await;
    read.map_err(|e| e.to_string())?
}

/// This job's mark in `learned_turns`.
pub(crate) const JOB: &str = "skills.evolved_through";
/// This job's name in status.
const OWNER_HEALTH: &str = "skill_evolution";

/// What one turn adds to the evolver's prompt.
fn digest_bytes(t: &TurnDigest) -> usize {
    t.user.len() + t.assistant.len() + t.tool_errors.iter().map(String::len).sum::<usize>()
}

async fn mark_evolved(worker: &Worker, through: Vec<(String, u64)>) {
    if through.is_empty() {
        return;
    }
    let db = worker.db.clone();
    let written = tokio::task::spawn_blocking(move || {
        let mut store = Store::open(&db)?;
        for (session, index) in through {
            store.state_set(&learned_turns::mark_key(JOB, &session), &index.to_string())?;
        }
        Ok::<_, metaclaw_store::StoreError>(())
    })
    .await;
    if !matches!(written, Ok(Ok(()))) {
        tracing::warn!("could not record which turns were evolved on; they may be read again");
    }
}

/// The generation after the library reloaded the written files (or the current one if the
/// reload takes too long: the event is still logged, with the older number).
async fn wait_for_reload(swapped: &mut watch::Receiver<u64>, before: u64) -> u64 {
    let waited = tokio::time::timeout(RELOAD_WAIT, swapped.wait_for(|g| *g > before))
        .await
        .ok()
        .and_then(Result::ok)
        .map(|g| *g);
    waited.unwrap_or_else(|| *swapped.borrow())
}

async fn log_event(worker: &Worker, out: &Outcome) {
    let event = NewSkillEvent {
        at_ms: unix_ms(SystemTime::now()),
        trigger: out.trigger.as_str().to_string(),
        session_ids: out.sessions.clone(),
        model: Some(worker.endpoint.model.clone()),
        outcome: out.outcome.clone(),
        added: out.added.clone(),
        improved: out.improved.clone(),
        rejected: out.rejected.clone(),
        error: out.error.clone(),
        generation: i64::try_from(out.generation).unwrap_or(i64::MAX),
        detail: {
            let mut detail = json!({});
            if out.older_turns_skipped > 0 {
                detail["older_turns_skipped"] = json!(out.older_turns_skipped);
            }
            if !out.proposed.is_empty() {
                detail["proposed"] = json!(out.proposed);
            }
            detail
        },
    };
    let db = worker.db.clone();
    let written =
        tokio::task::spawn_blocking(move || Store::open(&db)?.insert_skill_event(&event)).await;
    if !matches!(written, Ok(Ok(_))) {
        tracing::warn!("could not log the skill evolution event");
    }
}

fn rfc3339_now() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}
