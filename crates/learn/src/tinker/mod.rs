//! The Tinker JSON client, also used for MinT (same protocol, its own base URL and key).
//!
//! Every mutating call is submitted, answered with a request id, and its result collected
//! through [`future::retrieve`] before the call returns. Requests of one training run carry
//! increasing sequence ids (the server runs them strictly in that order).
//!
//! Resending after a connection error or a 5xx: every submission carries an
//! `X-Idempotency-Key` that stays the same across its attempts, and training requests also
//! carry their sequence id, which the server runs at most once; so all Tinker calls are
//! resent (bounded, with back-off). A result that expired (410) is resubmitted only for
//! sampling, which changes nothing on the server; for a training request it is an error,
//! because running a forward_backward or an optimizer step twice would corrupt the run.

mod future;
mod session;
pub(crate) mod wire;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use reqwest::Method;
use serde_json::{Value, json};

use crate::backend::{Backend, BackendFuture};
use crate::error::LearnError;
use crate::heartbeat::Session;
use crate::http::{Http, Resend};
use crate::retry::RetryPolicy;
use crate::select::BackendKind;
use crate::types::{
    AdamParams, Datum, ForwardBackwardOutput, LossConfig, OptimOutput, SampleOutput, Sampler,
    SamplerSource, SamplingParams, TrainingRun,
};
use session::ServerFlags;
use wire::{malformed, str_field};

pub const TINKER_DEFAULT_BASE_URL: &str =
    "https://tinker.thinkingmachines.dev/services/tinker-prod";
pub const MINT_DEFAULT_BASE_URL: &str = "https://mint.macaron.im/train";

/// How many times an expired sampling result is resubmitted.
const SAMPLE_RESUBMITS: u32 = 2;

#[derive(Debug, Clone)]
pub struct TinkerConfig {
    /// [`BackendKind::Tinker`] or [`BackendKind::Mint`] (only changes names in messages).
    pub kind: BackendKind,
    pub base_url: String,
    pub api_key: String,
    pub policy: RetryPolicy,
}

pub struct TinkerClient {
    http: Arc<Http>,
    kind: BackendKind,
    session: Session,
    flags: ServerFlags,
    model_seq: AtomicU64,
    sampling_seq: AtomicU64,
}

impl std::fmt::Debug for TinkerClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TinkerClient")
            .field("kind", &self.kind)
            .field("session_id", &self.session.id)
            .finish_non_exhaustive()
    }
}

impl TinkerClient {
    /// Reads the server's flags, exchanges the key for a JWT if the server asks for one,
    /// creates a session and starts its heartbeat.
    pub async fn connect(config: TinkerConfig) -> Result<Self, LearnError> {
        let name = config.kind.display_name();
        let http = Arc::new(Http::new(
            name,
            &config.base_url,
            "x-api-key",
            &config.api_key,
            config.policy,
        )?);
        let flags = session::client_config(&http).await?;
        if flags.jwt {
            http.exchange_jwt().await?;
        }
        let session_id = session::create_session(&http).await?;
        let session = Session::start(
            &http,
            session_id.clone(),
            "/api/v1/session_heartbeat".to_owned(),
            Some(json!({"session_id": session_id, "type": "session_heartbeat"})),
        );
        Ok(Self {
            http,
            kind: config.kind,
            session,
            flags,
            model_seq: AtomicU64::new(0),
            sampling_seq: AtomicU64::new(0),
        })
    }

    /// The backend session: its id, heartbeats, whether it expired, and shutting it down.
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// Submits a request and waits for its result.
    async fn submit(
        &self,
        op: &str,
        request_type: &str,
        path: &str,
        body: &Value,
        run: Option<&TrainingRun>,
    ) -> Result<Value, LearnError> {
        let v = self
            .http
            .call(op, Method::POST, path, Some(body), Resend::Safe)
            .await
            .inspect_err(|e| release_if_refused(e, run, body))?;
        match str_field(&v, &["request_id"]) {
            Some(id) => future::retrieve(&self.http, op, request_type, &id).await,
            None => Err(malformed(self.http.backend, op, "no request_id")),
        }
    }

    async fn create_training_run_impl(
        &self,
        base_model: &str,
        rank: u32,
    ) -> Result<TrainingRun, LearnError> {
        if rank == 0 {
            return Err(LearnError::invalid("LoRA rank", "it must be at least 1"));
        }
        let op = "creating the training run";
        let body = json!({
            "session_id": self.session.id,
            "model_seq_id": self.model_seq.fetch_add(1, Ordering::SeqCst),
            "base_model": base_model,
            "lora_config": {"rank": rank, "train_mlp": true, "train_attn": true, "train_unembed": true},
            "type": "create_model",
        });
        let v = self
            .submit(op, "create_model", "/api/v1/create_model", &body, None)
            .await?;
        let model_id = str_field(&v, &["model_id"])
            .ok_or_else(|| malformed(self.http.backend, op, "no model_id"))?;
        Ok(TrainingRun::new(model_id, base_model.to_owned(), rank, 1))
    }

