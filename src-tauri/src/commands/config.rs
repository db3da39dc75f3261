//! `metaclaw config show | get | set | unset | path`, and the legacy `config KEY [VALUE]`.

use std::io::IsTerminal;

use metaclaw_engine::config;
use metaclaw_engine::paths::Paths;
use metaclaw_engine::secrets::SecretStore;

use crate::cli::{ConfigArgs, ConfigCommand};
use crate::exit::{Failure, Outcome};
use crate::output;

pub fn run(paths: &Paths, args: ConfigArgs) -> Outcome {
    let command = match (args.command, args.key, args.value) {
        (Some(c), _, _) => c,
        (None, Some(key), Some(value)) => ConfigCommand::Set {
            key,
            value: Some(value),
        },
        (None, Some(key), None) => ConfigCommand::Get { key },
        (None, None, _) => ConfigCommand::Show,
    };
    let store = || -> Result<SecretStore, Failure> {
        let loaded = metaclaw_engine::config::Config::load(paths).ok();
        let store = SecretStore::open(paths)?;
        Ok(match loaded {
            Some(l) => store.with_legacy(l.legacy_secrets),
            None => store,
        })
    };
    match command {
        ConfigCommand::Path => output::line(paths.config.display()),
        ConfigCommand::Show => {
            output::line(format!("# {}", paths.config.display()));
            output::line(config::show(paths, &store()?)?);
        }
        ConfigCommand::Get { key } => output::line(config::get(paths, &key, &store()?)?),
        ConfigCommand::Set { key, value } => {
            let value = match value {
                Some(v) => v,
                None => read_secret(&key)?,
            };
            let outcome = config::set(paths, &key, &value, &store()?)?;
            output::line(outcome);
            restart_hint(paths);
        }
        ConfigCommand::Unset { key } => {
            match config::unset(paths, &key, &store()?)? {
                config::UnsetOutcome::Removed => output::line(format!("Unset {key}")),
                config::UnsetOutcome::NotSet => output::line(format!("{key} was not set")),
            }
            restart_hint(paths);
        }
    }
    Ok(())
}

/// A secret typed at a hidden prompt, or the first line of a piped stdin.
fn read_secret(key: &str) -> Result<String, Failure> {
    if config::secret_account(key).is_none() {
        return Err(Failure::usage(format!(
            "`config set {key}` needs a value (only secrets can be typed at a prompt)"
        )));
    }
    let value = if std::io::stdin().is_terminal() {
        rpassword::prompt_password(format!("{key}: "))?
    } else {
        let mut line = String::new();
        std::io::stdin().read_line(&mut line)?;
        line
    };
    let value = value.trim().to_string();
    if value.is_empty() {
        return Err(Failure::usage(format!("no value given for {key}")));
    }
    Ok(value)
}

fn restart_hint(paths: &Paths) {
    if metaclaw_engine::runfiles::RunInfo::read(paths)
        .ok()
        .flatten()
        .is_some_and(|i| i.is_alive())
    {
        output::line(
            "MetaClaw is running: restart it to apply (metaclaw stop && metaclaw start --daemon).",
        );
    }
}
