//! The Weaver client: its own REST protocol behind the same [`Backend`] trait.
//!
//! - Key header `X-WEAVER-API-KEY`; a session (`POST /api/v1/sessions`) kept alive by
//!   `POST /api/v1/sessions/{id}/heartbeat`.
//! - Training runs: `POST /api/v1/sessions/{id}/models` (answered directly).
//! - Training work is queued as operations: `POST /api/v1/models/{model}/forward-backward-passes`
//!   and `/optimizer-steps` (body `{"payload": …}`), `/export-sampler`, `/checkpoints`,
//!   `/load`; sampling sessions at `POST /api/v1/sessions/{id}/sampling-sessions` and samples
//!   at `POST /api/v1/sampling-sessions/{id}/samples`. Operations are polled with
//!   `GET /api/v1/operations/{id}` until `done` or `error`.
//! - Weaver's `importance_sampling` requires a `loss_mask` input: it is sent as
//!   "advantage ≠ 0", the same mask the advantages already encode.
//!
//! Unlike Tinker, Weaver does not deduplicate operation submissions, so they are sent once
//! (a 429 is still waited out); reads, polls and heartbeats are retried.

mod operation;

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
use crate::tinker::wire::{self, malformed, str_field};
use crate::types::{
    AdamParams, Datum, ForwardBackwardOutput, LossConfig, LossFn, OptimOutput, SampleOutput,
    Sampler, SamplerSource, SamplingParams, TrainingRun,
};

pub const WEAVER_DEFAULT_BASE_URL: &str = "https://weaver-console.nex-agi.cn";

#[derive(Debug, Clone)]
pub struct WeaverConfig {
    pub base_url: String,
    pub api_key: String,
    pub policy: RetryPolicy,
}

pub struct WeaverClient {
    http: Arc<Http>,
    session: Session,
    model_seq: AtomicU64,
    sampling_seq: AtomicU64,
}

impl std::fmt::Debug for WeaverClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WeaverClient")
            .field("session_id", &self.session.id)
            .finish_non_exhaustive()
    }
}

/// The id of a Weaver object, whatever the name of its id field.
fn id_of(v: &Value) -> Option<String> {
    str_field(
        v,
        &[
            "id",
            "operation_id",
            "session_id",
            "model_id",
            "sampling_session_id",
        ],
    )
}

impl WeaverClient {
    pub async fn connect(config: WeaverConfig) -> Result<Self, LearnError> {
        let http = Arc::new(Http::new(
            "Weaver",
            &config.base_url,
            "x-weaver-api-key",
            &config.api_key,
            config.policy,
        )?);
        let op = "creating a session";
        let body = json!({"tags": ["metaclaw"], "user_metadata": {}, "sdk_version": "metaclaw"});
        let v = http
            .call(
                op,
                Method::POST,
                "/api/v1/sessions",
                Some(&body),
                Resend::Safe,
            )
            .await?;
        let session_id = id_of(&v).ok_or_else(|| malformed(http.backend, op, "no session id"))?;
        let session = Session::start(
            &http,
            session_id.clone(),
            format!("/api/v1/sessions/{session_id}/heartbeat"),
            None,
        );
        Ok(Self {
            http,
            session,
            model_seq: AtomicU64::new(1),
            sampling_seq: AtomicU64::new(1),
        })
    }