    async fn forward_backward_impl(
        &self,
        run: &TrainingRun,
        data: &[Datum],
        loss: LossConfig,
    ) -> Result<ForwardBackwardOutput, LearnError> {
        if data.is_empty() {
            return Err(LearnError::invalid("training batch", "it has no datums"));
        }
        let op = "running forward_backward";
        // Submit every chunk first (they run in sequence order), then collect the results.
        let mut pending = Vec::new();
        for chunk in data.chunks(self.flags.max_chunk_len) {
            let body = json!({
                "model_id": run.model_id,
                "seq_id": run.take_seq(),
                "forward_backward_input": wire::forward_backward_input(chunk, &loss, false),
                "type": "forward_backward",
            });
            let v = self
                .http
                .call(
                    op,
                    Method::POST,
                    "/api/v1/forward_backward",
                    Some(&body),
                    Resend::Safe,
                )
                .await
                .inspect_err(|e| release_if_refused(e, Some(run), &body))?;
            let id = str_field(&v, &["request_id"])
                .ok_or_else(|| malformed(self.http.backend, op, "no request_id"))?;
            pending.push((chunk.len(), id));
        }
        let mut parts = Vec::new();
        for (n, id) in pending {
            let v = future::retrieve(&self.http, op, "forward_backward", &id).await?;
            parts.push((n, wire::forward_backward_output(&v, self.http.backend, op)?));
        }
        Ok(wire::merge(parts))
    }

    async fn optim_step_impl(
        &self,
        run: &TrainingRun,
        params: AdamParams,
    ) -> Result<OptimOutput, LearnError> {
        if !(params.learning_rate >= 0.0
            && (0.0..1.0).contains(&params.beta1)
            && (0.0..1.0).contains(&params.beta2)
            && params.eps > 0.0)
        {
            return Err(LearnError::invalid(
                "Adam parameters",
                "need lr ≥ 0, 0 ≤ beta < 1 and eps > 0",
            ));
        }
        let body = json!({
            "model_id": run.model_id,
            "seq_id": run.take_seq(),
            "adam_params": wire::adam(&params),
            "type": "optim_step",
        });
        let v = self
            .submit(
                "running the optimizer step",
                "optim_step",
                "/api/v1/optim_step",
                &body,
                Some(run),
            )
            .await?;
        Ok(OptimOutput {
            metrics: wire::metrics(v.get("metrics")),
        })
    }

    async fn save_path(
        &self,
        run: &TrainingRun,
        name: &str,
        endpoint: &str,
        op: &str,
    ) -> Result<String, LearnError> {
        if name.is_empty() {
            return Err(LearnError::invalid("checkpoint name", "it is empty"));
        }
        let body = json!({
            "model_id": run.model_id,
            "seq_id": run.take_seq(),
            "path": name,
            "type": endpoint,
        });
        let v = self
            .submit(
                op,
                endpoint,
                &format!("/api/v1/{endpoint}"),
                &body,
                Some(run),
            )
            .await?;
        str_field(&v, &["path"]).ok_or_else(|| malformed(self.http.backend, op, "no path"))
    }

    async fn create_sampler_impl(&self, source: &SamplerSource) -> Result<Sampler, LearnError> {
        let op = "opening a sampling session";
        let mut body = json!({
            "session_id": self.session.id,
            "sampling_session_seq_id": self.sampling_seq.fetch_add(1, Ordering::SeqCst),
            "type": "create_sampling_session",
        });
        match source {
            SamplerSource::Path(p) => body["model_path"] = json!(p),
            SamplerSource::BaseModel(m) => body["base_model"] = json!(m),
        }
        let v = self
            .http
            .call(
                op,
                Method::POST,
                "/api/v1/create_sampling_session",
                Some(&body),
                Resend::Safe,
            )
            .await?;
        let id = str_field(&v, &["sampling_session_id"])
            .ok_or_else(|| malformed(self.http.backend, op, "no sampling_session_id"))?;
        Ok(Sampler::new(id, source.clone()))
    }

