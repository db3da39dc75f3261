//! The `metaclaw` binary: the CLI, and (with the `desktop` feature) the tray app.

mod admin_client;
#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod allocator;
mod cli;
mod commands;
#[cfg(feature = "desktop")]
mod desktop;
mod exit;
mod output;

use std::process::ExitCode;

use clap::Parser;
use metaclaw_engine::paths::Paths;

use cli::{Cli, Command, ModelsCommand, StartArgs, UpdateCommand};
use exit::Outcome;

/// This build's version: `METACLAW_VERSION` at build time stamps it (a release machine's
/// build, CI's N+1 in scripts/update-test.sh), else the workspace's.
pub const VERSION: &str = match option_env!("METACLAW_VERSION") {
    Some(v) => v,
    None => env!("CARGO_PKG_VERSION"),
};

fn main() -> ExitCode {
    #[cfg(feature = "desktop")]
    prefer_software_rendering();
    metaclaw_updates::version::set_current(VERSION);
    // The program file as it is now, so a replacement (a package upgrade) is seen later.
    let _ = metaclaw_updates::ExeWatch::process();
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            if !f.message.is_empty() {
                output::error(&f.message);
            }
            ExitCode::from(f.code)
        }
    }
}

/// The window shows a simple dashboard, which software rendering draws well. Not initialising
/// OpenGL keeps Mesa (and, without a GPU driver, LLVM) out of the app and its web process:
/// about 30 MB less idle in the tray and 60 MB less with the dashboard open
/// (`scripts/measure-desktop.sh`). A value the user set wins.
#[cfg(feature = "desktop")]
#[allow(unsafe_code)]
fn prefer_software_rendering() {
    for (name, value) in [
        ("GDK_GL", "disable"),
        ("WEBKIT_DISABLE_COMPOSITING_MODE", "1"),
    ] {
        if std::env::var_os(name).is_none() {
            // SAFETY: the first thing main does, before any thread exists, so nothing reads
            // the environment at the same time.
            unsafe { std::env::set_var(name, value) };
        }
    }
}

fn run(cli: Cli) -> Outcome {
    // Before anything that can fail: a hook never stops the agent that runs it.
    if let Some(Command::Hook { agent }) = cli.command {
        commands::hook::run(agent);
        return Ok(());
    }
    let paths = Paths::from_env()?;
    match cli.command {
        // The desktop shell when built with it and a display is there; else the foreground engine.
        None => commands::start::run(
            paths,
            StartArgs {
                hidden: cli.hidden,
                ..StartArgs::default()
            },
        ),
        Some(Command::Start(args)) => commands::start::run(paths, args),
        Some(Command::Stop) => commands::stop::run(&paths),
        Some(Command::Status { json }) => commands::status::run(&paths, json),
        Some(Command::Config(args)) => {
            // Logging is a convenience for config warnings; the command works without it.
            let _ = metaclaw_engine::logging::init_cli_logging();
            commands::config::run(&paths, args)
        }
        Some(Command::Skills(command)) => commands::skills::run(&paths, command),
        Some(Command::Memory(command)) => commands::memory::run(&paths, command),
        Some(Command::Logs { follow, lines }) => commands::logs::run(&paths, follow, lines),
        Some(Command::Setup(args)) => commands::setup::run(&paths, args),
        Some(Command::Agent(command)) => commands::agent::run(&paths, command),
        Some(Command::Pause { duration, until }) => {
            commands::pause::pause(&paths, duration.as_deref(), until.as_deref())
        }
        Some(Command::Resume) => commands::pause::resume(&paths),
        Some(Command::Scheduler(command)) => commands::scheduler::run(&paths, command),
        Some(Command::Storage(args)) => commands::storage::run(&paths, args),
        Some(Command::Update(UpdateCommand::Check { json })) => {
            commands::update::check(&paths, json)
        }
        Some(Command::TrainStep { json }) => commands::train::run(&paths, json),
        Some(Command::Models(ModelsCommand::Download {
            model,
            tokenizer,
            revision,
            hf_endpoint,
        })) => commands::models::download(
            &paths,
            commands::models::DownloadArgs {
                model,
                tokenizer,
                revision,
                hf_endpoint,
            },
        ),
        Some(Command::Models(ModelsCommand::Import { path })) => {
            commands::models::import(&paths, &path)
        }
        Some(Command::Models(ModelsCommand::Status)) => commands::models::status(&paths),
        Some(Command::Uninstall { yes, keep_data }) => {
            commands::uninstall::run(&paths, yes, keep_data)
        }
        Some(Command::Hook { .. }) => Ok(()),
    }
}