    /// The backend session: its id, heartbeats, whether it expired, and shutting it down.
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// Queues an operation and waits for its `response`.
    async fn run_op(
        &self,
        op: &str,
        path: &str,
        body: &Value,
        run: Option<&TrainingRun>,
    ) -> Result<Value, LearnError> {
        let v = self
            .http
            .call(op, Method::POST, path, Some(body), Resend::Once)
            .await
            .inspect_err(|e| crate::tinker::release_if_refused(e, run, body))?;
        let handle = v.get("operation").filter(|o| o.is_object()).unwrap_or(&v);
        operation::wait(&self.http, op, handle).await
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
            "model_seq_id": self.model_seq.fetch_add(1, Ordering::SeqCst),
            "base_model": base_model,
            "lora_config": {"rank": rank, "train_mlp": true, "train_attn": true, "train_unembed": true},
        });
        let path = format!("/api/v1/sessions/{}/models", self.session.id);
        let v = self
            .http
            .call(op, Method::POST, &path, Some(&body), Resend::Once)
            .await?;
        let model_id = id_of(&v).ok_or_else(|| malformed(self.http.backend, op, "no model id"))?;
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
        if loss.loss_fn != LossFn::ImportanceSampling {
            return Err(LearnError::invalid(
                "loss function",
                format!(
                    "Weaver supports importance_sampling, not {}",
                    loss.loss_fn.as_str()
                ),
            ));
        }
        let op = "running forward_backward";
        let payload = json!({
            "model_id": run.model_id,
            "seq_id": run.take_seq(),
            "forward_backward_input": wire::forward_backward_input(data, &loss, true),
        });
        let path = format!("/api/v1/models/{}/forward-backward-passes", run.model_id);
        let v = self
            .run_op(op, &path, &json!({"payload": payload}), Some(run))
            .await?;
        wire::forward_backward_output(&v, self.http.backend, op)
    }

    async fn optim_step_impl(
        &self,
        run: &TrainingRun,
        params: AdamParams,
    ) -> Result<OptimOutput, LearnError> {
        let payload = json!({
            "model_id": run.model_id,
            "seq_id": run.take_seq(),
            "adam_params": wire::adam(&params),
        });
        let path = format!("/api/v1/models/{}/optimizer-steps", run.model_id);
        let v = self
            .run_op(
                "running the optimizer step",
                &path,
                &json!({"payload": payload}),
                Some(run),
            )
            .await?;
        Ok(OptimOutput {
            metrics: wire::metrics(v.get("metrics")),
        })
    }

    async fn save_for_sampler_impl(
        &self,
        run: &TrainingRun,
        name: &str,
    ) -> Result<String, LearnError> {
        let op = "saving weights for sampling";
        let body = json!({"seq_id": run.take_seq(), "path": name});
        let path = format!("/api/v1/models/{}/export-sampler", run.model_id);
        let v = self.run_op(op, &path, &body, Some(run)).await?;
        str_field(&v, &["model_path", "path"])
            .ok_or_else(|| malformed(self.http.backend, op, "no model path"))
    }

    async fn create_sampler_impl(&self, source: &SamplerSource) -> Result<Sampler, LearnError> {
        let op = "opening a sampling session";
        let (base_model, model_path) = match source {
            SamplerSource::Path(p) => (Value::Null, json!(p)),
            SamplerSource::BaseModel(m) => (json!(m), Value::Null),
        };
        let body = json!({
            "sampling_session_seq_id": self.sampling_seq.fetch_add(1, Ordering::SeqCst),
            "base_model": base_model,
            "model_path": model_path,
        });
        let path = format!("/api/v1/sessions/{}/sampling-sessions", self.session.id);
        let v = self
            .http
            .call(op, Method::POST, &path, Some(&body), Resend::Once)
            .await?;
        // A 202 carries the session plus a weight-sync operation to wait for.
        let session = match v.get("sync_operation") {
            Some(sync) if sync.is_object() => {
                operation::wait(&self.http, op, sync).await?;
                v.get("sampling_session").cloned().unwrap_or(Value::Null)
            }
            _ => v,
        };
        let id = id_of(&session)
            .ok_or_else(|| malformed(self.http.backend, op, "no sampling session id"))?;
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
        let op = "sampling";
        let body = json!({
            "prompt": wire::model_input(prompt),
            "sampling_params": wire::sampling_params(params),
            "num_samples": params.n,
            "prompt_logprobs": false,
            "topk_prompt_logprobs": 0,
        });
        let path = format!("/api/v1/sampling-sessions/{}/samples", sampler.id);
        let v = self.run_op(op, &path, &body, None).await?;
        wire::sample_output(&v, self.http.backend, op)
    }

    async fn save_state_impl(&self, run: &TrainingRun, name: &str) -> Result<String, LearnError> {
        let op = "saving the training state";
        let body = json!({"type": "weight_and_optimizer", "name": name});
        let path = format!("/api/v1/models/{}/checkpoints", run.model_id);
        let v = self
            .http
            .call(op, Method::POST, &path, Some(&body), Resend::Once)
            .await?;
        let checkpoint = v.get("checkpoint").cloned().unwrap_or(Value::Null);
        let handle = v.get("operation").filter(|o| o.is_object()).unwrap_or(&v);
        let done = operation::wait(&self.http, op, handle).await?;
        str_field(&checkpoint, &["path"])
            .or_else(|| str_field(&done, &["path"]))
            .ok_or_else(|| malformed(self.http.backend, op, "no checkpoint path"))
    }

    async fn load_state_impl(
        &self,
        run: &TrainingRun,
        path: &str,
        with_optimizer: bool,
    ) -> Result<(), LearnError> {
        let body = json!({"path": path, "include_optimizer": with_optimizer});
        let url = format!("/api/v1/models/{}/load", run.model_id);
        self.run_op("loading the checkpoint", &url, &body, None)
            .await?;
        Ok(())
    }
}

impl Backend for WeaverClient {
    fn kind(&self) -> BackendKind {
        BackendKind::Weaver
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
        Box::pin(self.save_for_sampler_impl(run, name))
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
        Box::pin(self.save_state_impl(run, name))
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