    async fn sample_impl(
        &self,
        sampler: &Sampler,
        prompt: &[u32],
        params: &SamplingParams,
    ) -> Result<SampleOutput, LearnError> {
        if prompt.is_empty() {
            return Err(LearnError::invalid("prompt", "it has no tokens"));
        }
        if params.max_tokens == 0 || params.n == 0 {
            return Err(LearnError::invalid(
                "sampling parameters",
                "max_tokens and n must be at least 1",
            ));
        }
        let op = "sampling";
        let mut resubmits = 0;
        loop {
            let body = json!({
                "sampling_session_id": sampler.id,
                "seq_id": sampler.take_seq(),
                "num_samples": params.n,
                "prompt": wire::model_input(prompt),
                "sampling_params": wire::sampling_params(params),
                "prompt_logprobs": false,
                "topk_prompt_logprobs": 0,
                "type": "sample",
            });
            let headers = [("x-tinker-sampling-backpressure", "1".to_owned())];
            let raw = self
                .http
                .send(
                    op,
                    Method::POST,
                    "/api/v1/asample",
                    Some(&body),
                    &headers,
                    Resend::Safe,
                )
                .await?;
            if !raw.status.is_success() {
                return Err(self.http.error(op, &raw));
            }
            let id = str_field(&raw.json(), &["request_id"])
                .ok_or_else(|| malformed(self.http.backend, op, "no request_id"))?;
            match future::retrieve(&self.http, op, "sample", &id).await {
                Ok(v) => return wire::sample_output(&v, self.http.backend, op),
                Err(LearnError::Expired { .. }) if resubmits < SAMPLE_RESUBMITS => {
                    resubmits += 1;
                    tracing::info!(
                        backend = self.http.backend,
                        "sampling result expired; resubmitting"
                    );
                }
                Err(e) => return Err(e),
            }
        }
    }

    async fn load_state_impl(
        &self,
        run: &TrainingRun,
        path: &str,
        with_optimizer: bool,
    ) -> Result<(), LearnError> {
        if !path.contains("://") {
            return Err(LearnError::invalid(
                "checkpoint path",
                format!("`{path}` is not a saved-state path (tinker://…)"),
            ));
        }
        let body = json!({
            "model_id": run.model_id,
            "seq_id": run.take_seq(),
            "path": path,
            "optimizer": with_optimizer,
            "type": "load_weights",
        });
        self.submit(
            "loading the checkpoint",
            "load_weights",
            "/api/v1/load_weights",
            &body,
            Some(run),
        )
        .await?;
        Ok(())
    }
}

/// Gives a training request's sequence id back when the server refused the request.
pub(crate) fn release_if_refused(e: &LearnError, run: Option<&TrainingRun>, body: &Value) {
    let seq = body
        .get("seq_id")
        .or_else(|| body.pointer("/payload/seq_id"))
        .and_then(Value::as_u64);
    if let (true, Some(run), Some(seq)) = (e.is_refusal(), run, seq) {
        run.release_seq(seq);
    }
}

impl Backend for TinkerClient {
    fn kind(&self) -> BackendKind {
        self.kind
    }

    fn create_training_run<'a>(
        &'a self,
        base_model: &'a str,
        lora_rank: u32,
    ) -> BackendFuture<'a, TrainingRun> {
        Box::pin(self.create_training_run_impl(base_model, lora_rank))
    }

    fn forward_backward<'a>(
        &'a self,
        run: &'a TrainingRun,
        data: &'a [Datum],
        loss: LossConfig,
    ) -> BackendFuture<'a, ForwardBackwardOutput> {
        Box::pin(self.forward_backward_impl(run, data, loss))
    }

    fn optim_step<'a>(
        &'a self,
        run: &'a TrainingRun,
        params: AdamParams,
    ) -> BackendFuture<'a, OptimOutput> {
        Box::pin(self.optim_step_impl(run, params))
    }

    fn save_weights_for_sampler<'a>(
        &'a self,
        run: &'a TrainingRun,
        name: &'a str,
    ) -> BackendFuture<'a, String> {
        Box::pin(self.save_path(
            run,
            name,
            "save_weights_for_sampler",
            "saving weights for sampling",
        ))
    }

    fn create_sampler<'a>(&'a self, source: &'a SamplerSource) -> BackendFuture<'a, Sampler> {
        Box::pin(self.create_sampler_impl(source))
    }

    fn sample<'a>(
        &'a self,
        sampler: &'a Sampler,
        prompt: &'a [u32],
        params: &'a SamplingParams,
    ) -> BackendFuture<'a, SampleOutput> {
        Box::pin(self.sample_impl(sampler, prompt, params))
    }

    fn save_state<'a>(&'a self, run: &'a TrainingRun, name: &'a str) -> BackendFuture<'a, String> {
        Box::pin(self.save_path(run, name, "save_weights", "saving the training state"))
    }

    fn load_state<'a>(
        &'a self,
        run: &'a TrainingRun,
        path: &'a str,
        with_optimizer: bool,
    ) -> BackendFuture<'a, ()> {
        Box::pin(self.load_state_impl(run, path, with_optimizer))
    }
}
