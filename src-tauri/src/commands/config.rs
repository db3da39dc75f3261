//! `metaclaw config show | get | set | unset | path`, and the legacy `config KEY [VALUE]`.

use metaclaw_engine::config;
use metaclaw_engine::paths::Paths;
use metaclaw_engine::secrets::SecretStore;

use crate::cli::{ConfigArgs, ConfigCommand};
use crate::exit::{Failure, Outcome};
use crate::output;

pub fn run(paths: &Paths, args: ConfigArgs) -> Outcome {
    let command = match (args.command, args.key, args.value) {
        (Some(c), _, _) => c,
        (None, Some(key), Some(value)) => ConfigCommand::Set { key, value },
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
