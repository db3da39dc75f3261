//! `metaclaw setup`: agents, provider, key, connection test, mode — written key by key, so
//! a re-run is an edit and every other setting stays — then the agents connected, MetaClaw
//! (re)started and one test request sent. Interactive, or from flags (`--non-interactive`).

mod agent_choice;
mod bring_in;
mod check;
mod connect;
mod finish;
mod flags;
mod flow;
mod interrupt;
mod prompts;

use metaclaw_engine::agents;
use metaclaw_engine::config::Config;
use metaclaw_engine::paths::Paths;
use metaclaw_engine::providers;
use metaclaw_engine::secrets::SecretStore;
use metaclaw_engine::setup::{self, Answers, Current, Status};
use tokio::runtime::Runtime;

use crate::cli::SetupArgs;
use crate::exit::{Failure, Outcome};
use crate::output;
use interrupt::Phase;
use prompts::Prompter;

pub fn run(paths: &Paths, args: SetupArgs) -> Outcome {
    // Config warnings (unknown keys) reach the terminal; setup works without them.
    let _ = metaclaw_engine::logging::init_cli_logging();
    let interactive = !args.non_interactive;
    if interactive {
        interrupt::install();
    }
    let store = SecretStore::open(paths)?;
    let runtime = crate::admin_client::runtime()?;

    interrupt::set(Phase::Writing);
    bring_in::run(paths, &store, args.import.as_deref())?;
    interrupt::checkpoint("moving plain-text keys into the keychain")?;
    interrupt::set(Phase::Asking);

    let current = setup::current(paths, &store)?;
    let config = Config::load(paths)?.config;
    let env = agents::system_env()?;
    let agents = agents::statuses(paths, &env);
    // Agents that run MetaClaw inside them (asked at the terminal only).
    let mut plugins = Vec::new();
    let answers = if interactive {
        ask(
            &runtime,
            &current,
            &config,
            &store,
            &args,
            &agents,
            &mut plugins,
        )?
    } else {
        from_flags(&runtime, &current, &config, &store, &args, &agents)?
    };

    interrupt::set(Phase::Writing);
    let applied = setup::apply(paths, &store, &answers).map_err(flags::usage_error)?;
    interrupt::set(Phase::Written);
    output::line("");
    for line in applied.written.iter().chain(&applied.key) {
        output::line(line);
    }
    output::line(format!("Config saved to {}.", paths.config.display()));
    interrupt::checkpoint("the config was saved")?;

    let config = Config::load(paths)?.config;
    let connected = connect::all(paths, &env, &config, &store, &answers.agents, false)?;
    connect::all(paths, &env, &config, &store, &plugins, true)?;
    still_connected_hint(paths, &env, &answers.agents);
    if args.no_start {
        let running =
            metaclaw_engine::runfiles::RunInfo::read(paths)?.is_some_and(|i| i.is_alive());
        output::line(if running {
            "MetaClaw is running with the previous settings: `metaclaw stop && metaclaw start --daemon` applies these."
        } else {
            "Start MetaClaw with `metaclaw start --daemon` when you are ready."
        });
        return Ok(());
    }
    finish::restart(paths)?;
    finish::test_request(&runtime, &env, &config, &store, &connected)
}

/// Steps 2–6 at the terminal; flags given fill the defaults.
fn ask(
    runtime: &Runtime,
    current: &Current,
    config: &Config,
    store: &SecretStore,
    args: &SetupArgs,
    agents: &[Status],
    plugins: &mut Vec<String>,
) -> Result<Answers, Failure> {
    let prompter = Prompter::new();
    output::line(
        "MetaClaw setup. Press Enter to keep the value in [brackets]; Ctrl-C stops without writing anything.",
    );
    let mut answers = flags::overlay(current, args, agents)?;
    let chosen = agent_choice::ask(&prompter, agents, &answers.agents)?;
    answers.agents = chosen.proxied;
    *plugins = chosen.plugins;
    flags::settle_wechat(&mut answers, args.wechat.is_some());
    loop {
        answers = flow::ask_provider(&prompter, &answers)?;
        // A stored key is offered for the base it was stored with only.
        let key_stored = current.key_source.is_some()
            && providers::same_base(&answers.api_base, &current.answers.api_base);
        if args.api_key_env.is_none() {
            let keep = if answers.api_key.is_some() {
                Some("as entered")
            } else {
                key_stored.then_some("stored")
            };
            output::line("");
            if let Some(key) = prompter.hidden("API key (not shown as you type)", keep)? {
                answers.api_key = Some(key);
            }
        }
        if args.skip_test {
            break;
        }
        match check::until_settled(runtime, &prompter, &mut answers, config, store, key_stored)? {
            check::Settled::Done => break,
            check::Settled::Edit => {}
        }
    }
    answers.mode = flow::ask_mode(&prompter, answers.mode)?;
    setup::validate(&answers)?;
    Ok(answers)
}

/// `--non-interactive`: the flags over the current config; a failing test writes nothing.
fn from_flags(
    runtime: &Runtime,
    current: &Current,
    config: &Config,
    store: &SecretStore,
    args: &SetupArgs,
    agents: &[Status],
) -> Result<Answers, Failure> {
    if !current.configured && args.provider.is_none() && args.api_base.is_none() {
        return Err(Failure::usage(format!(
            "no provider is configured yet: pass --provider NAME ({}), and for custom also --api-base URL and --model ID",
            flags::preset_names()
        )));
    }
    let answers = flags::overlay(current, args, agents)?;
    let preset = setup::validate(&answers).map_err(flags::usage_error)?;
    if preset.key_required && answers.api_key.is_none() && current.key_source.is_none() {
        return Err(Failure::usage(format!(
            "--api-key-env: {} needs an API key; pass --api-key-env VAR with the key in $VAR",
            preset.label
        )));
    }
    if !args.skip_test {
        let report = check::test(runtime, &answers, config, store)?;
        if !report.ok {
            return Err(Failure::error(
                "the connection test failed, so nothing was written (--skip-test writes anyway)",
            ));
        }
    }
    Ok(answers)
}

/// Agents connected before but not chosen now stay connected until disconnected.
fn still_connected_hint(paths: &Paths, env: &setup::Env, chosen: &[String]) {
    for name in agents::connected_names(paths, env) {
        if !chosen.contains(&name) {
            output::line(format!(
                "{name} stays pointed at MetaClaw; `metaclaw agent disconnect {name}` restores it."
            ));
        }
    }
}
